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

// Bounds of the path checks. A longer word is no path the system opens
// (PATH_MAX). Beyond the other bounds a command asks: so many words after
// brace expansion, file lookups (for links), folders a line moves to and
// values it gives one variable.
const (
	maxPathBytes = 4096
	maxWordsSeen = 16 << 10
	maxLookups   = 4096
	maxStartDirs = 32
	maxValues    = 64
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

// protection is the state of the self-protection checks in one
// classification.
type protection struct {
	// dirs are the folders relative paths are judged from: where the
	// command starts (none when not known), and where a fixed cd, pushd, -C
	// or CDPATH of the line moves.
	dirs []string
	// fixed are the values the line gives variables, as paths (pathsOf).
	fixed map[string][]string
	// holders are the fixed paths of the line that are the data directory
	// or hold it: what a variable whose value is not known may hold (read
	// c <<< ~/.config; "$c/airlock").
	holders []string
	// loose: the line changes how globs match (shopt, GLOBIGNORE), so a
	// pattern may match any case and a leading dot.
	loose     bool
	heredocs  map[*syntax.Word]bool
	words     map[*syntax.Word][]word
	sources   map[*syntax.Word]string
	wordsSeen int
	lookups   int
	// verdicts caches judge, and holds holdsDataDir, by path: a line
	// names the same paths from the same folders often.
	verdicts map[string]string
	holds    map[string]bool
	resolved map[string]string // resolveLead
}

// protectedProgram refuses a command that runs Airlock itself: by its
// name, found on PATH, or by a path to the running or an installed
// program. A program of that name elsewhere (a project's ./bin/airlock),
// and go run of a package named airlock, ask.
func (a *analysis) protectedProgram(inv *invocation) {
	if inv.name == "go" && slices.ContainsFunc(inv.args, func(w word) bool { return w.lit && w.text == "run" }) {
		for _, w := range inv.args {
			if base, _, _ := strings.Cut(path.Base(w.text), "@"); base == "airlock" {
				a.report(core.Ask, ruleAirlockItself, inv.text, fmt.Sprintf("`%s` may build and run Airlock: it could change Airlock's rules, servers, agents or tokens; a person must approve it", inv.text))
				return
			}
		}
	}
	if !slices.Contains(a.c.prot.Programs, inv.name) {
		return
	}
	if strings.Contains(inv.nameText, "/") && !a.isAirlock(inv.nameText) {
		a.report(core.Ask, ruleAirlockItself, inv.text, fmt.Sprintf("`%s` runs a program named like Airlock: if it is Airlock, it could change Airlock's rules, servers, agents or tokens; a person must approve it", inv.text))
		return
	}
	a.report(core.Deny, ruleAirlockItself, inv.text, fmt.Sprintf("`%s` runs Airlock itself: an agent may not change Airlock's rules, servers, agents or tokens through its shell tool", inv.text))
}

// isAirlock reports whether the program at p is the running Airlock, or
// is in a folder where an installed one is.
func (a *analysis) isAirlock(p string) bool {
	exe, exeErr := os.Stat(a.c.prot.Exe)
	for _, abs := range a.absolute(a.pathsOf(word{text: p, lit: true, tilde: strings.HasPrefix(p, "~")})) {
		abs = unescapeGlob(abs)
		if systemProgram(abs) || strings.HasPrefix(abs, "/usr/local/") || strings.HasPrefix(abs, "/opt/") {
			return true
		}
		if fi, err := os.Stat(abs); err == nil && exeErr == nil && os.SameFile(fi, exe) {
			return true
		}
	}
	return false
}

// protectScript checks every word of a parsed command line (arguments,
// redirections, assignments, loop items, here-strings, array elements)
// against the data directory, relative paths from the folder the command
// starts in and from every folder a fixed cd, pushd, -C or CDPATH of the
// line moves to.
func (a *analysis) protectScript(root syntax.Node) {
	if len(a.c.prot.Dirs) == 0 {
		return
	}
	p := &a.prot
	if p.words == nil {
		p.heredocs, p.words, p.sources = map[*syntax.Word]bool{}, map[*syntax.Word][]word{}, map[*syntax.Word]string{}
	}
	// First what the line fixes: how globs match, the folders it moves
	// to, the values it gives variables, and the paths it names that hold
	// the data directory.
	syntax.Walk(root, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Redirect:
			if n.Hdoc != nil {
				p.heredocs[n.Hdoc] = true // content, not a path
			}
		case *syntax.Assign:
			if n.Name != nil && (n.Name.Value == "GLOBIGNORE" || n.Name.Value == "CDPATH") {
				p.loose = p.loose || n.Name.Value == "GLOBIGNORE"
			}
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				if name, _ := literal(n.Args[0]); name == "shopt" {
					p.loose = true
				}
			}
		}
		return true
	})
	// Values before folders: CDPATH=~/.config cd airlock.
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
			if n.Name.Value == "CDPATH" {
				for _, v := range p.fixed["CDPATH"] {
					a.addStartDir(v)
				}
			}
		case *syntax.ForClause:
			if it, ok := n.Loop.(*syntax.WordIter); ok {
				for _, w := range it.Items {
					a.fixValue(it.Name.Value, w)
				}
			}
		}
		return true
	})
	syntax.Walk(root, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok {
			a.noteStartDirs(call.Args)
		}
		return true
	})
	syntax.Walk(root, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok && !p.heredocs[w] {
			for _, ew := range a.expanded(w) {
				for _, abs := range a.absolute(a.pathsOf(ew)) {
					if a.holdsDataDir(abs) || a.judgeCached(abs) != "" {
						if len(p.holders) < maxValues && !slices.Contains(p.holders, abs) {
							p.holders = append(p.holders, abs)
						}
					}
				}
			}
		}
		return true
	})
	syntax.Walk(root, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok && !p.heredocs[w] {
			for _, ew := range a.expanded(w) {
				a.protectedWord(ew, a.source(w))
			}
		}
		return true
	})
}

