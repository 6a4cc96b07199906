package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"unicode"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
)

// DataDirGuard is the policy that keeps Airlock's data directory out of the
// calls it passes to the servers you added. A file server given your home
// folder (server-filesystem with ~) would otherwise read the agents' token
// or write rules.json for an agent that asked it to, as shell_exec could
// before it was kept off (found by a review of the shell sandbox). A tool
// call, prompt or resource read whose arguments or URI name a path in the
// data directory is refused with path_protected, and nobody can approve it.
// Every string of the arguments is read as JSON decodes it (so \u escapes
// count), split into words, and each word is read as a path the way a file
// server would: ~, $HOME and ${HOME} expanded, file:// URIs decoded, //,
// /./ and .. resolved. A word names the data directory when it is in it,
// when it is a folder above it below the home folder (moving ~/.config
// would move the data directory), or when it holds the data directory's
// last two path elements in a row (.config/airlock/…, relative to a
// server's folder). A path a server computes, or one relative to a folder
// deeper than the data directory's parent, is not recognised. Airlock's
// own servers are left to their own checks (the built-in file and shell
// tools keep off the data directory themselves; the team tools carry text,
// not paths).
type DataDirGuard struct {
	dirs     []string // the data directory, as given and links resolved
	above    []string // folders above it, below the home folder
	tail     []string // its last two path elements
	needles  [][]byte // its last element and those of the folders above it: the cheap test
	home     string
	builtIn  func(server string) bool
	foldCase bool
}

var _ pipeline.Policy = (*DataDirGuard)(nil)

// NewDataDirGuard returns the guard of the data directory dataDir; builtIn
// says which servers are Airlock's own.
func NewDataDirGuard(dataDir string, builtIn func(server string) bool) *DataDirGuard {
	g := &DataDirGuard{builtIn: builtIn, foldCase: runtime.GOOS == "darwin" || runtime.GOOS == "windows"}
	g.home, _ = os.UserHomeDir()
	for _, d := range protectedDirs(dataDir) {
		d = filepath.ToSlash(d)
		g.dirs = append(g.dirs, g.fold(d))
		if g.tail == nil && strings.Count(d, "/") >= 2 {
			g.tail = strings.Split(g.fold(d), "/")
			g.tail = g.tail[len(g.tail)-2:]
		}
		home := filepath.ToSlash(g.home)
		for a := path.Dir(d); a != "/" && a != "." && a != home; a = path.Dir(a) {
			if home == "" || !within(a, home) {
				if a == path.Dir(d) {
					g.above = appendNew(g.above, g.fold(a)) // outside the home folder: only its parent
				}
				break
			}
			g.above = appendNew(g.above, g.fold(a))
		}
	}
	for _, n := range g.dirs {
		g.addNeedle(path.Base(n))
	}
	for _, a := range g.above {
		g.addNeedle(path.Base(a))
	}
	return g
}

func (g *DataDirGuard) addNeedle(n string) {
	for _, have := range g.needles {
		if string(have) == n {
			return
		}
	}
	g.needles = append(g.needles, []byte(n))
}

func appendNew(l []string, s string) []string {
	if slices.Contains(l, s) {
		return l
	}
	return append(l, s)
}

// fold lower-cases s where file names are compared without case.
func (g *DataDirGuard) fold(s string) string {
	if g.foldCase {
		return strings.ToLower(s)
	}
	return s
}

// Check refuses a request to a server you added that names a path in the
// data directory.
func (g *DataDirGuard) Check(_ context.Context, r *core.Request) core.Verdict {
	if len(g.dirs) == 0 || (g.builtIn != nil && g.builtIn(r.Server)) {
		return core.Verdict{Outcome: core.Allow}
	}
	// Most calls cannot name it: neither its last element nor an escape or
	// a percent sign that could spell it is in them, nor a folder above it.
	if !g.mayName(r.Args) && !g.mayName([]byte(r.Name)) {
		return core.Verdict{Outcome: core.Allow}
	}
	if w := g.namedIn(r.Name); w != "" {
		return g.refusal(w)
	}
	for b := r.Args; ; {
		s, rest, ok := nextString(b)
		if !ok {
			break
		}
		if w := g.namedIn(s); w != "" {
			return g.refusal(w)
		}
		b = rest
	}
	return core.Verdict{Outcome: core.Allow}
}

