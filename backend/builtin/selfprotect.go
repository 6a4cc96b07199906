package builtin

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
)

// The shell tool runs commands as the user who runs Airlock, and so with
// the rights to Airlock's own command line and data directory: an agent
// could run `airlock rules add --auto-approve`, or write rules.json, and
// decide its own approvals from then on (found by a security test). The
// file tools keep off the data directory (protectedErr); the shell policy
// keeps commands off it and off Airlock's program, whatever the deny and
// ask lists say. Like the rest of the policy it judges the command line,
// it is no sandbox: a path computed when the command runs is not seen.

// Names of the built-in checks that protect Airlock itself.
const (
	ruleAirlockItself = "airlock-itself"
	ruleAirlockData   = "airlock-data"
)

// Protection is what the shell policy keeps commands off: the programs
// that are Airlock (base names, as normalName gives them) and its data
// directory (absolute, cleaned; as given and with links resolved), with
// the home folder a leading ~ or $HOME stands for.
type Protection struct {
	Programs []string
	Dirs     []string
	Home     string
}

// selfProtection is the Protection of an Airlock whose data directory is
// given as dirs (protectedDirs) and whose commands see environ.
func selfProtection(dirs []string, environ []string) Protection {
	p := Protection{Programs: []string{"airlock", "airlock-headless", "airlock-bridge"}, Dirs: dirs}
	if exe, err := os.Executable(); err == nil {
		if n := normalName(exe); !slices.Contains(p.Programs, n) && !strings.HasSuffix(n, ".test") {
			p.Programs = append(p.Programs, n)
		}
	}
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			p.Home = v
		}
	}
	if p.Home == "" {
		p.Home, _ = os.UserHomeDir()
	}
	return p
}

// WithProtection returns a classifier that also keeps commands off what p
// names (see Protection).
func (c *Classifier) WithProtection(p Protection) *Classifier {
	cc := *c
	cc.prot = p
	return &cc
}

// protectedProgram denies a command that runs Airlock itself.
func (a *analysis) protectedProgram(inv *invocation) {
	if slices.Contains(a.c.prot.Programs, inv.name) {
		a.report(core.Deny, ruleAirlockItself, inv.text, fmt.Sprintf("`%s` runs Airlock itself: an agent may not change Airlock's rules, servers, agents or tokens through its shell tool", inv.text))
	}
}

// protectedWord denies a command that names a path in Airlock's data
// directory with w (an argument, or a redirection's file; shown is how the
// command reads).
func (a *analysis) protectedWord(w word, shown string) {
	if len(a.c.prot.Dirs) == 0 {
		return
	}
	for _, p := range a.pathsOf(w) {
		if a.inDataDir(p) || w.lit && a.linksIntoDataDir(unescapeGlob(p)) {
			is := "is"
			if !w.lit {
				is = "may name a path"
			}
			a.report(core.Deny, ruleAirlockData, shown, fmt.Sprintf("%s %s in Airlock's data directory, which holds the agents' token, the rules and the audit log: commands never read or write it", w.text, is))
			return
		}
	}
}

// pathsOf returns the paths w may name as patterns (filepath.Match): its
// text, and the value of an --option=value, with a leading ~ or $HOME
// made the home folder. A word computed any other way names nothing
// known.
func (a *analysis) pathsOf(w word) []string {
	text := w.text
	if !w.lit {
		// A glob, or $HOME followed by fixed text ("$HOME"/x, ${HOME}/x).
		text = strings.NewReplacer(`"`, "", `'`, "").Replace(text)
		for _, home := range []string{"${HOME}", "$HOME"} {
			if rest, ok := strings.CutPrefix(text, home); ok && (rest == "" || rest[0] == '/') {
				text = "~" + rest
			}
		}
		if strings.ContainsAny(text, "$`") {
			return nil
		}
	} else {
		// A fixed word's glob characters are its own.
		text = escapeGlob(text)
	}
	out := []string{text}
	if _, v, ok := strings.Cut(text, "="); ok && v != "" {
		out = append(out, v)
	}
	for i, p := range out {
		if rest, ok := strings.CutPrefix(p, "~"); ok && (rest == "" || rest[0] == '/') && a.c.prot.Home != "" {
			out[i] = a.c.prot.Home + rest
		}
	}
	return out
}

// linksIntoDataDir reports whether the fixed path p, absolute or from the
// working folder, leads into the data directory through a symbolic link
// that exists now (cfg/rules.json, cfg a link to it).
func (a *analysis) linksIntoDataDir(p string) bool {
	if !strings.HasPrefix(p, "/") {
		if a.cwd == "" {
			return false
		}
		p = filepath.Join(a.cwd, p)
	}
	// The deepest part of it that exists, with its links resolved, then
	// the rest.
	rest := ""
	for cur := filepath.Clean(p); ; cur = filepath.Dir(cur) {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			full := filepath.Join(real, rest)
			return slices.ContainsFunc(a.c.prot.Dirs, func(d string) bool { return within(full, d) })
		}
		if cur == filepath.Dir(cur) {
			return false
		}
		rest = filepath.Join(filepath.Base(cur), rest)
	}
}

// unescapeGlob undoes escapeGlob.
func unescapeGlob(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// escapeGlob makes s a pattern that matches s only.
func escapeGlob(s string) string {
	if !strings.ContainsAny(s, `*?[\`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// inDataDir reports whether the pattern p may name the data directory or
// something in it: an absolute one as it is, a relative one from the
// working folder or any folder above it (cd .. moves there).
func (a *analysis) inDataDir(p string) bool {
	if p == "" {
		return false
	}
	if strings.HasPrefix(p, "/") {
		p = cleanAbs(p)
		return slices.ContainsFunc(a.c.prot.Dirs, func(d string) bool { return patternWithin(p, d) })
	}
	if a.cwd == "" {
		return false
	}
	for dir := a.cwd; ; dir = filepath.Dir(dir) {
		abs := strings.TrimSuffix(dir, "/") + "/" + p
		if slices.ContainsFunc(a.c.prot.Dirs, func(d string) bool { return patternWithin(abs, d) }) {
			return true
		}
		if dir == filepath.Dir(dir) {
			return false
		}
	}
}

// patternWithin reports whether the absolute pattern p may match dir or a
// path inside it: p has at least dir's elements, and each of dir's matches
// p's. ".." is taken as the shell takes it, one folder up; a pattern that
// stops above dir (ls ~/*) names a folder that holds it, not it.
func patternWithin(p, dir string) bool {
	pe := elements(p)
	de := elements(dir)
	if len(pe) < len(de) {
		return false
	}
	for i, d := range de {
		if ok, err := path.Match(pe[i], d); err != nil || !ok {
			return false
		}
	}
	return true
}

// elements splits an absolute path into its names, with . and .. resolved
// (a pattern's elements stay as they are).
func elements(p string) []string {
	var out []string
	for _, e := range strings.Split(p, "/") {
		switch e {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, e)
		}
	}
	return out
}
