package builtin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
)

// DataDirGuard is the policy that keeps Airlock's data directory out of the
// calls it passes to the servers you added. A file server given your home
// folder (server-filesystem with ~) would otherwise read the agents' token
// or write rules.json for an agent that asked it to, as shell_exec could
// before it was kept off (found by a review of the shell sandbox). A tool
// call, prompt or resource read whose arguments or URI name a path in the
// data directory is refused with path_protected, and nobody can approve it:
// by its absolute path (links resolved or not), or under the home folder
// as ~/… or $HOME/…. A path relative to a server's own folder is not
// recognised. Airlock's own servers are left to their own checks (the
// built-in file and shell tools keep off the data directory themselves;
// the team tools carry text, not paths).
type DataDirGuard struct {
	dataDir string
	needles []string
	builtIn func(server string) bool
}

var _ pipeline.Policy = (*DataDirGuard)(nil)

// NewDataDirGuard returns the guard of the data directory dataDir; builtIn
// says which servers are Airlock's own.
func NewDataDirGuard(dataDir string, builtIn func(server string) bool) *DataDirGuard {
	g := &DataDirGuard{builtIn: builtIn}
	dirs := protectedDirs(dataDir)
	if len(dirs) == 0 {
		return g
	}
	g.dataDir = dirs[0]
	home, _ := os.UserHomeDir()
	for _, d := range dirs {
		g.add(d)
		if home != "" {
			if rel, err := filepath.Rel(home, d); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
				g.add("~/" + filepath.ToSlash(rel))
				g.add("$HOME/" + filepath.ToSlash(rel))
				g.add("${HOME}/" + filepath.ToSlash(rel))
			}
		}
	}
	return g
}

func (g *DataDirGuard) add(n string) {
	for _, have := range g.needles {
		if have == n {
			return
		}
	}
	g.needles = append(g.needles, n)
}

// Check refuses a request to a server you added that names a path in the
// data directory.
func (g *DataDirGuard) Check(_ context.Context, r *core.Request) core.Verdict {
	if len(g.needles) == 0 || (g.builtIn != nil && g.builtIn(r.Server)) {
		return core.Verdict{Outcome: core.Allow}
	}
	args := string(r.Args)
	if strings.Contains(args, `\/`) { // JSON may escape a slash
		args = strings.ReplaceAll(args, `\/`, "/")
	}
	for _, s := range []string{args, r.Name} {
		for _, n := range g.needles {
			if names(s, n) {
				return core.Refusal("data-dir", (&core.Error{Code: EPathProtected,
					Message: fmt.Sprintf("the call names %s, in Airlock's data directory (%s), which holds the agents' token, the rules and the audit: Airlock passes no such path to a server", n, g.dataDir)}).
					WithHint("use files outside Airlock's data directory; a person changes Airlock's settings in its UI or on its command line"))
			}
		}
	}
	return core.Verdict{Outcome: core.Allow}
}

// names reports whether s mentions the path p, or a path inside it: p
// followed by the end, a slash or a character no file name goes on with
// (so that ~/.config/airlock-notes is not ~/.config/airlock).
func names(s, p string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], p)
		if j < 0 {
			return false
		}
		end := i + j + len(p)
		if end == len(s) || !nameByte(s[end]) {
			return true
		}
		i = i + j + 1
	}
}

// nameByte reports whether c may continue a file name in text: letters,
// digits and . _ - (anything else ends the name: a slash, a quote, a space).
func nameByte(c byte) bool {
	return c == '.' || c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