// expanded is w after brace expansion, as a.words makes it, once per word
// of the line; beyond maxWordsSeen words the command asks.
func (a *analysis) expanded(w *syntax.Word) []word {
	p := &a.prot
	if ws, ok := p.words[w]; ok {
		return ws
	}
	if p.wordsSeen > maxWordsSeen {
		return nil // asked already
	}
	ws, ok := a.words([]*syntax.Word{w})
	if !ok {
		ws = []word{newWord(w)}
	}
	if p.wordsSeen += len(ws); p.wordsSeen > maxWordsSeen {
		a.report(core.Ask, ruleAirlockData, "", fmt.Sprintf("the command line has more than %d words after brace expansion, too many to check against Airlock's data directory", maxWordsSeen))
		ws = nil
	}
	p.words[w] = ws
	return ws
}

func (a *analysis) source(w *syntax.Word) string {
	if s, ok := a.prot.sources[w]; ok {
		return s
	}
	s := truncate(wordSource(w))
	a.prot.sources[w] = s
	return s
}

// fixValue notes a value the line gives the variable name.
func (a *analysis) fixValue(name string, value *syntax.Word) {
	p := &a.prot
	if p.fixed == nil {
		p.fixed = map[string][]string{}
	}
	for _, w := range a.expanded(value) {
		for _, v := range a.pathsOf(w) {
			if len(p.fixed[name]) < maxValues {
				p.fixed[name] = append(p.fixed[name], v)
			}
		}
	}
}

// noteStartDirs notes the folders a command moves to before it names
// paths: cd and pushd (alone: home), and -C, --chdir, --directory or
// --work-tree (env, git, make, tar).
func (a *analysis) noteStartDirs(args []*syntax.Word) {
	if len(args) == 0 {
		return
	}
	name, _ := literal(args[0])
	name = normalName(name)
	add := func(w *syntax.Word) {
		for _, ew := range a.expanded(w) {
			for _, v := range a.pathsOf(ew) {
				a.addStartDir(v)
			}
		}
	}
	if (name == "cd" || name == "pushd") && len(args) == 1 {
		for _, h := range a.homes() {
			a.addStartDir(escapeGlob(h))
		}
	}
	for i, w := range args {
		t, lit := literal(w)
		switch {
		case (name == "cd" || name == "pushd") && i > 0 && !strings.HasPrefix(t, "-"):
			add(w)
		case lit && (t == "-C" || t == "--chdir" || t == "--directory" || t == "--work-tree") && i+1 < len(args):
			add(args[i+1])
		case lit && (strings.HasPrefix(t, "--chdir=") || strings.HasPrefix(t, "--directory=") || strings.HasPrefix(t, "--work-tree=")):
			_, v, _ := strings.Cut(t, "=")
			for _, e := range a.pathsOf(word{text: v, lit: true, tilde: strings.HasPrefix(v, "~")}) {
				a.addStartDir(e)
			}
		}
	}
}

