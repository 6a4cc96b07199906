package builtin

import (
	"bytes"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path"
	"regexp"
	"runtime"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/airlock-dev/airlock/backend/core"
)

// Classification is what the shell policy says of a command line: the
// outcome and each reason for it.
type Classification struct {
	// Outcome is core.Deny when a deny rule matched, else core.Ask when an
	// ask rule matched or something could not be proven, else core.Allow.
	Outcome  string    `json:"outcome"`
	Findings []Finding `json:"findings,omitempty"`
	// Commands are the simple commands found, as they would run (after
	// unquoting and unwrapping), for explanations.
	Commands []string `json:"commands,omitempty"`
}

// Finding is one reason to deny or ask.
type Finding struct {
	Outcome string `json:"outcome"` // core.Deny or core.Ask
	// Rule is the deny or ask rule that matched, or the name of a built-in
	// check ("dynamic-command", "eval", "unparsable", ...).
	Rule string `json:"rule"`
	// Command is the simple command (or pipeline) the finding is about.
	Command string `json:"command"`
	Reason  string `json:"reason"`
}

// Limits of the classifier: input beyond them asks instead of being
// analysed.
const (
	// MaxCommandBytes is the longest command line shell_exec accepts.
	MaxCommandBytes = 64 << 10
	// maxDepth bounds the nesting of scripts inside scripts (sh -c '...').
	maxDepth = 16
	// maxInvocations bounds the simple commands one classification looks at.
	maxInvocations = 4096
	maxWords       = 1024 // words of one simple command, after brace expansion
	maxFindings    = 50
	maxCommands    = 200
)

// Classifier classifies shell command lines against deny and ask rules. It
// is immutable and safe for concurrent use.
type Classifier struct {
	deny, ask []*Rule
	wrappers  map[string]wrapper
	prot      Protection // what no command may touch (WithProtection)
}

// NewClassifier compiles the deny and ask rules.
func NewClassifier(deny, ask []string) (*Classifier, error) {
	c := &Classifier{wrappers: wrappers()}
	for _, list := range []struct {
		name  string
		texts []string
		dst   *[]*Rule
	}{{"deny", deny, &c.deny}, {"ask", ask, &c.ask}} {
		for i, text := range list.texts {
			r, err := ParseRule(text)
			if err != nil {
				return nil, core.Errorf(core.EInvalid, "%s rule %d %q: %s", list.name, i+1, text, core.ErrorMessage(err))
			}
			*list.dst = append(*list.dst, r)
		}
	}
	return c, nil
}

// Classify analyses a command line as bash would run it: every simple
// command reachable through lists, pipelines, subshells, substitutions,
// functions, wrappers (sudo, env, xargs, timeout, ...) and nested shells
// (sh -c '...') is checked against the rules. Deny wins over ask, ask over
// allow; what cannot be proven safe asks.
func (c *Classifier) Classify(script string) Classification { return c.ClassifyAt(script, "") }

// ClassifyAt is Classify for a command that starts in the folder cwd (an
// absolute path; "" when not known), against which relative paths are
// judged.
func (c *Classifier) ClassifyAt(script, cwd string) (out Classification) {
	a := &analysis{c: c, prot: protection{dirs: startDirs(cwd)}, seen: map[string]bool{}, stmtInvs: map[*syntax.Stmt][]*invocation{}, parsed: map[string]bool{}, vals: newValues()}
	// A command the analysis fails on (a bug here or in the shell parser)
	// is never allowed: a person decides.
	defer func() {
		if r := recover(); r != nil {
			out = Classification{Outcome: core.Ask, Commands: a.commands, Findings: append(a.findings, Finding{Outcome: core.Ask,
				Rule: "unchecked", Command: truncate(script), Reason: fmt.Sprintf("the shell policy failed on this command (%v); a person decides", r)})}
		}
	}()
	if len(script) > MaxCommandBytes {
		a.report(core.Ask, "too-long", truncate(script), fmt.Sprintf("the command is longer than %d bytes, too long to check", MaxCommandBytes))
	} else {
		a.script(script, 0)
		a.checkValues()
		if len(a.made) > 0 || a.pathChanged {
			// Again, knowing from the start what the command line puts in
			// place: a use written before the copy runs after it in a loop
			// or a function (for …; do ./ls -rf ~; cp /bin/rm ./ls; done;
			// found by a code review).
			// A destination computed at run time ("*") counts only after
			// the copy, as in the first pass: before it, every ./x would
			// ask (found by a regression test: ./build.sh && cp a "$DEST").
			made := maps.Clone(a.made)
			delete(made, "*")
			a = &analysis{c: c, prot: protection{dirs: startDirs(cwd)}, seen: map[string]bool{}, stmtInvs: map[*syntax.Stmt][]*invocation{}, parsed: map[string]bool{}, vals: newValues(),
				made: made, pathChanged: a.pathChanged}
			a.script(script, 0)
			a.checkValues()
		}
	}
	out = Classification{Outcome: core.Allow, Findings: a.findings, Commands: a.commands}
	for _, f := range a.findings {
		if f.Outcome == core.Deny {
			out.Outcome = core.Deny
			break
		}
		out.Outcome = core.Ask
	}
	return out
}

// startDirs is the folders a command that starts in cwd judges relative
// paths from.
func startDirs(cwd string) []string {
	if cwd == "" {
		return nil
	}
	return []string{cwd}
}

// analysis is the state of one classification.
type analysis struct {
	c    *Classifier
	prot protection      // the self-protection checks' state (protectScript)
	made map[string]bool // names of files the command line put in place (noteMade)
	// pathChanged: the command line assigns PATH, so a bare name may run
	// a file it put in place.
	pathChanged bool
	findings    []Finding
	seen        map[string]bool
	commands    []string
	stmtInvs    map[*syntax.Stmt][]*invocation
	parsed      map[string]bool
	count       int
	overrun     bool
	vals        values
}

// word is one argument after brace expansion: its literal text when it has
// one (lit), else the source it came from.
type word struct {
	text string
	lit  bool
	// split: a computed word the shell may split into several (an
	// unquoted expansion or glob); a quoted one stays one word.
	split bool
	// tilde: the word starts with an unquoted ~, which the shell expands
	// (a quoted one it does not).
	tilde bool
}

// invocation is one simple command as it would run.
type invocation struct {
	name     string // base name, lower-cased, without .exe
	nameText string // the name as written (the source when not literal)
	nameLit  bool
	args     []word
	// open: more arguments are added at run time (xargs).
	open bool
	text string
}

func (inv *invocation) dynamicArgs() bool {
	for _, a := range inv.args {
		if !a.lit {
			return true
		}
	}
	return false
}

func (a *analysis) report(outcome, rule, command, reason string) {
	key := outcome + "\x00" + rule + "\x00" + command
	if a.seen[key] {
		return
	}
	a.seen[key] = true
	if len(a.findings) >= maxFindings {
		// Keep the verdict right even when the list is cut: a deny must
		// not be lost behind asks.
		if outcome != core.Deny || slices.ContainsFunc(a.findings, func(f Finding) bool { return f.Outcome == core.Deny }) {
			return
		}
		a.findings = a.findings[:len(a.findings)-1]
	}
	a.findings = append(a.findings, Finding{Outcome: outcome, Rule: rule, Command: command, Reason: reason})
}

// script parses src and analyses it; it returns every simple command in it.
func (a *analysis) script(src string, depth int) []*invocation {
	if depth > maxDepth {
		a.report(core.Ask, "too-deep", truncate(src), fmt.Sprintf("commands nested more than %d levels deep cannot be checked", maxDepth))
		return nil
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		a.report(core.Ask, "unparsable", truncate(src), "the command cannot be parsed, so what it runs cannot be checked: "+err.Error())
		return nil
	}
	a.protectScript(f)
	return a.walk(f, depth)
}

