package builtin

import (
	"fmt"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

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

// Bounds of the path checks: a longer word is no path the system opens
// (PATH_MAX), and the links of at most so many words are looked at in one
// command line; beyond them the command asks.
const (
	maxPathBytes  = 4096
	maxPathElems  = 128
	maxLinkChecks = 256
	maxStartDirs  = 32
)

// Protection is what the shell policy keeps commands off: the programs
// that are Airlock (base names, as normalName gives them; Exe the running
// one) and its data directory (absolute, cleaned; as given and with links
// resolved), with the home folder a leading ~ or $HOME stands for.
type Protection struct {
	Programs []string
	Exe      string
	Dirs     []string
	Home     string
}

// selfProtection is the Protection of an Airlock whose data directory is
// given as dirs (protectedDirs) and whose commands see environ.
func selfProtection(dirs []string, environ []string) Protection {
	p := Protection{Programs: []string{"airlock", "airlock-headless", "airlock-bridge"}, Dirs: dirs}
	if exe, err := os.Executable(); err == nil {
		p.Exe = exe
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

// protectedProgram refuses a command that runs Airlock itself: by its
// name, found on PATH, or by a path to the running program. A program of
// that name elsewhere (a project's ./bin/airlock) asks.
func (a *analysis) protectedProgram(inv *invocation) {
	if !slices.Contains(a.c.prot.Programs, inv.name) {
		return
	}
	if strings.Contains(inv.nameText, "/") && !a.isAirlock(inv.nameText) {
		a.report(core.Ask, ruleAirlockItself, inv.text, fmt.Sprintf("`%s` runs a program named like Airlock: if it is Airlock, it could change Airlock's rules, servers, agents or tokens; a person must approve it", inv.text))
		return
	}
	a.report(core.Deny, ruleAirlockItself, inv.text, fmt.Sprintf("`%s` runs Airlock itself: an agent may not change Airlock's rules, servers, agents or tokens through its shell tool", inv.text))
}

// isAirlock reports whether the program at p (absolute, ~, or from a
// folder the command starts in) is the running Airlock, or is in a
// system folder, where an installed one is.
func (a *analysis) isAirlock(p string) bool {
	exe, err := os.Stat(a.c.prot.Exe)
	for _, cand := range a.expandStart(escapeGlob(p), true) {
		if !strings.HasPrefix(cand, "/") {
			for _, d := range a.dirs {
				if fi, e := os.Stat(filepath.Join(d, unescapeGlob(cand))); e == nil && err == nil && os.SameFile(fi, exe) {
					return true
				}
			}
			continue
		}
		cand = unescapeGlob(cand)
		if systemProgram(cand) || strings.HasPrefix(cand, "/usr/local/") || strings.HasPrefix(cand, "/opt/") {
			return true
		}
		if fi, e := os.Stat(cand); e == nil && err == nil && os.SameFile(fi, exe) {
			return true
		}
	}
	return false
}

// protectScript checks every word of a parsed command line (arguments,
// redirections, assignments, loop items, here-strings, array elements,
// patterns) against the data directory, with relative paths judged from
// the folder the command starts in and from every folder a fixed cd,
// pushd or -C of the line names; and asks for copies into a folder that
// holds it.
func (a *analysis) protectScript(root syntax.Node) {
	if len(a.c.prot.Dirs) == 0 {
		return
	}
	// First what the line fixes: variables' values and folders it moves to.
	syntax.Walk(root, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Assign:
			if n.Name == nil {
				break
			}
			if n.Value != nil {
				a.fixValue(n.Name.Value, n.Value)
			}
			if n.Array != nil {
				for _, e := range n.Array.Elems {
					if e.Value != nil {
						a.fixValue(n.Name.Value, e.Value)
					}
				}
			}
		case *syntax.ForClause:
			if it, ok := n.Loop.(*syntax.WordIter); ok {
				for _, w := range it.Items {
					a.fixValue(it.Name.Value, w)
				}
			}
		case *syntax.CallExpr:
			a.noteStartDirs(n.Args)
		}
		return true
	})
	syntax.Walk(root, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			for _, ew := range a.expanded(w) {
				a.protectedWord(ew, wordSource(w))
			}
		}
		return true
	})
}