// addStartDir adds the folder p (a pattern; absolute, or from every
// folder already known) to the folders relative paths are judged from.
func (a *analysis) addStartDir(p string) {
	if len(a.prot.dirs) >= maxStartDirs {
		a.report(core.Ask, ruleAirlockData, "cd", fmt.Sprintf("the command line moves to more than %d folders, too many to follow for paths into Airlock's data directory", maxStartDirs))
		return
	}
	for _, d := range a.absolute([]string{p}) {
		if a.judgeCached(d) == core.Deny {
			a.report(core.Deny, ruleAirlockData, "cd "+truncate(unescapeGlob(p)), fmt.Sprintf("the command line moves into %s, in Airlock's data directory, which holds the agents' token, the rules and the audit log: commands never read or write it", truncate(unescapeGlob(d))))
		}
		d = unescapeGlob("/" + strings.Join(elements(d), "/"))
		if !slices.Contains(a.prot.dirs, d) && len(a.prot.dirs) < maxStartDirs {
			a.prot.dirs = append(a.prot.dirs, d)
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
	for _, v := range a.prot.fixed["HOME"] {
		if strings.HasPrefix(v, "/") {
			out = append(out, unescapeGlob(v))
		}
	}
	return out
}

// protectedWord refuses a command that names a path in Airlock's data
// directory with w (shown is how the command line writes it), and asks
// for one that names the folder among others (a glob such as ~/.config/*).
func (a *analysis) protectedWord(w word, shown string) {
	if strings.Contains(w.text, "\n") {
		return // text, not a path
	}
	verdict := ""
	for _, abs := range a.absolute(a.pathsOf(w)) {
		v := a.judgeCached(abs)
		if v == "" {
			v = a.judgeCached(a.resolveLead(abs, shown))
		}
		if v == core.Deny && w.lit && !strings.Contains(w.text, "/") {
			// A bare name from the folder that holds it (echo airlock in
			// ~/.config) may be no path at all.
			v = core.Ask
		}
		if v == core.Deny || verdict == "" {
			verdict = v
		}
	}
	switch verdict {
	case core.Deny:
		is := "is"
		if !w.lit {
			is = "may name a path"
		}
		a.report(core.Deny, ruleAirlockData, shown, fmt.Sprintf("%s %s in Airlock's data directory, which holds the agents' token, the rules and the audit log: commands never read or write it", truncate(w.text), is))
	case core.Ask:
		a.report(core.Ask, ruleAirlockData, shown, fmt.Sprintf("%s may name Airlock's data directory, which holds the agents' token, the rules and the audit log: a person must approve it", truncate(w.text)))
	}
}

// judgeCached is judge, once per path of a line.
func (a *analysis) judgeCached(p string) string {
	return memo(&a.prot.verdicts, p, func() string { return a.judge(p) })
}

// memo returns (*m)[k], computing it with f the first time.
func memo[V any](m *map[string]V, k string, f func() V) V {
	if v, ok := (*m)[k]; ok {
		return v
	}
	if *m == nil {
		*m = map[string]V{}
	}
	v := f()
	(*m)[k] = v
	return v
}

// judge says what naming the absolute pattern p means: core.Deny when it
// is in the data directory (a glob: matches something there), core.Ask
// when a glob names the directory itself among others, "" otherwise.
func (a *analysis) judge(p string) string {
	if p == "" || !a.mayReach(p) {
		return ""
	}
	pe := elements(p)
	for _, d := range a.c.prot.Dirs {
		de := elements(d)
		if len(pe) < len(de) {
			continue
		}
		globbed := false
		match := true
		for i, name := range de {
			if !a.matchElem(pe[i], name) {
				match = false
				break
			}
			globbed = globbed || hasGlobChars(pe[i])
		}
		switch {
		case !match:
			continue
		case !globbed:
			return core.Deny
		case len(pe) == len(de):
			return core.Ask
		}
		// A glob that picks the directory, then a path in it: only what
		// exists there matches (the shell leaves a pattern that matches
		// nothing as it is).
		if m, err := filepath.Glob(filepath.Join(d, strings.Join(pe[len(de):], "/"))); err != nil || len(m) > 0 {
			return core.Deny
		}
	}
	return ""
}

// mayReach is judge's quick test: a pattern in the data directory holds
// its name, or a glob.
func (a *analysis) mayReach(p string) bool {
	if strings.ContainsAny(p, "*?[(") {
		return true
	}
	fp := foldPath(p, a.prot.loose)
	for _, d := range a.c.prot.Dirs {
		if strings.Contains(fp, foldPath(path.Base(d), a.prot.loose)) {
			return true
		}
	}
	return false
}

// matchElem reports whether the pattern element pat may match the name as
// the shell matches names: a * does not match a leading dot (unless the
// line changes how globs match), a pattern the checker cannot read
// (extglob, [[:class:]]) may match anything.
func (a *analysis) matchElem(pat, name string) bool {
	if !hasGlobChars(pat) {
		return foldPath(unescapeGlob(pat), a.prot.loose) == foldPath(name, a.prot.loose)
	}
	if strings.Contains(pat, "[:") || extglob.MatchString(pat) {
		return true
	}
	if !a.prot.loose && strings.HasPrefix(name, ".") && !strings.HasPrefix(pat, ".") && !strings.HasPrefix(pat, `\.`) {
		return false
	}
	ok, err := path.Match(foldPath(pat, a.prot.loose), foldPath(name, a.prot.loose))
	return ok || err != nil
}

var extglob = regexp.MustCompile(`[?*+@!]\(`)

// hasGlobChars reports whether the pattern element has an unescaped *, ?
// or [, or an extglob group.
func hasGlobChars(p string) bool {
	if strings.Contains(p, "(") && extglob.MatchString(p) {
		return true
	}
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		}
	}
	return false
}