// nextString returns the first JSON string in b (a key or a value), as
// JSON decodes it, and what follows it. It needs no complete document: a
// string it cannot decode is skipped.
func nextString(b []byte) (s string, rest []byte, ok bool) {
	for {
		i := bytes.IndexByte(b, '"')
		if i < 0 {
			return "", nil, false
		}
		escaped := false
		j := i + 1
		for ; j < len(b) && b[j] != '"'; j++ {
			if b[j] == '\\' {
				escaped = true
				j++
			}
		}
		if j >= len(b) {
			return "", nil, false
		}
		lit := b[i : j+1]
		rest = b[j+1:]
		if !escaped {
			return string(lit[1 : len(lit)-1]), rest, true
		}
		if json.Unmarshal(lit, &s) == nil {
			return s, rest, true
		}
		b = rest
	}
}

func (g *DataDirGuard) refusal(word string) core.Verdict {
	return core.Refusal("data-dir", (&core.Error{Code: EPathProtected,
		Message: fmt.Sprintf("the call names %s, in Airlock's data directory (%s), which holds the agents' token, the rules and the audit: Airlock passes no such path to a server", word, g.dirs[0])}).
		WithHint("use files outside Airlock's data directory; a person changes Airlock's settings in its UI or on its command line"))
}

// mayName is the cheap test: whether b could name the data directory.
func (g *DataDirGuard) mayName(b []byte) bool {
	if bytes.Contains(b, []byte(`\u`)) || bytes.IndexByte(b, '%') >= 0 {
		return true
	}
	return g.mentions(b)
}

// mentions reports whether b holds the data directory's last element or
// that of a folder above it.
func (g *DataDirGuard) mentions(b []byte) bool {
	if g.foldCase {
		b = bytes.ToLower(b)
	}
	for _, n := range g.needles {
		if bytes.Contains(b, n) {
			return true
		}
	}
	return false
}

// namedIn returns the first word of s that names the data directory, or "".
func (g *DataDirGuard) namedIn(s string) string {
	for _, w := range strings.FieldsFunc(s, func(c rune) bool {
		return unicode.IsSpace(c) || strings.ContainsRune("\"'`=,;:()<>|&[]{}", c)
	}) {
		if g.names(w) {
			return w
		}
	}
	// A file:// URI is one word with a colon in it.
	if u, ok := strings.CutPrefix(s, "file://"); ok && g.names("file://"+u) {
		return s
	}
	return ""
}

// names reports whether the word w, read as a path, names the data
// directory.
func (g *DataDirGuard) names(w string) bool {
	if strings.IndexByte(w, '%') < 0 && !g.mentions([]byte(w)) {
		return false
	}
	if u, ok := strings.CutPrefix(w, "file://"); ok {
		if i := strings.IndexByte(u, '/'); i >= 0 {
			u = u[i:] // after the host, usually empty
		}
		if d, err := url.PathUnescape(u); err == nil {
			w = d
		}
	}
	home := filepath.ToSlash(g.home)
	switch {
	case w == "~" || w == "$HOME" || w == "${HOME}":
		return false
	case strings.HasPrefix(w, "~/"):
		w = home + w[1:]
	case strings.HasPrefix(w, "$HOME/"):
		w = home + w[5:]
	case strings.HasPrefix(w, "${HOME}/"):
		w = home + w[7:]
	}
	w = g.fold(path.Clean(filepath.ToSlash(w)))
	for _, d := range g.dirs {
		if within(w, d) {
			return true
		}
	}
	if slices.Contains(g.above, w) {
		return true
	}
	if len(g.tail) == 2 {
		parts := strings.Split(w, "/")
		for i := 0; i+1 < len(parts); i++ {
			if parts[i] == g.tail[0] && parts[i+1] == g.tail[1] {
				return true
			}
		}
	}
	return false
}
