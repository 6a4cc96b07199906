package builtin

import (
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/backend/core"
)

// Rule is a compiled command rule of the deny or ask list.
//
// A rule is a command name followed by what its arguments must contain,
// separated by spaces:
//
//	rm {-r,-R,--recursive} {-f,--force}   rm with a recursive and a force flag
//	git push {--force,-f,+*}               git with the word push and a force
//	dd of=/dev/*                           dd with an argument matching of=/dev/*
//	{shutdown,reboot}                      any call of these commands
//	curl | {sh,bash}                       a pipeline in which curl feeds a shell
//	> /dev/sd*                             output redirected to a matching file
//
// The name is compared with the command's base name, lower-cased (so
// /bin/rm, \rm and r""m are all rm). {a,b} gives alternatives; * matches any
// run of characters and ? one character. A token -x (one letter) matches the
// flag anywhere in a cluster (-rf, -fr, -r -f); --name matches --name,
// --name=value and any abbreviation (--rec); another token matches a whole
// argument. Flags after -- do not count. When the arguments are computed at
// run time (a variable, a glob, xargs) and might complete a rule, the rule
// counts as possibly matching, and the command asks.
type Rule struct {
	Text string
	segs []segment
}

// segment is one command (or redirection) of a rule.
type segment struct {
	redirect []string   // glob alternatives for "> TARGET"; nil for a command
	names    []string   // glob alternatives for the command name
	tokens   [][]string // each token's alternatives
}

// maxAlternatives bounds what one token's {a,b} expansion may produce.
const maxAlternatives = 256

// ParseRule compiles a command rule; see Rule for the syntax.
func ParseRule(text string) (*Rule, error) {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return nil, core.Errorf(core.EInvalid, "empty rule")
	}
	r := &Rule{Text: strings.Join(fields, " ")}
	var cur []string
	flush := func() error {
		if len(cur) == 0 {
			return core.Errorf(core.EInvalid, "a | with no command on one side")
		}
		seg, err := parseSegment(cur)
		if err != nil {
			return err
		}
		r.segs = append(r.segs, seg)
		cur = nil
		return nil
	}
	for _, f := range fields {
		if f == "|" {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		cur = append(cur, f)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(r.segs) > 1 {
		for _, s := range r.segs {
			if s.redirect != nil {
				return nil, core.Errorf(core.EInvalid, "a redirection rule (> FILE) cannot be part of a pipeline")
			}
		}
	}
	return r, nil
}

func parseSegment(fields []string) (segment, error) {
	if fields[0] == ">" {
		if len(fields) != 2 {
			return segment{}, core.Errorf(core.EInvalid, "a redirection rule is > and one file pattern, e.g. > /dev/sd*")
		}
		alts, err := alternatives(fields[1])
		if err != nil {
			return segment{}, err
		}
		return segment{redirect: alts}, nil
	}
	if strings.HasPrefix(fields[0], "-") {
		return segment{}, core.Errorf(core.EInvalid, "a rule starts with a command name, not the flag %s", fields[0])
	}
	names, err := alternatives(fields[0])
	if err != nil {
		return segment{}, err
	}
	for i, n := range names {
		names[i] = strings.ToLower(n)
	}
	seg := segment{names: names}
	for _, f := range fields[1:] {
		alts, err := alternatives(f)
		if err != nil {
			return segment{}, err
		}
		seg.tokens = append(seg.tokens, alts)
	}
	return seg, nil
}

// alternatives expands {a,b} groups (nested groups too) into the list of
// alternatives, refusing malformed or empty ones.
func alternatives(s string) ([]string, error) {
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		return nil, core.Errorf(core.EInvalid, "%q is not valid text", s)
	}
	open := strings.IndexByte(s, '{')
	if open < 0 {
		if strings.ContainsRune(s, '}') {
			return nil, core.Errorf(core.EInvalid, "%q has a } without {", s)
		}
		return []string{s}, nil
	}
	depth, end := 0, -1
	var cuts []int
	for i := open; i < len(s) && end < 0; i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				end = i
			}
		case ',':
			if depth == 1 {
				cuts = append(cuts, i)
			}
		}
	}
	if end < 0 {
		return nil, core.Errorf(core.EInvalid, "%q has a { without }", s)
	}
	prefix, suffix := s[:open], s[end+1:]
	var parts []string
	start := open + 1
	for _, c := range append(cuts, end) {
		parts = append(parts, s[start:c])
		start = c + 1
	}
	var out []string
	for _, p := range parts {
		if p == "" {
			return nil, core.Errorf(core.EInvalid, "%q has an empty alternative", s)
		}
		more, err := alternatives(prefix + p + suffix)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
		if len(out) > maxAlternatives {
			return nil, core.Errorf(core.EInvalid, "%q expands to more than %d alternatives", s, maxAlternatives)
		}
	}
	return out, nil
}