// resolveLead is the absolute pattern p with the links of its fixed
// leading part resolved (cfg/rules.json with cfg a link to the data
// directory; conf/air*/x with conf a link to the folder above it), or ""
// when it has none. The lookups are bounded (maxLookups per line).
func (a *analysis) resolveLead(p, shown string) string {
	if _, ok := a.prot.resolved[p]; !ok && a.prot.lookups >= maxLookups {
		return "" // asked already
	}
	return memo(&a.prot.resolved, p, func() string { return a.resolveLeadNow(p, shown) })
}

func (a *analysis) resolveLeadNow(p, shown string) string {
	elems := elements(p)
	cur, i := "/", 0
	for ; i < len(elems) && !hasGlobChars(elems[i]); i++ {
		if a.prot.lookups >= maxLookups {
			a.report(core.Ask, ruleAirlockData, shown, fmt.Sprintf("the command line names more paths than can be checked for links into Airlock's data directory (%d lookups)", maxLookups))
			return ""
		}
		a.prot.lookups++
		next := strings.TrimSuffix(cur, "/") + "/" + unescapeGlob(elems[i])
		if _, err := os.Lstat(next); err != nil {
			break
		}
		cur = next
	}
	if cur == "/" {
		return ""
	}
	real, err := filepath.EvalSymlinks(cur)
	if err != nil || real == cur {
		return ""
	}
	return escapeGlob(real) + "/" + strings.Join(elems[i:], "/")
}