// expanded is w after brace expansion, as a.words makes it.
func (a *analysis) expanded(w *syntax.Word) []word {
	ws, ok := a.words([]*syntax.Word{w})
	if !ok {
		return []word{newWord(w)}
	}
	return ws
}

// fixValue notes a value the line gives the variable name.
func (a *analysis) fixValue(name string, value *syntax.Word) {
	if a.fixed == nil {
		a.fixed = map[string][]string{}
	}
	for _, w := range a.expanded(value) {
		for _, p := range a.pathsOf(w) {
			if len(a.fixed[name]) < maxStartDirs {
				a.fixed[name] = append(a.fixed[name], p)
			}
		}
	}
}

// noteStartDirs notes the folders a command moves to before it names
// paths: cd and pushd (cd alone: home), and -C, --chdir or --directory
// (env, git, make, tar).
func (a *analysis) noteStartDirs(args []*syntax.Word) {
	if len(args) == 0 {
		return
	}
	name, _ := literal(args[0])
	add := func(w *syntax.Word) {
		for _, ew := range a.expanded(w) {
			for _, p := range a.pathsOf(ew) {
				a.addStartDir(unescapeGlob(p))
			}
		}
	}
	if name = normalName(name); (name == "cd" || name == "pushd") && len(args) == 1 {
		for _, h := range a.homes() {
			a.addStartDir(h)
		}
	}
	for i, w := range args {
		t, lit := literal(w)
		switch {
		case (name == "cd" || name == "pushd") && i > 0 && !strings.HasPrefix(t, "-"):
			add(w)
		case lit && (t == "-C" || t == "--chdir" || t == "--directory") && i+1 < len(args):
			add(args[i+1])
		case lit && (strings.HasPrefix(t, "--chdir=") || strings.HasPrefix(t, "--directory=")):
			_, v, _ := strings.Cut(t, "=")
			for _, p := range a.expandStart(escapeGlob(v), true) {
				a.addStartDir(unescapeGlob(p))
			}
		}
	}
}

// addStartDir adds p, absolute or from every folder already known, to the
// folders relative paths are judged from.
func (a *analysis) addStartDir(p string) {
	var abs []string
	if strings.HasPrefix(p, "/") {
		abs = []string{p}
	} else {
		for _, d := range a.dirs {
			abs = append(abs, d+"/"+p)
		}
	}
	for _, d := range abs {
		d = "/" + strings.Join(elements(d), "/")
		if !slices.Contains(a.dirs, d) && len(a.dirs) < maxStartDirs {
			a.dirs = append(a.dirs, d)
		}
	}
}

// homes are the folders ~ may stand for: the home folder, and the values
// the line gives HOME.
func (a *analysis) homes() []string {
	out := []string{}
	if a.c.prot.Home != "" {
		out = append(out, a.c.prot.Home)
	}
	for _, v := range a.fixed["HOME"] {
		if strings.HasPrefix(v, "/") {
			out = append(out, unescapeGlob(v))
		}
	}
	return out
}

// protectedWord refuses a command that names a path in Airlock's data
// directory with w (shown is how the command line writes it).
func (a *analysis) protectedWord(w word, shown string) {
	if len(w.text) > maxPathBytes {
		if strings.Contains(w.text, "/") {
			a.report(core.Ask, ruleAirlockData, truncate(shown), fmt.Sprintf("a path of more than %d bytes is too long to check against Airlock's data directory", maxPathBytes))
		}
		return
	}
	for _, p := range a.pathsOf(w) {
		if a.inDataDir(p) || w.lit && a.linksIntoDataDir(unescapeGlob(p), shown) {
			is := "is"
			if !w.lit {
				is = "may name a path"
			}
			a.report(core.Deny, ruleAirlockData, truncate(shown), fmt.Sprintf("%s %s in Airlock's data directory, which holds the agents' token, the rules and the audit log: commands never read or write it", truncate(w.text), is))
			return
		}
	}
}