// matchName reports whether the command name matches the segment.
func (s *segment) matchName(name string) bool {
	for _, n := range s.names {
		if glob(n, name) {
			return true
		}
	}
	return false
}

// match reports whether inv matches the segment: yes when its literal
// arguments meet every token, maybe when they do not but arguments computed
// at run time could.
func (s *segment) match(inv *invocation) (yes, maybe bool) {
	if !inv.nameLit || !s.matchName(inv.name) {
		return false, false
	}
	all := true
	args := inv.args
	if inv.name == "find" || inv.name == "kill" {
		// find's -- ends only its -H/-L/-P options, the expression
		// (-delete, -exec) still follows; kill -- -1 is pid -1 still
		// (found by a red-team test).
		args = slices.DeleteFunc(slices.Clone(args), func(w word) bool { return w.lit && w.text == "--" })
	}
	for _, alts := range s.tokens {
		if !tokenMet(alts, args) {
			all = false
			break
		}
	}
	if all {
		return true, false
	}
	if !inv.open && len(s.tokens) > 0 && s.subcommandRulesOut(inv) {
		return false, false
	}
	dynamic := inv.dynamicArgs()
	if sub := subcommandAt(inv); sub >= 0 && inv.name == "git" {
		// What comes before git's subcommand is its global options, each
		// value one word (subcommandAt): only what follows could meet the
		// rule (git -C "$repo" pull --ff-only cannot be --upload-pack).
		dynamic = slices.ContainsFunc(inv.args[sub+1:], func(w word) bool { return !w.lit })
	}
	return false, inv.open || dynamic
}

// subcommandRulesOut reports whether inv's literal subcommand (its first
// argument that is no flag, written out) rules the segment out whatever
// its computed arguments hold: a rule for git push cannot match git
// commit -m "$(cat msg)". For git, a rule on a global option (git -c)
// cannot match either once the subcommand is written out with nothing
// computed before it. (Found by a regression test: every git command with
// a computed argument asked.)
func (s *segment) subcommandRulesOut(inv *invocation) bool {
	sub := subcommandAt(inv)
	if sub < 0 {
		return false
	}
	first := s.tokens[0]
	flagRule := false
	for _, alt := range first {
		if strings.HasPrefix(alt, "-") {
			flagRule = true
		}
	}
	if flagRule {
		return inv.name == "git"
	}
	for _, alt := range first {
		if glob(alt, inv.args[sub].text) {
			return false
		}
	}
	return true
}

// gitValueOptions are git's global options that take the next argument as
// their value; gitGlobalFlags those that take none.
var (
	gitValueOptions = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--list-cmds", "--attr-source"}
	gitGlobalFlags  = []string{"-p", "-P", "--paginate", "--no-pager", "--bare", "--no-replace-objects", "--no-lazy-fetch", "--no-optional-locks",
		"--no-advice", "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs"}
)

// subcommandAt returns the index of inv's subcommand, written out, or -1
// when it cannot be told: an argument computed before it, or an option
// before it whose value could be the word taken for the subcommand. Only
// git's own global options are known (git -C . push: the subcommand is
// push, not the -C's "."; found by a code review); any other program's
// option before the first word leaves its subcommand unknown.
func subcommandAt(inv *invocation) int {
	for i := 0; i < len(inv.args); i++ {
		a := inv.args[i]
		if !a.lit {
			// Computed before the subcommand; only the value of a git
			// global option written --git-dir="$d" may be, as one word.
			if inv.name != "git" || a.split || !gitOptionWithValue(a.text) {
				return -1
			}
			continue
		}
		if !strings.HasPrefix(a.text, "-") {
			return i
		}
		if inv.name != "git" {
			return -1
		}
		name, _, withValue := strings.Cut(a.text, "=")
		switch {
		case slices.Contains(gitValueOptions, a.text):
			// Its value is the next argument: one word, written out or
			// quoted (git -C $(cat f) status may be -C . -c core.fsmonitor=…
			// once split; found by a regression test).
			if i+1 < len(inv.args) && inv.args[i+1].split {
				return -1
			}
			i++
		case withValue && slices.Contains(gitValueOptions, name), withValue && name == "--exec-path",
			slices.Contains(gitGlobalFlags, a.text), a.text == "--exec-path":
		default:
			return -1
		}
	}
	return -1
}