// copiesIntoDataDirParent asks for a command that writes into a folder
// that holds the data directory (cp -r x/airlock ~/.config/ replaces files
// in it): the destination of a copy, move or link, where an archive is
// unpacked, a folder a command changes or runs commands over, a mount.
func (a *analysis) copiesIntoDataDirParent(inv *invocation) {
	var targets []word
	pos := positional(inv.args)
	switch inv.name {
	case "cp", "rsync", "install", "scp", "ditto":
		if len(pos) > 1 {
			targets = append(targets, pos[len(pos)-1])
		}
		targets = append(targets, optionValues(inv.args, "-t", "--target-directory")...)
	case "mv", "ln", "rm", "rmdir", "mkdir", "chmod", "chown", "chgrp", "touch", "truncate":
		// Moving the folder away (to put another in its place) or a link
		// to it (to reach it by another name) counts as well.
		targets = pos
	case "unzip":
		targets = optionValues(inv.args, "-d")
	case "tar", "bsdtar":
		if extracts(inv.args) {
			targets = optionValues(inv.args, "-C", "--directory")
			if len(targets) == 0 {
				targets = []word{{text: ".", lit: true}}
			}
		}
	case "find":
		if slices.ContainsFunc(inv.args, func(w word) bool {
			return w.lit && (w.text == "-exec" || w.text == "-execdir" || w.text == "-ok" || w.text == "-okdir" || w.text == "-delete")
		}) {
			for _, w := range inv.args {
				if w.lit && strings.HasPrefix(w.text, "-") {
					break
				}
				targets = append(targets, w)
			}
		}
	case "docker", "podman":
		for _, v := range optionValues(inv.args, "-v", "--volume") {
			src, _, _ := strings.Cut(v.text, ":")
			targets = append(targets, word{text: src, lit: v.lit, tilde: v.tilde})
		}
	case "git":
		targets = optionValues(inv.args, "--work-tree", "-C")
	}
	for _, w := range targets {
		for _, abs := range a.absolute(a.pathsOf(w)) {
			if a.holdsDataDir(abs) {
				a.report(core.Ask, ruleAirlockData, inv.text, fmt.Sprintf("`%s` changes %s, which holds Airlock's data directory: a person must approve it", inv.text, truncate(w.text)))
				return
			}
		}
	}
	// A copy of a folder that holds it, whole, copies the agents' token
	// (cp -r ~/.config /x, tar czf x.tgz ~).
	for _, w := range copiedWhole(inv, pos) {
		for _, abs := range a.absolute(a.pathsOf(w)) {
			if a.holdsDataDir(abs) {
				a.report(core.Ask, ruleAirlockData, inv.text, fmt.Sprintf("`%s` copies %s whole, with Airlock's data directory in it (the agents' token, the rules): a person must approve it", inv.text, truncate(w.text)))
				return
			}
		}
	}
}

// copiedWhole returns the folders inv copies with what is in them: the
// sources of a recursive cp, scp, rsync or ditto, what tar or zip archive.
func copiedWhole(inv *invocation, pos []word) []word {
	recursive := slices.ContainsFunc(inv.args, func(w word) bool {
		if !w.lit {
			return false
		}
		if strings.HasPrefix(w.text, "--") {
			return w.text == "--recursive" || w.text == "--archive"
		}
		return strings.HasPrefix(w.text, "-") && strings.ContainsAny(w.text, "rRa")
	})
	switch inv.name {
	case "cp", "scp":
		if recursive && len(pos) > 1 {
			return pos[:len(pos)-1]
		}
	case "rsync", "ditto":
		if len(pos) > 1 {
			return pos[:len(pos)-1]
		}
	case "tar", "bsdtar":
		if !extracts(inv.args) {
			return tarMembers(inv.args)
		}
	case "zip", "7z":
		return pos
	}
	return nil
}

// extracts reports whether tar's arguments unpack an archive: -x in an
// option cluster, --extract or --get, or x in the old-style first word.
func extracts(args []word) bool {
	for i, w := range args {
		switch {
		case !w.lit:
		case w.text == "--extract" || w.text == "--get":
			return true
		case strings.HasPrefix(w.text, "--"):
		case strings.HasPrefix(w.text, "-") || i == 0:
			if strings.ContainsRune(w.text, 'x') {
				return true
			}
		}
	}
	return false
}