// copiesIntoDataDirParent asks for a command that copies, moves, links or
// unpacks into a folder that holds the data directory (cp -r x/airlock
// ~/.config/ replaces files in it).
func (a *analysis) copiesIntoDataDirParent(inv *invocation) {
	switch inv.name {
	case "cp", "mv", "rsync", "install", "ln", "unzip", "tar", "ditto", "scp", "rm", "rmdir", "mkdir", "chmod", "chown":
	default:
		return
	}
	for _, w := range inv.args {
		for _, p := range a.pathsOf(w) {
			if a.holdsDataDir(p) {
				a.report(core.Ask, ruleAirlockData, inv.text, fmt.Sprintf("`%s` changes %s, which holds Airlock's data directory: a person must approve it", inv.text, truncate(w.text)))
				return
			}
		}
	}
}

var homeVar = regexp.MustCompile(`^\$(?:HOME\b|\{HOME(?:[:%#/^,][^}]*)?\})`)

// pathsOf returns the paths w may name, as patterns (path.Match): the word,
// the value of an --option=value, and what follows a short option's
// letters (-o/path, -C$HOME/x), each with a leading ~, ~user, $HOME, $PWD
// or a variable the line fixed made what it stands for. A word computed
// any other way names nothing known.
func (a *analysis) pathsOf(w word) []string {
	text := w.text
	if !w.lit {
		text = strings.NewReplacer(`"`, "", `'`, "", `\`, "").Replace(text)
	} else {
		text = escapeGlob(text)
	}
	starts := []string{text}
	if _, v, ok := strings.Cut(text, "="); ok && v != "" {
		starts = append(starts, v)
	}
	if len(text) > 2 && text[0] == '-' && text[1] != '-' {
		i := 1
		for i < len(text) && (isLetter(text[i]) || text[i] >= '0' && text[i] <= '9') {
			i++
		}
		if i > 1 && i < len(text) {
			starts = append(starts, text[i:])
		}
	}
	var out []string
	for _, s := range starts {
		out = append(out, a.expandStart(s, w.lit)...)
	}
	return out
}

// expandStart makes the start of s (a ~, ~user, $HOME, $PWD or a fixed
// variable) what it stands for; nil when s stays computed.
func (a *analysis) expandStart(s string, lit bool) []string {
	outs := []string{s}
	if !lit {
		s = strings.ReplaceAll(s, "/proc/$$/", "/proc/self/")
		s = strings.ReplaceAll(s, "/proc/$BASHPID/", "/proc/self/")
		switch {
		case homeVar.MatchString(s):
			outs = []string{"~" + homeVar.ReplaceAllString(s, "")}
		case strings.HasPrefix(s, "$"):
			name, rest := varName(s[1:])
			var vals []string
			if name == "PWD" {
				vals = a.dirs
			} else {
				vals = a.fixed[name]
			}
			outs = nil
			for _, v := range vals {
				outs = append(outs, v+rest)
			}
		default:
			outs = []string{s}
		}
	}
	var res []string
	for _, o := range outs {
		if !lit && strings.ContainsAny(o, "$`") {
			continue
		}
		rest, ok := strings.CutPrefix(o, "~")
		if !ok {
			res = append(res, o)
			continue
		}
		userName, after, _ := strings.Cut(rest, "/")
		if after != "" || strings.Contains(rest, "/") {
			after = "/" + after
		}
		if userName == "" {
			for _, h := range a.homes() {
				res = append(res, escapeGlob(h)+after)
			}
		} else if u, err := user.Lookup(unescapeGlob(userName)); err == nil && u.HomeDir != "" {
			res = append(res, escapeGlob(u.HomeDir)+after)
		}
	}
	return res
}

// varName splits "NAME/rest" or "{NAME}/rest" into the variable's name and
// what follows it.
func varName(s string) (name, rest string) {
	if inner, ok := strings.CutPrefix(s, "{"); ok {
		n, r, found := strings.Cut(inner, "}")
		if !found || !isName(n) {
			return "", s
		}
		return n, r
	}
	i := 0
	for i < len(s) && (isLetter(s[i]) || s[i] == '_' || i > 0 && s[i] >= '0' && s[i] <= '9') {
		i++
	}
	return s[:i], s[i:]
}