// expansion analyses a string that bash may expand later (in arithmetic,
// eval, PS4, a prompt): the command substitutions in it would run.
func (a *analysis) expansion(s string, depth int) []*invocation {
	if depth > maxDepth {
		a.report(core.Ask, "too-deep", truncate(s), fmt.Sprintf("commands nested more than %d levels deep cannot be checked", maxDepth))
		return nil
	}
	w, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Document(strings.NewReader(s))
	if err != nil {
		a.report(core.Ask, "unparsable", truncate(s), "a string holds a command substitution that cannot be parsed: "+err.Error())
		return nil
	}
	a.protectScript(w)
	return a.walk(w, depth)
}

// walk analyses a parsed script (or part of one).
func (a *analysis) walk(root syntax.Node, depth int) []*invocation {
	var all []*invocation
	var pipes [][]*syntax.Stmt
	inPipe := map[*syntax.BinaryCmd]bool{}
	heredocs := map[*syntax.Word]bool{}
	syntax.Walk(root, func(n syntax.Node) bool {
		a.valueNode(n)
		switch n := n.(type) {
		case *syntax.Stmt:
			for _, r := range n.Redirs {
				if r.Hdoc != nil {
					heredocs[r.Hdoc] = true
				}
				a.redirect(r)
			}
			if call, ok := n.Cmd.(*syntax.CallExpr); ok {
				invs := a.call(call, n.Redirs, depth)
				a.stmtInvs[n] = invs
				all = append(all, invs...)
			}
		case *syntax.BinaryCmd:
			if (n.Op == syntax.Pipe || n.Op == syntax.PipeAll) && !inPipe[n] {
				pipes = append(pipes, flattenPipe(n, inPipe))
			}
		case *syntax.FuncDecl:
			a.function(n)
		case *syntax.Assign:
			if n.Name != nil {
				a.variable(n.Name.Value)
			}
		case *syntax.Word:
			// A string holding a command substitution is code in waiting:
			// bash runs it when the string reaches arithmetic
			// (x='a[$(cmd)]'; ((x))), eval, PS4 or a prompt. Check it as a
			// command too.
			if heredocs[n] {
				return true
			}
			if s, ok := literal(n); ok && (strings.Contains(s, "$(") || strings.Contains(s, "`")) && !a.parsed[s] {
				a.parsed[s] = true
				all = append(all, a.expansion(s, depth+1)...)
			}
		}
		return true
	})
	for _, stages := range pipes {
		a.pipeline(stages)
	}
	return all
}

// flattenPipe returns the stages of the pipeline rooted at b.
func flattenPipe(b *syntax.BinaryCmd, inPipe map[*syntax.BinaryCmd]bool) []*syntax.Stmt {
	inPipe[b] = true
	var out []*syntax.Stmt
	for _, s := range []*syntax.Stmt{b.X, b.Y} {
		if inner, ok := s.Cmd.(*syntax.BinaryCmd); ok && (inner.Op == syntax.Pipe || inner.Op == syntax.PipeAll) && len(s.Redirs) == 0 && !s.Negated {
			out = append(out, flattenPipe(inner, inPipe)...)
			continue
		}
		out = append(out, s)
	}
	return out
}

// pipeline checks the pipeline rules against the commands of each stage.
func (a *analysis) pipeline(stages []*syntax.Stmt) {
	invs := make([][]*invocation, len(stages))
	var names []string
	for i, st := range stages {
		syntax.Walk(st, func(n syntax.Node) bool {
			if s, ok := n.(*syntax.Stmt); ok {
				invs[i] = append(invs[i], a.stmtInvs[s]...)
			}
			return true
		})
		var stage []string
		for _, inv := range invs[i] {
			stage = append(stage, inv.text)
		}
		names = append(names, strings.Join(stage, "; "))
	}
	// What a later stage reads is what the earlier ones write.
	for _, stage := range invs[1:] {
		for _, inv := range stage {
			if inv.nameLit && interpreter(inv.name) {
				a.interpreterStdin(inv, inv.args, true)
			}
		}
	}
	text := truncate(strings.Join(names, " | "))
	for _, list := range []struct {
		outcome string
		rules   []*Rule
	}{{core.Deny, a.c.deny}, {core.Ask, a.c.ask}} {
		for _, r := range list.rules {
			if len(r.segs) < 2 {
				continue
			}
			yes, maybe := matchPipeline(r.segs, invs)
			switch {
			case yes:
				a.report(list.outcome, r.Text, text, fmt.Sprintf("the pipeline `%s` matches the %s rule `%s`", text, list.outcome, r.Text))
			case maybe:
				a.report(core.Ask, r.Text, text, fmt.Sprintf("the pipeline `%s` may match the %s rule `%s` (its arguments are computed at run time)", text, list.outcome, r.Text))
			}
		}
	}
}

// matchPipeline reports whether the segments match stages in order.
func matchPipeline(segs []segment, stages [][]*invocation) (yes, maybe bool) {
	var try func(seg, from int, sure bool) (bool, bool)
	try = func(seg, from int, sure bool) (bool, bool) {
		if seg == len(segs) {
			return sure, !sure
		}
		var anyMaybe bool
		for i := from; i < len(stages); i++ {
			for _, inv := range stages[i] {
				y, m := segs[seg].match(inv)
				if !y && !m {
					continue
				}
				ry, rm := try(seg+1, i+1, sure && y)
				if ry {
					return true, false
				}
				anyMaybe = anyMaybe || rm
			}
		}
		return false, anyMaybe
	}
	return try(0, 0, true)
}

// redirect checks an output redirection against the redirection rules.
func (a *analysis) redirect(r *syntax.Redirect) {
	if r.N != nil && strings.HasPrefix(r.N.Value, "{") && strings.Contains(r.N.Value, "[") {
		// exec {a[x]}>f: bash evaluates the subscript (found by a third
		// regression test).
		a.subscriptNames(strings.Trim(r.N.Value, "{}"))
	}
	if (r.Op == syntax.RdrIn || r.Op == syntax.RdrInOut) && r.Word != nil {
		// A program read as input, by any command or group of them
		// (cp /dev/stdin ./ls < /bin/rm, exec 3</bin/rm; found by two
		// code reviews).
		if t, _ := literal(r.Word); systemProgram(strings.Trim(wordSource(r.Word), `"'`)) || systemProgram(t) {
			a.report(core.Ask, "program-copied", "< "+wordSource(r.Word), fmt.Sprintf("the program %s is read as input: written to a file under another name it would pass for another command", wordSource(r.Word)))
		}
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.RdrClob, syntax.AppClob,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.DplOut:
	default:
		return
	}
	if r.Word == nil {
		return
	}
	target, lit := literal(r.Word)
	if r.Op == syntax.DplOut && lit && isFD(target) {
		return // >&2 duplicates a descriptor, it names no file
	}
	if lit {
		a.markMade(target) // cat /bin/rm > ./ls; ./ls -rf x
		if climbsToSystem(target) {
			a.report(core.Ask, "system-path", "> "+target, fmt.Sprintf("%s climbs out of the working folder into a system folder (a device, from deep enough)", target))
		}
		target = cleanPathArg(target)
	} else {
		a.markMade("*")
	}
	shown := "> " + wordSource(r.Word)
	for _, list := range []struct {
		outcome string
		rules   []*Rule
	}{{core.Deny, a.c.deny}, {core.Ask, a.c.ask}} {
		for _, rule := range list.rules {
			if len(rule.segs) != 1 || rule.segs[0].redirect == nil {
				continue
			}
			if !lit {
				a.report(core.Ask, rule.Text, shown, fmt.Sprintf("the output goes to a file named at run time, which may match the %s rule `%s`", list.outcome, rule.Text))
				continue
			}
			for _, g := range rule.segs[0].redirect {
				if glob(g, path.Clean(target)) || glob(g, target) {
					a.report(list.outcome, rule.Text, shown, fmt.Sprintf("writing to %s matches the %s rule `%s`", target, list.outcome, rule.Text))
					break
				}
			}
		}
	}
}