// gitOptionWithValue reports whether a word, as written, is a git global
// option naming a place with its value after "=" (--git-dir="$d/.git"):
// the only ones whose value may be computed. Any other computed one
// (--config-env="$x" may name core.fsmonitor; found by a code review)
// leaves the subcommand unknown.
func gitOptionWithValue(src string) bool {
	name, _, ok := strings.Cut(src, "=")
	return ok && slices.Contains([]string{"--git-dir", "--work-tree", "--namespace"}, name)
}

// tokenMet reports whether some literal argument meets one of alts.
func tokenMet(alts []string, args []word) bool {
	afterDashes := false
	for _, a := range args {
		if !a.lit {
			continue
		}
		if a.text == "--" && !afterDashes {
			afterDashes = true
			continue
		}
		for _, alt := range alts {
			if argMatches(alt, a.text, afterDashes) {
				return true
			}
		}
	}
	return false
}

// argMatches matches one rule token against one literal argument.
func argMatches(tok, arg string, afterDashes bool) bool {
	switch {
	case strings.HasPrefix(tok, "--") && len(tok) > 2:
		if afterDashes || !strings.HasPrefix(arg, "--") || len(arg) == 2 {
			return false
		}
		name := tok[2:]
		key, _, _ := strings.Cut(arg[2:], "=")
		if hasGlob(name) {
			return glob(name, key)
		}
		// GNU programs accept any unambiguous abbreviation of a long flag.
		return key != "" && strings.HasPrefix(name, key)
	case len(tok) == 2 && tok[0] == '-':
		if afterDashes {
			return false
		}
		if arg == tok {
			return true
		}
		c := tok[1]
		// In a cluster (-rf), or with its value attached (-c'code').
		return isLetter(c) && strings.IndexByte(leadingFlags(arg), c) >= 0
	case strings.HasPrefix(tok, "-") && len(tok) > 2:
		if afterDashes {
			return false
		}
		key, _, _ := strings.Cut(arg, "=")
		return glob(tok, arg) || glob(tok, key)
	default:
		return glob(tok, arg) || glob(tok, cleanPathArg(arg))
	}
}

// cleanPathArg cleans an absolute path in an argument (of=//dev/sda,
// /tmp/../dev/sda), so that a rule naming /dev/* sees where it points.
func cleanPathArg(arg string) string {
	if k, v, ok := strings.Cut(arg, "="); ok && strings.HasPrefix(v, "/") {
		return k + "=" + cleanAbs(v)
	}
	if strings.HasPrefix(arg, "/") {
		return cleanAbs(arg)
	}
	return arg
}

// cleanAbs cleans an absolute path, /proc/self/root/dev/sda being
// /dev/sda (found by a red-team test).
func cleanAbs(p string) string {
	p = path.Clean(p)
	if rest, ok := strings.CutPrefix(p, "/proc/"); ok {
		if _, after, ok := strings.Cut(rest, "/root/"); ok {
			p = path.Clean("/" + after)
		}
	}
	return p
}

// climbsToSystem reports whether a relative path climbs out of the working
// folder into one of the system's (../../../dev/sda: from deep enough it
// is /dev/sda; found by a red-team test).
func climbsToSystem(p string) bool {
	p = path.Clean(p)
	if !strings.HasPrefix(p, "../") {
		return false
	}
	for strings.HasPrefix(p, "../") {
		p = p[3:]
	}
	return strings.HasPrefix(p, "dev/") || strings.HasPrefix(p, "proc/") || strings.HasPrefix(p, "sys/")
}

// isFlagCluster reports whether arg is a cluster of short flags such as -rf.
func isFlagCluster(arg string) bool {
	if len(arg) < 2 || arg[0] != '-' || arg[1] == '-' {
		return false
	}
	for i := 1; i < len(arg); i++ {
		if !isLetter(arg[i]) {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func hasGlob(s string) bool { return strings.ContainsAny(s, "*?") }

// glob matches s against pattern, where * matches any run of characters
// (slashes included) and ? one character.
func glob(pattern, s string) bool {
	px, sx := 0, 0
	nextPx, nextSx := -1, -1
	for px < len(pattern) || sx < len(s) {
		if px < len(pattern) {
			switch c := pattern[px]; c {
			case '*':
				nextPx, nextSx = px, sx+1
				px++
				continue
			case '?':
				if sx < len(s) {
					_, size := utf8.DecodeRuneInString(s[sx:])
					px++
					sx += size
					continue
				}
			default:
				if sx < len(s) && s[sx] == c {
					px++
					sx++
					continue
				}
			}
		}
		if nextSx > 0 && nextSx <= len(s) {
			px, sx = nextPx, nextSx
			continue
		}
		return false
	}
	return true
}