// tarMembers is what tar's arguments name to archive: the words that are
// neither options nor an option's value (the archive after f, the folder
// after C, a list after T or X).
func tarMembers(args []word) []word {
	var out []word
	skip := false
	for i, w := range args {
		switch {
		case skip:
			skip = false
		case !w.lit:
			out = append(out, w)
		case w.text == "-C" || w.text == "--directory" || w.text == "-f" || w.text == "--file" || w.text == "-T" || w.text == "-X":
			skip = true
		case strings.HasPrefix(w.text, "--"):
		case strings.HasPrefix(w.text, "-") || i == 0 && w.text != "" && strings.Trim(w.text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == "":
			// An option cluster (-czf, or the old-style first word): a
			// value follows for f, C, T or X at its end.
			skip = strings.ContainsAny(w.text[len(w.text)-1:], "fCTX")
		default:
			out = append(out, w)
		}
	}
	return out
}

// positional is args without options (and --).
func positional(args []word) []word {
	var out []word
	for _, w := range args {
		if !w.lit || !strings.HasPrefix(w.text, "-") || w.text == "-" {
			out = append(out, w)
		}
	}
	return out
}

// optionValues returns the values of the options names: "-t DIR",
// "-tDIR", "--name=DIR" and "--name DIR".
func optionValues(args []word, names ...string) []word {
	var out []word
	for i, w := range args {
		if !w.lit {
			continue
		}
		for _, n := range names {
			switch {
			case w.text == n && i+1 < len(args):
				out = append(out, args[i+1])
			case strings.HasPrefix(n, "--") && strings.HasPrefix(w.text, n+"="):
				v := strings.TrimPrefix(w.text, n+"=")
				out = append(out, word{text: v, lit: true, tilde: strings.HasPrefix(v, "~")})
			case !strings.HasPrefix(n, "--") && strings.HasPrefix(w.text, n) && len(w.text) > len(n):
				v := w.text[len(n):]
				out = append(out, word{text: v, lit: true, tilde: strings.HasPrefix(v, "~")})
			}
		}
	}
	return out
}

var homeVar = regexp.MustCompile(`^\$(?:HOME\b|\{HOME(?:[:%#/^,][^}]*)?\})`)

// pathsOf returns the paths w may name, as patterns (path.Match): the word,
// the value of an --option=value, and what follows a short option's
// letters (-o/path, -C$HOME/x), each with an unquoted leading ~ (~user,
// ~+, ~-), $HOME, $PWD or a variable the line fixes made what it stands
// for. A word computed any other way names nothing known.
func (a *analysis) pathsOf(w word) []string {
	if len(w.text) > 2*maxPathBytes {
		return nil
	}
	text := w.text
	if !w.lit {
		text = strings.NewReplacer(`"`, "", `'`, "", `\`, "").Replace(text)
	} else {
		text = escapeGlob(text)
	}
	type start struct {
		s     string
		tilde bool
	}
	starts := []start{{text, w.tilde}}
	if _, v, ok := strings.Cut(text, "="); ok && v != "" {
		starts = append(starts, start{v, strings.HasPrefix(v, "~")})
	}
	if len(text) > 2 && text[0] == '-' && text[1] != '-' {
		i := 1
		for i < len(text) && (isLetter(text[i]) || text[i] >= '0' && text[i] <= '9') {
			i++
		}
		if i > 1 && i < len(text) {
			starts = append(starts, start{text[i:], false})
		}
	}
	var out []string
	for _, s := range starts {
		vals := []string{s.s}
		if !w.lit {
			vals = a.substitute(s.s)
		}
		for _, v := range vals {
			if len(v) > maxPathBytes {
				continue
			}
			out = append(out, a.expandTilde(v, s.tilde)...)
		}
	}
	return out
}

// substitute returns s with every variable in it replaced by the values
// it may have: HOME the home folders, PWD and OLDPWD the folders the line
// is in, a variable the line fixes its values, any other the paths of the
// line that hold the data directory; nil when s has a command substitution
// or a variable with no value to try.
func (a *analysis) substitute(s string) []string {
	s = strings.NewReplacer("/proc/$$/", "/proc/self/", "/proc/$BASHPID/", "/proc/self/").Replace(s)
	if strings.Contains(s, "$(") || strings.Contains(s, "`") {
		return nil
	}
	i := strings.IndexByte(s, '$')
	if i < 0 {
		return []string{s}
	}
	if homeVar.MatchString(s[i:]) {
		// ${HOME}, ${HOME%/}, ${HOME:-x}: ~ is expanded below.
		rest := homeVar.ReplaceAllString(s[i:], "")
		var out []string
		for _, h := range a.homes() {
			for _, r := range a.substitute(rest) {
				out = append(out, s[:i]+escapeGlob(h)+r)
			}
		}
		return out
	}
	name, def, rest := varRef(s[i+1:])
	if name == "" {
		return nil
	}
	var vals []string
	switch name {
	case "HOME":
		for _, h := range a.homes() {
			vals = append(vals, escapeGlob(h))
		}
	case "PWD", "OLDPWD":
		for _, d := range a.prot.dirs {
			vals = append(vals, escapeGlob(d))
		}
	default:
		vals = append(slices.Clone(a.prot.fixed[name]), a.prot.holders...)
	}
	if def != "" {
		vals = append(vals, def)
	}
	var out []string
	for _, v := range vals {
		for _, r := range a.substitute(rest) {
			if len(out) < maxValues {
				out = append(out, s[:i]+v+r)
			}
		}
	}
	return out
}

// varRef reads a variable reference after its $: NAME, a positional or
// special parameter, or {NAME<operator>...}; def is the word a :- or =
// operator gives, rest what follows.
func varRef(s string) (name, def, rest string) {
	if inner, ok := strings.CutPrefix(s, "{"); ok {
		body, after, found := strings.Cut(inner, "}")
		if !found {
			return "", "", ""
		}
		n := 0
		for n < len(body) && (isLetter(body[n]) || body[n] == '_' || body[n] >= '0' && body[n] <= '9' || n == 0 && strings.IndexByte("@*#?!-", body[n]) >= 0) {
			n++
		}
		op := body[n:]
		for _, o := range []string{":-", ":=", "-", "="} {
			if d, ok := strings.CutPrefix(op, o); ok {
				def = d
				break
			}
		}
		return body[:n], def, after
	}
	if s != "" && strings.IndexByte("0123456789@*#?!-", s[0]) >= 0 {
		return s[:1], "", s[1:]
	}
	n := 0
	for n < len(s) && (isLetter(s[n]) || s[n] == '_' || n > 0 && s[n] >= '0' && s[n] <= '9') {
		n++
	}
	return s[:n], "", s[n:]
}

// expandTilde makes a leading ~ (when the shell expands it), ~user, ~+ or
// ~- what it stands for.
func (a *analysis) expandTilde(s string, tilde bool) []string {
	rest, ok := strings.CutPrefix(s, "~")
	if !ok || !tilde {
		return []string{s}
	}
	prefix, after, _ := strings.Cut(rest, "/")
	if strings.Contains(rest, "/") {
		after = "/" + after
	}
	var bases []string
	switch prefix {
	case "":
		bases = a.homes()
	case "+", "-":
		bases = a.prot.dirs
	default:
		if u, err := user.Lookup(unescapeGlob(prefix)); err == nil && u.HomeDir != "" {
			bases = []string{u.HomeDir}
		}
	}
	var out []string
	for _, b := range bases {
		out = append(out, escapeGlob(b)+after)
	}
	return out
}

// holdsDataDir reports whether the absolute pattern p names a folder that
// holds the data directory.
func (a *analysis) holdsDataDir(p string) bool {
	return memo(&a.prot.holds, p, func() bool {
		pe := elements(p)
		for _, d := range a.c.prot.Dirs {
			de := elements(d)
			if len(pe) < len(de) && slices.EqualFunc(pe, de[:len(pe)], func(x, y string) bool {
				return foldPath(unescapeGlob(x), a.prot.loose) == foldPath(y, a.prot.loose)
			}) {
				return true
			}
		}
		return false
	})
}

// absolute is each of the patterns ps from each folder the command starts
// in (itself when absolute), with /proc/self/root and a process's cwd
// under /proc taken as the shell takes them.
func (a *analysis) absolute(ps []string) []string {
	var out []string
	for _, p := range ps {
		switch {
		case p == "":
		case strings.HasPrefix(p, "/"):
			if m := procCwd.FindStringSubmatch(p); m != nil {
				out = append(out, a.absolute([]string{"." + m[1]})...)
				continue
			}
			out = append(out, cleanAbs(p))
		default:
			for _, d := range a.prot.dirs {
				out = append(out, escapeGlob(strings.TrimSuffix(d, "/"))+"/"+p)
			}
		}
	}
	return out
}

var procCwd = regexp.MustCompile(`^/proc/[^/]+/cwd(/.*)?$`)

// foldPath is p as the file system compares names: case-insensitive on
// macOS and Windows, and on any system when loose (nocaseglob).
func foldPath(p string, loose bool) string {
	if loose || runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
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