func isFD(s string) bool {
	if s == "-" {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// function flags fork bombs: a function that calls itself in a pipeline or
// in the background multiplies processes without end.
func (a *analysis) function(fd *syntax.FuncDecl) {
	if fd.Name == nil || fd.Body == nil {
		return
	}
	name := fd.Name.Value
	recursive, parallel := false, false
	syntax.Walk(fd.Body, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				if s, ok := literal(n.Args[0]); ok && s == name {
					recursive = true
				}
			}
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				parallel = true
			}
		case *syntax.Stmt:
			if n.Background || n.Coprocess || n.Disown {
				parallel = true
			}
		}
		return true
	})
	switch {
	case recursive && parallel:
		a.report(core.Deny, "fork-bomb", name+"()", fmt.Sprintf("function %s calls itself in a pipeline or in the background: a fork bomb", name))
	case recursive:
		a.report(core.Ask, "recursive-function", name+"()", fmt.Sprintf("function %s calls itself; how often cannot be proven", name))
	}
}

// call expands a simple command's words and analyses what it runs.
func (a *analysis) call(call *syntax.CallExpr, redirs []*syntax.Redirect, depth int) []*invocation {
	argv, ok := a.words(call.Args)
	if !ok || len(argv) == 0 {
		return nil
	}
	return a.run(argv, redirs, depth, false)
}

// words expands braces ({rm,-rf,/} is three words to bash) and unquotes.
func (a *analysis) words(ws []*syntax.Word) ([]word, bool) {
	var out []word
	for _, orig := range ws {
		// SplitBraces rewrites the word it is given; the walk still needs
		// the original, so it gets a copy. (The rewritten word is not for
		// printing: the printer panics on some, such as {,}{0..9}.)
		w := &syntax.Word{Parts: slices.Clone(orig.Parts)}
		if !syntax.SplitBraces(w) {
			out = append(out, newWord(w))
			continue
		}
		for ew, err := range expand.BracesSeq(nil, w) {
			if err != nil || len(out) >= maxWords {
				a.report(core.Ask, "too-complex", truncate(wordSource(orig)), "the brace expansion is too large to check")
				return nil, false
			}
			out = append(out, newWord(ew))
		}
	}
	if len(out) > maxWords {
		a.report(core.Ask, "too-complex", truncate(wordSource(ws[0])), fmt.Sprintf("a command with more than %d words is too large to check", maxWords))
		return nil, false
	}
	return out, true
}

func newWord(w *syntax.Word) word {
	if s, ok := literal(w); ok {
		return word{text: s, lit: true, tilde: leadingTilde(w)}
	}
	return word{text: wordSource(w), split: maySplit(w), tilde: leadingTilde(w)}
}

// leadingTilde reports whether w starts with an unquoted ~.
func leadingTilde(w *syntax.Word) bool {
	if len(w.Parts) == 0 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	return ok && strings.HasPrefix(l.Value, "~")
}

// maySplit reports whether the shell may make several words of w: an
// unquoted parameter, substitution or arithmetic is split on blanks, and an
// unquoted glob becomes every name it matches.
func maySplit(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst, *syntax.ExtGlob:
			return true
		case *syntax.Lit:
			if hasUnquotedGlob(p.Value) {
				return true
			}
		}
	}
	return false
}

// literal returns the text a word stands for when it is fixed before the
// command runs: quotes removed and escapes resolved, so r""m, \rm, "rm" and
// $'\x72m' are all rm. It fails for anything computed at run time
// (parameters, substitutions, arithmetic) and for unquoted glob patterns.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if hasUnquotedGlob(p.Value) {
				return "", false
			}
			unescape(&b, p.Value, false)
		case *syntax.SglQuoted:
			if !p.Dollar {
				b.WriteString(p.Value)
				continue
			}
			s, err := expand.Literal(nil, &syntax.Word{Parts: []syntax.WordPart{p}})
			if err != nil {
				return "", false
			}
			b.WriteString(s)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				unescape(&b, lit.Value, true)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescape writes s with the shell's backslash escapes resolved: outside
// quotes \x is x; inside double quotes only \$ \` \" \\ lose the backslash.
// A backslash-newline joins lines in both.
func unescape(b *strings.Builder, s string, quoted bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		next := s[i+1]
		switch {
		case next == '\n':
			i++
		case !quoted || strings.IndexByte("$`\"\\", next) >= 0:
			b.WriteByte(next)
			i++
		default:
			b.WriteByte(c)
		}
	}
}

// hasUnquotedGlob reports whether an unquoted literal is a pattern that
// pathname expansion would replace.
func hasUnquotedGlob(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			if strings.IndexByte(s[i+1:], ']') >= 0 {
				return true
			}
		}
	}
	return false
}

// wordSource prints a word as it was written ("?" when it cannot be).
func wordSource(w *syntax.Word) (src string) {
	defer func() {
		if recover() != nil {
			src = "?"
		}
	}()
	var buf bytes.Buffer
	if err := syntax.NewPrinter().Print(&buf, w); err != nil {
		return "?"
	}
	return buf.String()
}