// linksIntoDataDir reports whether the fixed path p, absolute or from a
// folder the command starts in, leads into the data directory through a
// symbolic link that exists now (cfg/rules.json, cfg a link to it).
func (a *analysis) linksIntoDataDir(p, shown string) bool {
	if !strings.HasPrefix(p, "/") && !strings.Contains(p, "/") {
		// A bare name: only a link in the starting folder itself.
		if len(a.dirs) == 0 {
			return false
		}
	}
	var cands []string
	if strings.HasPrefix(p, "/") {
		cands = []string{p}
	} else {
		for _, d := range a.dirs {
			cands = append(cands, d+"/"+p)
		}
	}
	for _, c := range cands {
		elems := strings.Split(c, "/")
		if len(elems) > maxPathElems || a.linkChecks >= maxLinkChecks {
			a.report(core.Ask, ruleAirlockData, truncate(shown), "the command line names more paths, or longer ones, than can be checked for links into Airlock's data directory")
			return false
		}
		a.linkChecks++
		// The deepest part that exists, walked from the root, with its
		// links resolved; then the rest.
		cur, i := "/", 1
		for ; i < len(elems); i++ {
			if elems[i] == "" {
				continue
			}
			next := strings.TrimSuffix(cur, "/") + "/" + elems[i]
			if _, err := os.Lstat(next); err != nil {
				break
			}
			cur = next
		}
		real, err := filepath.EvalSymlinks(cur)
		if err != nil {
			continue
		}
		full := "/" + strings.Join(elements(real+"/"+strings.Join(elems[i:], "/")), "/")
		if slices.ContainsFunc(a.c.prot.Dirs, func(d string) bool { return within(foldPath(full), foldPath(d)) }) {
			return true
		}
	}
	return false
}

// inDataDir reports whether the pattern p may name the data directory or
// something in it: an absolute one as it is, a relative one from the
// folders the command starts in.
func (a *analysis) inDataDir(p string) bool {
	for _, abs := range a.absolute(p) {
		if slices.ContainsFunc(a.c.prot.Dirs, func(d string) bool { return patternWithin(abs, d) }) {
			return true
		}
	}
	return false
}

// holdsDataDir reports whether the fixed path p names a folder that holds
// the data directory.
func (a *analysis) holdsDataDir(p string) bool {
	for _, abs := range a.absolute(p) {
		pe := elements(unescapeGlob(abs))
		for _, d := range a.c.prot.Dirs {
			de := elements(d)
			if len(pe) < len(de) && slices.EqualFunc(pe, de[:len(pe)], func(x, y string) bool { return foldPath(x) == foldPath(y) }) {
				return true
			}
		}
	}
	return false
}

// absolute is p from each folder the command starts in (p itself when
// absolute), with /proc/self/root and /proc/self/cwd taken as the shell
// takes them.
func (a *analysis) absolute(p string) []string {
	if p == "" {
		return nil
	}
	if strings.HasPrefix(p, "/") {
		if rest, ok := strings.CutPrefix(p, "/proc/self/cwd/"); ok {
			return a.absolute(rest)
		}
		return []string{cleanAbs(p)}
	}
	var out []string
	for _, d := range a.dirs {
		out = append(out, strings.TrimSuffix(d, "/")+"/"+p)
	}
	return out
}

// patternWithin reports whether the absolute pattern p may match dir or a
// path inside it: p has at least dir's elements, and each of dir's matches
// p's as the shell matches names (a * does not match a leading dot). ".."
// is taken as the shell takes it, one folder up; a pattern that stops
// above dir (ls ~/*) names a folder that holds it, not it.
func patternWithin(p, dir string) bool {
	pe := elements(p)
	de := elements(dir)
	if len(pe) < len(de) {
		return false
	}
	for i, d := range de {
		pat := foldPath(pe[i])
		if strings.HasPrefix(d, ".") && !strings.HasPrefix(pat, ".") && !strings.HasPrefix(pat, `\.`) {
			return false
		}
		if ok, err := path.Match(pat, foldPath(d)); err != nil || !ok {
			return false
		}
	}
	return true
}

// foldPath is p as the file system compares names: case-insensitive on
// macOS and Windows.
func foldPath(p string) string {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		return strings.ToLower(p)
	}
	return p
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