func truncate(s string) string {
	const n = 200
	s = strings.Join(strings.Fields(s[:min(len(s), 4*n)]), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// normalName is how rules see a command name: the base name, lower-cased
// (case-insensitive file systems run RM as rm), without .exe.
func normalName(s string) string {
	s = strings.ToLower(path.Base(strings.ReplaceAll(s, `\`, "/")))
	s = strings.TrimSuffix(s, ".exe")
	// Versioned and packaged names of the interpreters and editors the
	// lists name: perl5.36.0, ruby3.1, php8.2, node18, vim.basic.
	if m := versionedName.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	// Found by a red-team test: pip3.11 installs as pip3 does; the dynamic
	// loader runs any program (ld.so /bin/rm -rf x); Debian's alternatives
	// names are the editors and pagers they stand for.
	switch {
	case strings.HasPrefix(s, "pip3."):
		return "pip3"
	case loaderName.MatchString(s):
		return "ld.so"
	case s == "editor" || s == "sensible-editor":
		return "vim"
	case s == "pager" || s == "sensible-pager":
		return "less"
	}
	return s
}

var (
	versionedName = regexp.MustCompile(`^(perl|ruby|php|node|nodejs|vim|vi|nvim)(?:[0-9][0-9.]*|\.(?:basic|tiny|nox|gtk|gtk3|athena|motif))$`)
	loaderName    = regexp.MustCompile(`^ld(?:-linux[-a-z0-9_.]*|-musl[-a-z0-9_.]*)?\.so(?:\.[0-9]+)*$`)
)

// leadingFlags returns the letters of a short-option cluster up to the
// first character that is not a letter: "rf" for -rf, and "c" for
// -c'print(1)' (a value attached to its option). Long options and words
// that are not options give "".
func leadingFlags(arg string) string {
	if len(arg) < 2 || arg[0] != '-' || arg[1] == '-' {
		return ""
	}
	i := 1
	for i < len(arg) && isLetter(arg[i]) {
		i++
	}
	return arg[1:i]
}

func newInvocation(argv []word, open bool) *invocation {
	inv := &invocation{args: argv[1:], open: open, nameLit: argv[0].lit, nameText: truncate(argv[0].text)}
	if inv.nameLit {
		inv.name = normalName(argv[0].text)
	}
	var b strings.Builder
	for i, w := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.text[:min(len(w.text), 256)])
		if b.Len() > 256 {
			break
		}
	}
	inv.text = truncate(b.String())
	if open {
		inv.text += " …"
	}
	return inv
}

// run analyses one simple command given as words: the command itself, then
// whatever it runs in turn (a wrapper's command, a shell's script, find's
// -exec, ...).
func (a *analysis) run(argv []word, redirs []*syntax.Redirect, depth int, open bool) []*invocation {
	if depth > maxDepth {
		a.report(core.Ask, "too-deep", truncate(argv[0].text), fmt.Sprintf("commands nested more than %d levels deep cannot be checked", maxDepth))
		return nil
	}
	if a.count >= maxInvocations {
		if !a.overrun {
			a.overrun = true
			a.report(core.Ask, "too-complex", "", fmt.Sprintf("the command runs more than %d simple commands, too many to check", maxInvocations))
		}
		return nil
	}
	a.count++
	if len(argv) > 1 && argv[0].lit && argv[0].text == "--" {
		// time -- rm -rf x: bash's time takes -- as the end of its options
		// (found by a regression test); anywhere else "--" is no command,
		// so judging what follows asks no more than it should.
		argv = argv[1:]
	}
	inv := newInvocation(argv, open)
	out := []*invocation{inv}
	a.classify(inv)
	if !inv.nameLit {
		return out
	}
	args := argv[1:]
	if nameBuiltin(inv.name) {
		a.nameArguments(inv)
	}
	if a.madeHere(argv[0].text) {
		a.report(core.Ask, "program-made-here", inv.text, fmt.Sprintf("%s is a program this command line itself copied, linked or moved into place: what it is cannot be checked by its name", inv.nameText))
	}
	if inv.name == "strace" || inv.name == "ltrace" || inv.name == "socat" {
		out = append(out, a.commandInArgs(inv, args, depth)...)
	}
	if w, ok := a.c.wrappers[inv.name]; ok && len(w.sub) == 0 {
		return append(out, a.wrapped(inv, w, args, redirs, depth, open)...)
	} else if ok {
		if w.scriptShort != "" || len(w.scriptLong) > 0 {
			// Its script options count wherever they stand, before the
			// subcommand too (npm --call 'cmd' exec).
			for _, s := range scanScripts(w, args) {
				out = append(out, a.wrapperScript(inv, s, depth)...)
			}
		}
		// The subcommand may follow options of the program's own (npm
		// --silent exec, uv --directory . run; found by a regression
		// test): the first argument that names one counts, options or not.
		if i := slices.IndexFunc(args, func(arg word) bool {
			return !arg.lit || !strings.HasPrefix(arg.text, "-") && slices.Contains(w.sub, arg.text)
		}); i >= 0 {
			if !args[i].lit {
				a.report(core.Ask, "dynamic-command", inv.text, fmt.Sprintf("%s is given a subcommand made when the command runs", inv.name))
				return out
			}
			return append(out, a.wrapped(inv, w, args[i+1:], redirs, depth, open)...)
		}
	}
	a.noteMade(inv.name, args)
	a.dumpsProgram(inv.name, args)
	switch {
	case inv.name == "declare" || inv.name == "typeset" || inv.name == "local" || inv.name == "export" || inv.name == "readonly" || inv.name == "let":
		// Bash parses these as declarations only as a bare word; run
		// through builtin or command, or quoted, their assignments and
		// arithmetic are not seen here (found by a third regression test).
		a.report(core.Ask, "declaration-as-command", inv.text, fmt.Sprintf("%s run as a plain command (after builtin or command, or quoted) assigns and evaluates what the checker cannot see", inv.name))
	case inv.name == "git" && gitRunsSomething(args):
		a.report(core.Ask, "git-config-command", inv.text, "git is given a setting or a transport that can make it run a command (a config key in capitals, a renamed section, ext::)")
	case inv.name == "tar" && len(args) > 0 && args[0].lit && !strings.HasPrefix(args[0].text, "-") && strings.ContainsAny(args[0].text, "IF"):
		a.report(core.Ask, "tar-program", inv.text, "tar's old-style options name a program to run (I: compression, F: volume script)")
	case inv.name == "ed" || inv.name == "red" || inv.name == "ex":
		a.report(core.Ask, "editor-stdin", inv.text, inv.name+" reads its commands from its input, where !cmd runs a shell command")
	case (inv.name == "vim" || inv.name == "vi" || inv.name == "nvim" || inv.name == "ex") && slices.ContainsFunc(args, func(w word) bool {
		return w.lit && (w.text == "-e" || w.text == "-es" || w.text == "-E" || w.text == "-Es" || w.text == "-s" && inv.name == "ex")
	}):
		// Its input may come through a pipe too (printf '!rm -rf x' |
		// vim -es; found by a red-team test).
		a.report(core.Ask, "editor-stdin", inv.text, inv.name+" in Ex mode reads its commands from the command line's input, where !cmd runs a shell command")
	case (inv.name == "make" || inv.name == "gmake") && slices.ContainsFunc(args, makeCodeArg):
		a.report(core.Ask, "make-eval", inv.text, "make is given makefile code on the command line (--eval, a makefile read from the input, a variable with $(shell …)), whose recipes and functions run shell commands")
	case posixShell(inv.name) || otherShell(inv.name):
		out = append(out, a.shell(inv, args, redirs, depth)...)
	case inv.name == "eval":
		a.report(core.Ask, "eval", inv.text, "eval runs text as a command; a person must approve it")
		if s, ok := joinLiteral(args); ok {
			out = append(out, a.script(s, depth+1)...)
		}
	case inv.name == "source" || inv.name == ".":
		a.report(core.Ask, "source", inv.text, inv.name+" runs the commands of a file the parser cannot see")
	case inv.name == "alias" || inv.name == "enable" || inv.name == "fc" || inv.name == "bind":
		a.report(core.Ask, inv.name, inv.text, inv.name+" changes what later commands run; a person must approve it")
		if inv.name == "alias" {
			for _, w := range args {
				if _, value, ok := strings.Cut(w.text, "="); ok && w.lit {
					out = append(out, a.script(value, depth+1)...)
				}
			}
		}
	case inv.name == "hash" && hasFlag(args, 'p'):
		a.report(core.Ask, "hash", inv.text, "hash -p makes a command name run another program")
	case (inv.name == "mapfile" || inv.name == "readarray") && hasFlag(args, 'C'):
		a.report(core.Ask, inv.name, inv.text, inv.name+" -C runs a callback command")
	case inv.name == "trap":
		out = append(out, a.trap(inv, args, depth)...)
	case interpreter(inv.name):
		a.interpreterStdin(inv, args, readsInput(redirs))
	case inv.name == "find":
		out = append(out, a.findExec(args, depth)...)
	case inv.name == "compgen" || inv.name == "complete":
		// -C runs a command, -F a function, -W expands its word list again.
		for _, f := range []byte{'C', 'F', 'W'} {
			if hasFlag(args, f) {
				a.report(core.Ask, inv.name, inv.text, fmt.Sprintf("%s -%c runs or expands what it is given", inv.name, f))
				break
			}
		}
	case inv.name == "kill":
		// kill -- -1 signals every process of the user: after --, the
		// ask rule's flag does not count.
		if i := slices.IndexFunc(args, func(w word) bool { return w.lit && w.text == "--" }); i >= 0 &&
			slices.ContainsFunc(args[i+1:], func(w word) bool { return w.lit && w.text == "-1" }) {
			a.report(core.Ask, "kill -1", inv.text, "kill -1 signals every process you own")
		}
	case inv.name == "ssh" || inv.name == "scp" || inv.name == "sftp" || inv.name == "autossh":
		if opt := sshCommandOption(args); opt != "" {
			a.report(core.Ask, "ssh-command-option", inv.text, fmt.Sprintf("the ssh option %s runs a local command", opt))
		}
	case inv.name == "sed" && sedExecutes(args):
		a.report(core.Ask, "sed-execute", inv.text, "the sed script runs commands (the e command or flag)")
	}
	return out
}

// classify checks one invocation against the single-command rules.
func (a *analysis) classify(inv *invocation) {
	if len(a.commands) < maxCommands {
		a.commands = append(a.commands, inv.text)
	}
	if !inv.nameLit {
		a.report(core.Ask, "dynamic-command", inv.text, fmt.Sprintf("the command name `%s` is computed when the command runs, so what runs cannot be checked", inv.nameText))
		return
	}
	a.protectedProgram(inv)
	a.copiesIntoDataDirParent(inv)
	for _, list := range []struct {
		outcome string
		rules   []*Rule
	}{{core.Deny, a.c.deny}, {core.Ask, a.c.ask}} {
		for _, r := range list.rules {
			if len(r.segs) != 1 || r.segs[0].redirect != nil {
				continue
			}
			yes, maybe := r.segs[0].match(inv)
			switch {
			case yes:
				reason := fmt.Sprintf("`%s` matches the deny rule `%s`", inv.text, r.Text)
				if list.outcome == core.Ask {
					reason = fmt.Sprintf("`%s` matches the ask rule `%s`: a person must approve it", inv.text, r.Text)
				}
				a.report(list.outcome, r.Text, inv.text, reason)
			case maybe:
				a.report(core.Ask, r.Text, inv.text, fmt.Sprintf("`%s` may match the %s rule `%s`: its arguments are computed when it runs", inv.text, list.outcome, r.Text))
			}
		}
	}
}

func joinLiteral(ws []word) (string, bool) {
	parts := make([]string, len(ws))
	for i, w := range ws {
		if !w.lit {
			return "", false
		}
		parts[i] = w.text
	}
	return strings.Join(parts, " "), true
}

// hasFlag reports whether a literal argument before -- is the short flag c
// or a cluster holding it.
func hasFlag(args []word, c byte) bool {
	for _, a := range args {
		if a.lit && a.text == "--" {
			return false
		}
		if a.lit && (a.text == "-"+string(c) || strings.IndexByte(leadingFlags(a.text), c) >= 0) {
			return true
		}
	}
	return false
}

// commandInArgs checks a command given in an argument of strace/ltrace
// (-o '|cmd' pipes the trace to a shell command) and socat (its SYSTEM:
// and EXEC: addresses run one; found by a red-team test).
func (a *analysis) commandInArgs(inv *invocation, args []word, depth int) []*invocation {
	var out []*invocation
	for i, w := range args {
		var v string
		switch {
		case inv.name == "socat":
			k, rest, found := strings.Cut(w.text, ":")
			if !found || !strings.EqualFold(k, "system") && !strings.EqualFold(k, "exec") {
				continue
			}
			v = rest
		case (w.text == "-o" || w.text == "--output") && i+1 < len(args):
			t := args[i+1].text
			if args[i+1].lit && !strings.HasPrefix(t, "|") && !strings.HasPrefix(t, "!") {
				continue
			}
			v, w = strings.TrimLeft(t, "|!"), args[i+1]
		case strings.HasPrefix(w.text, "-o|"), strings.HasPrefix(w.text, "-o!"):
			v = w.text[3:]
		case strings.HasPrefix(w.text, "--output=|"), strings.HasPrefix(w.text, "--output=!"):
			v = w.text[10:]
		default:
			continue
		}
		if !w.lit {
			a.report(core.Ask, "dynamic-script", inv.text, fmt.Sprintf("%s is given a command made when the command runs", inv.name))
			continue
		}
		a.report(core.Ask, "runs-command", inv.text, fmt.Sprintf("%s runs the command %q", inv.name, v))
		out = append(out, a.script(v, depth+1)...)
	}
	return out
}

// posixShell reports whether a shell's scripts are in POSIX or bash syntax,
// which the classifier parses.
func posixShell(name string) bool {
	switch shellName(name) {
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "lksh", "rbash", "oksh", "loksh":
		return true
	}
	return false
}

// shellName is a shell's name without a version (zsh5, bash5.2, ksh93).
func shellName(name string) string {
	base := strings.TrimRight(name, "0123456789.-")
	switch base {
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "lksh", "rbash", "oksh", "loksh":
		return base
	}
	return name
}

// otherShell reports whether a shell's syntax is one the classifier cannot
// read: a script for it always asks.
func otherShell(name string) bool {
	switch shellName(name) {
	case "fish", "csh", "tcsh", "pwsh", "powershell", "cmd", "nu", "xonsh", "elvish", "rc", "es":
		return true
	}
	return false
}

// shell analyses a shell started as a command: its -c script, its script
// file, or the commands it reads from standard input.
func (a *analysis) shell(inv *invocation, args []word, redirs []*syntax.Redirect, depth int) []*invocation {
	hasC, hasS := false, false
	i := 0
	for ; i < len(args); i++ {
		w := args[i]
		if !w.lit {
			break
		}
		t := w.text
		if t == "--" || t == "-" {
			i++
			break
		}
		if strings.HasPrefix(t, "--") {
			if t == "--rcfile" || t == "--init-file" || strings.HasPrefix(t, "--rcfile=") || strings.HasPrefix(t, "--init-file=") {
				// A start-up file: bash runs it like a script (found by a
				// red-team test: --rcfile <(echo rm -rf x) -i ran it).
				v, attached := "", false
				if _, v, attached = strings.Cut(t, "="); !attached && i+1 < len(args) {
					i++
					v = args[i].text
					if !args[i].lit {
						v = ""
					}
				}
				if v == "" || stdinFile(v) {
					a.report(core.Ask, "dynamic-script", inv.text, fmt.Sprintf("%s is given a start-up file made when the command runs", inv.name))
					return nil
				}
			}
			continue
		}
		if len(t) > 1 && (t[0] == '-' || t[0] == '+') {
			for _, ch := range t[1:] {
				switch ch {
				case 'c':
					hasC = true
				case 's':
					hasS = true
				case 'o', 'O':
					i++
				}
			}
			continue
		}
		break
	}
	var pos []word
	if i < len(args) {
		pos = args[i:]
	}
	if otherShell(inv.name) {
		a.report(core.Ask, "foreign-shell", inv.text, fmt.Sprintf("%s runs commands in a syntax this check cannot read", inv.name))
		return nil
	}
	if shellName(inv.name) == "zsh" {
		// zsh reads bash's syntax with meanings of its own (=rm expands
		// to /usr/bin/rm; found by a red-team test): what it runs is
		// checked as bash, and it asks whatever that finds.
		a.report(core.Ask, "foreign-shell", inv.text, "zsh expands words in ways this check does not follow (=cmd, glob qualifiers)")
	}
	switch {
	case hasC && len(pos) == 0 && inv.open:
		// xargs sh -c: the script is what xargs reads.
		a.report(core.Ask, "dynamic-script", inv.text, fmt.Sprintf("the script given to %s -c comes from what xargs (or parallel) reads when the command runs", inv.name))
		return nil
	case hasC && len(pos) == 0:
		return nil // sh -c with no script fails
	case hasC && !pos[0].lit:
		a.report(core.Ask, "dynamic-script", inv.text, fmt.Sprintf("the script given to %s -c is computed when the command runs", inv.name))
		return nil
	case hasC:
		return a.script(pos[0].text, depth+1)
	case len(pos) > 0 && !hasS && !pos[0].lit:
		a.report(core.Ask, "dynamic-script", inv.text, fmt.Sprintf("the script file %s runs is computed when the command runs (e.g. <(curl …))", inv.name))
		return nil
	case len(pos) > 0 && !hasS && stdinFile(pos[0].text):
		a.report(core.Ask, "shell-stdin", inv.text, fmt.Sprintf("%s runs %s: the commands come from its standard input, which cannot be checked", inv.name, pos[0].text))
		return nil
	case len(pos) > 0 && !hasS:
		return nil // runs a script file: like any program, what it does is its own
	}
	// The shell reads its commands from standard input: a here-document or
	// here-string written out in full can be checked, anything else cannot.
	for _, r := range redirs {
		var body *syntax.Word
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			body = r.Hdoc
		case syntax.WordHdoc:
			body = r.Word
		default:
			continue
		}
		if body == nil {
			return nil
		}
		if s, ok := heredocLiteral(body, r.Op == syntax.WordHdoc); ok {
			return a.script(s, depth+1)
		}
		break
	}
	a.report(core.Ask, "shell-stdin", inv.text, fmt.Sprintf("%s reads the commands it runs from its standard input, which cannot be checked", inv.name))
	return nil
}

// interpreter reports whether a program runs code in a language the
// classifier cannot read: from a script file, -c/-e (the ask list), or its
// standard input.
func interpreter(name string) bool {
	switch name {
	case "python", "python2", "python3", "pypy", "pypy3", "perl", "ruby", "node", "nodejs", "php", "lua", "luajit",
		"tclsh", "wish", "rscript", "irb", "jshell", "groovy", "scala", "julia", "osascript":
		return true
	}
	return strings.HasPrefix(name, "python3.") || strings.HasPrefix(name, "lua5.")
}

// interpreterStdin asks when an interpreter reads its program from
// standard input: `python3 -`, or no script file while the command line
// feeds its input (printf ... | python3, perl <<EOF, node < x.js). Like
// -c, that code cannot be checked. A script file runs as any program does;
// -c/-e are on the ask list; a version, help or a module (-m) is no
// program. Without fed input an interpreter reads nothing: shell_exec's
// standard input is empty.
func (a *analysis) interpreterStdin(inv *invocation, args []word, fed bool) {
	for _, w := range args {
		if !w.lit {
			return // a computed script name: dynamic-args rules decide
		}
		switch t := w.text; {
		case t == "-":
			a.report(core.Ask, "inline-code", inv.text, fmt.Sprintf("%s - reads the program it runs from standard input, which cannot be checked", inv.name))
			return
		case t == "--":
			continue
		case !strings.HasPrefix(t, "-") && stdinFile(t):
			a.report(core.Ask, "inline-code", inv.text, fmt.Sprintf("%s %s reads the program it runs from standard input, which cannot be checked", inv.name, t))
			return
		case !strings.HasPrefix(t, "-"):
			return // a script file
		case slices.Contains([]string{"-m", "-c", "-e", "-E", "-r", "-p", "--eval", "--print", "--version", "-V", "--help", "-h"}, t):
			return // a module, inline code (the ask list), or no program at all
		}
	}
	if fed {
		a.report(core.Ask, "inline-code", inv.text, fmt.Sprintf("%s with no script file reads the program it runs from its input, which cannot be checked", inv.name))
	}
}

// stdinFile reports whether a script file name is standard input in
// disguise (/dev/stdin, /dev/fd/0, /proc/self/fd/0, ...).
func stdinFile(name string) bool {
	// /dev/./stdin, /dev//stdin and ../../dev/stdin are /dev/stdin too
	// (found by a red-team test); any path through /dev or /proc is taken
	// for standard input, as a device is no script file anyway.
	p := path.Clean(name)
	for strings.HasPrefix(p, "../") {
		p = "/" + strings.TrimLeft(p, "./")
	}
	switch {
	case p == "/dev/stdin", strings.HasPrefix(p, "/dev/"), strings.HasPrefix(p, "/proc/"):
		return true
	}
	return false
}

// readsInput reports whether a command's standard input comes from a
// file, a here-document or a here-string.
func readsInput(redirs []*syntax.Redirect) bool {
	for _, r := range redirs {
		switch r.Op {
		case syntax.RdrIn, syntax.RdrInOut, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc, syntax.DplIn:
			if r.N == nil || r.N.Value == "0" {
				return true
			}
		}
	}
	return false
}

// heredocLiteral returns the text of a here-document (or here-string)
// when nothing in it is computed at run time.
func heredocLiteral(w *syntax.Word, hereString bool) (string, bool) {
	if hereString {
		return literal(w)
	}
	var b strings.Builder
	for _, p := range w.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			return "", false
		}
		if strings.Contains(lit.Value, `\`) {
			// bash turns \\ into \ in an unquoted here-document, so
			// r\\m is rm when it runs (found by a red-team test).
			return "", false
		}
		b.WriteString(lit.Value)
	}
	return b.String(), true
}

// trap's first argument is a command run later.
func (a *analysis) trap(inv *invocation, args []word, depth int) []*invocation {
	for i, w := range args {
		if w.lit && (w.text == "--" || (i == 0 && strings.HasPrefix(w.text, "-") && w.text != "-")) {
			continue
		}
		if !w.lit {
			a.report(core.Ask, "trap", inv.text, "the command given to trap is computed when it runs")
			return nil
		}
		if w.text == "" || w.text == "-" {
			return nil
		}
		return a.script(w.text, depth+1)
	}
	return nil
}

// findExec analyses the commands of find's -exec, -execdir, -ok and -okdir.
func (a *analysis) findExec(args []word, depth int) []*invocation {
	var out []*invocation
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.lit || (w.text != "-exec" && w.text != "-execdir" && w.text != "-ok" && w.text != "-okdir") {
			continue
		}
		j := i + 1
		for j < len(args) && !(args[j].lit && (args[j].text == ";" || args[j].text == "+")) {
			j++
		}
		if j > i+1 && args[i+1].lit && strings.Contains(args[i+1].text, "{}") {
			a.report(core.Ask, "find-exec-found", "find "+w.text+" "+args[i+1].text, "find runs the files it finds as programs: what they are cannot be checked by their names")
		} else if j > i+1 {
			out = append(out, a.run(args[i+1:j], nil, depth+1, false)...)
		}
		i = j
	}
	return out
}

// sedExecute finds GNU sed's e command and the e flag of s///, both of
// which run a shell command.
var (
	// The e command, after any address (/re/I, \%re%, 3, $) or none.
	sedECommand = regexp.MustCompile(`(^|[^A-Za-z_\\]|/[IM]+)\s*!?\s*e(\s|;|}|$)`)
)

// sedSubstituteE reports whether a sed script has an s command, with any
// delimiter, whose flags include e (run the pattern space as a command).
func sedSubstituteE(script string) bool {
	for i := 0; i+1 < len(script); i++ {
		if script[i] != 's' || (i > 0 && (isLetter(script[i-1]) || script[i-1] == '\\')) {
			continue
		}
		d := script[i+1]
		if d == '\\' || d == '\n' || d == ' ' || isLetter(d) || d >= '0' && d <= '9' {
			continue
		}
		// Skip the pattern and the replacement: two unescaped delimiters.
		j, seen := i+2, 0
		for j < len(script) && seen < 2 {
			switch script[j] {
			case '\\':
				j++
			case d:
				seen++
			}
			j++
		}
		if seen < 2 {
			continue
		}
		for j < len(script) && (isLetter(script[j]) || script[j] >= '0' && script[j] <= '9') {
			if script[j] == 'e' {
				return true
			}
			j++
		}
	}
	return false
}

// sshCommandOption returns the name of an -o option that makes ssh run a
// local command (ProxyCommand, LocalCommand, KnownHostsCommand, in any
// case, with = or a space), or "".
func sshCommandOption(args []word) string {
	for i, w := range args {
		if !w.lit {
			continue
		}
		var opt string
		switch {
		case w.text == "-o" && i+1 < len(args):
			opt = args[i+1].text
		case strings.HasPrefix(w.text, "-o"):
			opt = w.text[2:]
		default:
			continue
		}
		key := strings.ToLower(strings.TrimSpace(opt))
		if end := strings.IndexAny(key, "= \t"); end >= 0 {
			key = key[:end]
		}
		switch key {
		case "proxycommand", "localcommand", "knownhostscommand", "permitlocalcommand":
			return key
		}
	}
	return ""
}

// sedExecutes reports whether a sed command line's script runs commands.
func sedExecutes(args []word) bool {
	var scripts []word
	explicit := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.lit {
			continue
		}
		t := w.text
		switch {
		case t == "-e" || len(t) > 3 && strings.HasPrefix("--expression", t):
			// --expr, --e: getopt takes any unique abbreviation (found
			// by a red-team test).
			explicit = true
			if i+1 < len(args) {
				scripts = append(scripts, args[i+1])
				i++
			}
		case strings.HasPrefix(t, "--e") && strings.Contains(t, "=") && strings.HasPrefix("--expression", t[:strings.Index(t, "=")]):
			explicit = true
			scripts = append(scripts, word{text: t[strings.Index(t, "=")+1:], lit: true})
		case strings.HasPrefix(t, "-e") && len(t) > 2:
			explicit = true // -e1e cmd: the script attached
			scripts = append(scripts, word{text: t[2:], lit: true})
		case t == "-f" || t == "--file" || strings.HasPrefix(t, "--file="):
			// A script from the input cannot be checked (… | sed -f - f).
			v := strings.TrimPrefix(t, "--file=")
			if v == t && i+1 < len(args) {
				i++
				v = args[i].text
				if !args[i].lit {
					v = "-"
				}
			}
			if v == "-" || stdinFile(v) {
				return true
			}
		case t == "-l" || t == "--line-length":
			i++
		case isFlagCluster(t) && strings.ContainsRune(t, 'e'):
			explicit = true
			k := strings.IndexByte(t, 'e')
			if rest := t[k+1:]; rest != "" {
				scripts = append(scripts, word{text: rest, lit: true})
			} else if i+1 < len(args) {
				scripts = append(scripts, args[i+1])
				i++
			}
		case strings.HasPrefix(t, "-") && t != "-":
		default:
			if !explicit {
				scripts = append(scripts, w)
				explicit = true
			}
		}
	}
	for _, s := range scripts {
		if !s.lit || sedECommand.MatchString(s.text) || sedSubstituteE(s.text) {
			return true
		}
	}
	return false
}

// loaderVariable reports whether assigning the variable makes a shell or
// the dynamic loader run code other than the command.
// variable asks when a command line sets a variable that makes a shell,
// the loader or a program run other code (FOO=... cmd, export FOO=...,
// env FOO=... cmd).
func (a *analysis) variable(name string) {
	switch {
	case loaderVariable(name):
		a.report(core.Ask, "loader-variable", name+"=...", fmt.Sprintf("setting %s makes a shell or the loader run other code", name))
	case commandVariable(name):
		a.report(core.Ask, "command-variable", name+"=...", fmt.Sprintf("setting %s makes a program run the command it names", name))
	}
}

// commandVariable reports whether a variable names a command that programs
// run (git's pager and ssh, editors, less's preprocessor, ...).
func commandVariable(name string) bool {
	switch name {
	case "BASH_CMDS", "BASH_ALIASES", // the command hash and the aliases: what a name runs
		"PAGER", "MANPAGER", "GIT_PAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
		"GIT_SSH", "GIT_SSH_COMMAND", "GIT_PROXY_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS",
		"GIT_EXEC_PATH", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_ALLOW_PROTOCOL",
		"LESSOPEN", "LESSCLOSE", "BROWSER", "PYTHONPATH", "PERL5LIB", "RUBYLIB", "NODE_PATH",
		"RSYNC_RSH", "CVS_RSH", "PROMPT_COMMAND",
		// Options programs read from the environment, which can name a
		// command to run (found by a red-team test).
		"TAR_OPTIONS", "MAKEFLAGS", "MFLAGS", "GNUMAKEFLAGS", "MAKEFILES", "ZIPOPT", "RSYNC_CONNECT_PROG", "MANOPT",
		"PERL5DB", "VIMINIT", "EXINIT", "MYVIMRC", "GVIMINIT", "LESSKEYIN", "LESSEDIT", "PSQLRC", "SQLITE_HISTORY",
		"npm_config_global", "NPM_CONFIG_GLOBAL", "npm_config_prefix", "NPM_CONFIG_PREFIX", "npm_config_location", "NPM_CONFIG_LOCATION":
		return true
	}
	return strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_")
}

func loaderVariable(name string) bool {
	switch {
	case name == "IFS" || name == "CDPATH" || name == "GLOBIGNORE":
		return false // never passed to commands, but ordinary in a script
	case strings.HasPrefix(name, "AIRLOCK_"):
		return false // Airlock's own: never passed, and runs nothing
	case strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_"):
		return true
	}
	return neverPassed(name)
}

// systemProgram reports whether a path names a program of the system's
// (/bin/rm, /usr/sbin/x): copying or linking one is how a program is put
// under another name.
func systemProgram(p string) bool {
	if strings.HasPrefix(p, "/proc/") && strings.Contains(p, "/cwd/") && strings.Contains(p, "bin/") {
		return true // /proc/self/cwd/../../bin/rm: not to be resolved here
	}
	p = path.Clean(foldCase(p))
	if rest, ok := strings.CutPrefix(p, "/proc/"); ok {
		// /proc/self/root/bin/rm is /bin/rm.
		if _, after, ok := strings.Cut(rest, "/root/"); ok {
			p = path.Clean("/" + after)
		}
	}
	if strings.HasPrefix(p, "../") {
		// ../../../../bin/rm, from deep enough, is /bin/rm; ../../bin/x of
		// a project is its own (found by a regression test: every copy of
		// a monorepo's ../lib file asked). Only a program the system has
		// by that name counts.
		for strings.HasPrefix(p, "../") {
			p = p[3:]
		}
		p = "/" + p
		if !slices.ContainsFunc(binDirs, func(d string) bool { return strings.HasPrefix(p, d) }) || !installed(path.Base(p)) {
			return false
		}
	}
	for _, d := range binDirs {
		if strings.HasPrefix(p+"/", d) && p+"/" != d {
			return true
		}
	}
	for _, d := range libDirs {
		if strings.HasPrefix(p+"/", d) && p+"/" != d && !dataFile(path.Base(p)) {
			return true // a loader, a shared object, a package's helper program
		}
	}
	return false
}

// systemFolder reports whether a path names a folder of the system's
// programs itself (/usr/bin, /bin/, /lib).
func systemFolder(p string) bool {
	if p == "" {
		return false
	}
	p = path.Clean(foldCase(p))
	if p == "/" {
		return true // cp -a / ./r
	}
	p += "/"
	// The folder or one above it: cp -r /usr ./u (found by a code review).
	in := func(d string) bool { return strings.HasPrefix(d, p) }
	return slices.ContainsFunc(binDirs, in) || slices.ContainsFunc(libDirs, in)
}

// fileURLPath is the path a file: URL names (file:///x, FILE:///x,
// file:/x, file://localhost/x), or "" for any other argument.
func fileURLPath(arg string) string {
	if len(arg) < 5 || !strings.EqualFold(arg[:5], "file:") {
		return ""
	}
	// The host does not matter: curl copies file://127.0.0.1/bin/rm too
	// (found by a code review).
	u, err := url.Parse(arg)
	if err != nil {
		return ""
	}
	if u.Path == "" {
		return u.Opaque
	}
	return u.Path
}

// foldCase is p in small letters where the file system ignores case
// (macOS, Windows: /BIN/rm is /bin/rm; found by a code review).
func foldCase(p string) string {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		return strings.ToLower(p)
	}
	return p
}

// dumpsContent are programs that write the bytes of the files they are
// given, as they are, encoded or archived (cat /bin/rm > ./ls).
var dumpsContent = []string{"cat", "tac", "head", "tail", "less", "more", "base64", "base32", "basenc", "xxd", "od", "hexdump",
	"gzip", "gunzip", "zcat", "bzip2", "bzcat", "xz", "xzcat", "unxz", "zstd", "zstdcat", "unzstd", "lz4", "lz4cat", "tar", "cpio",
	"pax", "zip", "7z", "ar", "openssl", "uuencode", "uudecode", "pv", "sed", "awk", "gawk", "mawk", "tr", "cut", "paste", "iconv",
	"busybox", "split", "csplit"}

// dumpsProgram asks for a system program's bytes written out by a program
// that dumps what it is given (cat /bin/rm > ./ls): wherever they go (a
// redirection of this command or of a group around it, a pipe, a
// descriptor opened earlier), they can be written to a file under another
// name (found by two code reviews). Reading a program's bytes is no
// everyday task; one that names no system program runs as before.
func (a *analysis) dumpsProgram(name string, args []word) {
	if !slices.Contains(dumpsContent, name) {
		return
	}
	for _, w := range args {
		p := w.text
		if !w.lit {
			p = strings.Trim(p, `"'`) // a glob: cat /bin/r[m]
		}
		if systemProgram(p) {
			a.report(core.Ask, "program-copied", name+" "+p, fmt.Sprintf("%s writes out the program %s: written to a file under another name it would pass for another command", name, p))
		}
	}
}

// libDirs are the folders of the system's libraries and helper programs.
var libDirs = []string{"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "/nix/store/"}

// binDirs are the folders that hold the system's programs.
var binDirs = []string{"/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/", "/usr/local/bin/", "/usr/local/sbin/", "/usr/libexec/",
	"/usr/local/libexec/", "/opt/homebrew/bin/", "/opt/homebrew/sbin/", "/opt/local/bin/", "/snap/bin/", "/usr/local/opt/",
	"/run/current-system/sw/bin/", "/nix/var/nix/profiles/", "/usr/games/"}

// installed reports whether the system has a program of that name.
func installed(name string) bool {
	for _, d := range []string{"/usr/bin/", "/bin/", "/usr/sbin/", "/sbin/", "/usr/local/bin/"} {
		if fi, err := os.Stat(d + name); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// dataFile reports whether a file under /lib or /usr/lib is data by its
// name (os-release, a package.json), not a program.
func dataFile(base string) bool {
	switch path.Ext(base) {
	case ".json", ".txt", ".md", ".conf", ".cfg", ".ini", ".yaml", ".yml", ".xml", ".html", ".css", ".map", ".toml", ".lock",
		".png", ".svg", ".gz", ".xz", ".zip", ".h", ".mo", ".pc", ".cmake", ".rules", ".service":
		return true
	}
	return base == "os-release"
}

// makeCodeArg reports whether an argument of make gives it makefile code:
// --eval (abbreviated too), -E in a cluster of short options, a makefile
// read from the input, or a variable whose value make expands ($(shell …)).
func makeCodeArg(w word) bool {
	t := w.text
	switch {
	case !w.lit:
		return false
	case strings.HasPrefix(t, "--"):
		key, val, _ := strings.Cut(t[2:], "=")
		return len(key) >= 2 && strings.HasPrefix("eval", key) ||
			(key == "file" || key == "makefile") && (val == "-" || strings.HasPrefix(val, "/dev/") || strings.HasPrefix(val, "/proc/"))
	case strings.HasPrefix(t, "-") && len(t) > 1:
		if i := strings.IndexAny(t, "Ef"); i > 0 {
			if t[i] == 'E' {
				return true
			}
			rest := t[i+1:]
			return rest == "-" || strings.HasPrefix(rest, "/dev/") || strings.HasPrefix(rest, "/proc/")
		}
		return false
	case t == "-":
		return true // the value of a -f before it
	}
	return strings.Contains(t, "$(") || strings.Contains(t, "${")
}

// noteMade records where cp, ln, install, mv, dd and tee put a file (their
// last operand, -t DIR's files, of=, tee's operands), so that running it
// later in the same command line asks: cp /bin/rm ./ls; ./ls -rf x would
// pass for ls (found by a regression test). Copying or linking a program
// of the system asks at once: the name it gets cannot be trusted later.
func (a *analysis) noteMade(name string, args []word) {
	if a.made == nil {
		a.made = map[string]bool{}
	}
	switch name {
	case "cp", "ln", "link", "install", "mv", "rsync", "scp", "dd", "tee", "sponge", "objcopy", "strip", "curl", "wget":
	default:
		return
	}
	for _, w := range args {
		src := w.text
		switch {
		case name == "dd":
			src = strings.TrimPrefix(src, "if=")
		case name == "curl" || name == "wget":
			// curl -o ls file:///bin/rm copies too (found by a regression
			// test), and so do FILE:///bin/rm, file:/bin/rm and
			// file://localhost/bin/rm (found by a code review).
			src = fileURLPath(strings.Trim(src, `"'`))
		case !w.lit:
			// A glob or a quoted part naming a system folder:
			// cp /bin/r? ./ls (found by a regression test).
			src = strings.Trim(src, `"'`)
		}
		if systemProgram(src) && name != "tee" && name != "sponge" {
			a.report(core.Ask, "program-copied", name+" "+src, fmt.Sprintf("%s copies or links the program %s: under another name it would pass for another command", name, src))
		} else if systemFolder(src) && (name == "cp" || name == "rsync" || name == "scp" || name == "ln") {
			// cp -a /usr/bin ./b, then mv b/rm b/ls (found by a code
			// review).
			a.report(core.Ask, "program-copied", name+" "+src, fmt.Sprintf("%s copies or links the folder of programs %s: under other names they would pass for other commands", name, src))
		}
	}
	switch name {
	case "sponge":
		for _, w := range args {
			if !strings.HasPrefix(w.text, "-") {
				a.markMadeWord(w)
			}
		}
		return
	case "strip", "objcopy", "curl", "wget":
		// What they write: -o/--output FILE, wget's -O; objcopy's last
		// operand.
		for i, w := range args {
			switch {
			case (w.text == "-o" || w.text == "--output" || w.text == "-O" || w.text == "--output-document") && i+1 < len(args):
				a.markMadeWord(args[i+1])
			case strings.HasPrefix(w.text, "--output=") || strings.HasPrefix(w.text, "--output-document="):
				_, v, _ := strings.Cut(w.text, "=")
				a.markMadeWord(word{text: v, lit: w.lit})
			case len(w.text) > 2 && (strings.HasPrefix(w.text, "-o") || name == "wget" && strings.HasPrefix(w.text, "-O")):
				a.markMadeWord(word{text: w.text[2:], lit: w.lit})
			}
		}
		if name != "objcopy" || len(args) < 2 {
			return
		}
	}
	if name == "dd" || name == "tee" {
		for _, w := range args {
			switch {
			case !w.lit:
				a.made["*"] = true
			case name == "dd" && strings.HasPrefix(w.text, "of="):
				a.markMade(strings.TrimPrefix(w.text, "of="))
				if climbsToSystem(strings.TrimPrefix(w.text, "of=")) {
					a.report(core.Ask, "system-path", w.text, fmt.Sprintf("%s climbs out of the working folder into a system folder (a device, from deep enough)", w.text))
				}
			case name == "tee" && !strings.HasPrefix(w.text, "-"):
				a.markMade(w.text)
			}
		}
		return
	}
	var operands []string
	dir := ""
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case !w.lit:
			operands = append(operands, "")
		case w.text == "-t" && i+1 < len(args):
			dir = args[i+1].text
			i++
		case strings.HasPrefix(w.text, "--target-directory="):
			dir = strings.TrimPrefix(w.text, "--target-directory=")
		case strings.HasPrefix(w.text, "-") && w.text != "-":
		default:
			operands = append(operands, w.text)
		}
	}
	if dir != "" {
		for _, o := range operands {
			a.markMade(path.Join(dir, path.Base(o)))
		}
		return
	}
	if len(operands) < 2 {
		return
	}
	dest := operands[len(operands)-1]
	if dest == "" {
		a.made["*"] = true // a destination made at run time: any path
		return
	}
	a.markMade(dest)
	for _, o := range operands[:len(operands)-1] {
		a.markMade(path.Join(dest, path.Base(o))) // into a folder
	}
}

// markMade notes a file the command line writes or puts in place, by its
// name: a cd between makes its path unreliable, so the name is what counts,
// in small letters (a file system may not tell LS from ls). One put in a
// folder that is on PATH already (~/.local/bin) may run by its bare name.
func (a *analysis) markMade(p string) {
	if a.made == nil {
		a.made = map[string]bool{}
	}
	a.made[strings.ToLower(path.Base(path.Clean(p)))] = true
	switch strings.TrimSuffix(path.Dir(path.Clean(p)), "/") {
	case "~/.local/bin", "~/bin", "$HOME/.local/bin", "$HOME/bin", "${HOME}/.local/bin", "${HOME}/bin",
		"/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/opt/homebrew/bin":
		a.pathChanged = true
	}
}

// markMadeWord is markMade for a word, any path when it is computed.
func (a *analysis) markMadeWord(w word) {
	if !w.lit {
		if a.made == nil {
			a.made = map[string]bool{}
		}
		a.made["*"] = true
		return
	}
	a.markMade(w.text)
}

// madeHere reports whether a command named by a path (or by a bare name,
// once the command line changed PATH) runs a file of the name this
// command line copied, linked, moved or wrote into place.
func (a *analysis) madeHere(name string) bool {
	if len(a.made) == 0 || !strings.Contains(name, "/") && !a.pathChanged {
		return false
	}
	return a.made["*"] || a.made[strings.ToLower(path.Base(path.Clean(name)))]
}

// gitRunsSomething reports whether git's arguments may make it run a
// command the ask list cannot see: a config key with capitals (keys are
// case-insensitive; the list's are written in small letters), a section
// renamed into another, or the ext:: transport, which runs its URL.
func gitRunsSomething(args []word) bool {
	config := false
	for _, w := range args {
		if !w.lit {
			continue
		}
		t := w.text
		switch {
		case strings.Contains(t, "ext::"):
			return true
		case t == "config":
			config = true
		case config && (t == "--rename-section" || strings.HasPrefix(t, "--rename-section=")):
			return true
		case config && !strings.HasPrefix(t, "-") && strings.Contains(t, ".") && !strings.ContainsAny(t, " /") && strings.ToLower(t) != t:
			return true
		}
	}
	return false
}
