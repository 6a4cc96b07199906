package builtin

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
	"mvdan.cc/sh/v3/syntax"
)

// Bash runs code hidden in a variable's value in more places than eval:
// where the value is evaluated as arithmetic (x='a[$(cmd)]'; echo $((x))),
// where it is taken as a variable's name (${!x}, printf -v "$x", read "$x",
// declare "$x"=1, test -v "$x"), or prompt-expanded (${x@P}, PS4 under
// set -x). A value the checker can read (a literal in the command line) is
// checked as a command where it is written; one made at run time (printf
// -v with escapes, base64 -d, a file read) cannot be, so these places ask
// unless every value the command line can give the variable is a number.
// A variable it never assigns holds what Airlock's reduced environment
// gave it (or nothing), which no agent chose; the ones bash itself fills
// with text (REPLY, MAPFILE, BASH_REMATCH, OPTARG, the positional
// parameters) count as assigned something unknown.

// values is what one classification learns about the variables of the
// command line.
type values struct {
	numeric map[string]bool // assigned a number somewhere
	plain   map[string]bool // assigned a literal variable name (x=HOME), for ${!x}
	other   map[string]bool // assigned anything else, or named by a command that assigns
	integer map[string]bool // declared -i: every value assigned is evaluated as arithmetic
	nameref map[string]string
	refs    []valueRef
}

// valueRef is a place where bash evaluates a variable's value as code.
type valueRef struct {
	name     string
	array    string // the subscripted array, for a name in a subscript
	where    string // how it is evaluated, for the finding
	indirect bool   // ${!x}: the value is taken as a name, not evaluated
}

func newValues() values {
	v := values{numeric: map[string]bool{}, plain: map[string]bool{}, other: map[string]bool{}, integer: map[string]bool{}, nameref: map[string]string{}}
	for _, name := range integerSpecial {
		v.integer[name] = true
	}
	return v
}

// numericSpecial are variables bash itself sets to numbers (unless the
// command line assigns them).
func numericSpecial(name string) bool {
	switch name {
	case "#", "?", "$", "!", "RANDOM", "SRANDOM", "SECONDS", "LINENO", "BASHPID", "PPID", "UID", "EUID",
		"EPOCHSECONDS", "OPTIND", "HISTCMD":
		return true
	}
	return false
}

// integerSpecial are variables bash itself gives the integer attribute:
// every value assigned to one is evaluated as arithmetic, as after
// declare -i (RANDOM='a[$(cmd)]' runs cmd; found by a security test).
var integerSpecial = []string{"RANDOM", "SRANDOM", "SECONDS", "LINENO", "HISTCMD", "OPTIND", "BASHPID", "PPID", "UID", "EUID", "EPOCHSECONDS", "EPOCHREALTIME"}

// environmentSafe reports whether a variable the command line never
// assigns holds something no agent chose: a value of Airlock's reduced
// environment, or one bash sets from the system. Every other one counts as
// unknown (bash's own have capitals only): the ones it fills with text an agent controls (PWD and
// OLDPWD, from the folders it made and entered; DIRSTACK;
// BASH_EXECUTION_STRING and BASH_COMMAND, the command line itself with its
// comments; FUNCNAME, BASH_SOURCE, BASH_ALIASES, BASH_CMDS, ...) and the
// ones not thought of alike. (A list of the unsafe ones missed PWD and
// BASH_EXECUTION_STRING; found by a security test.)
func environmentSafe(name string) bool {
	if strings.ToUpper(name) != name {
		// Bash sets no variable with a small letter in its name: one the
		// command line never assigns is unset, or one of the environment
		// the person allowed.
		return true
	}
	switch name {
	case "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TERM", "TZ", "TMPDIR", "SHELL",
		"HOSTNAME", "HOSTTYPE", "MACHTYPE", "OSTYPE", "BASH_VERSION", "SHLVL", "BASH_SUBSHELL",
		"PIPESTATUS", "GROUPS", "BASH_LINENO", "COLUMNS", "LINES":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}

// textSpecial reports whether bash itself fills a variable with text that
// may come from input or arguments: it is never known.
func textSpecial(name string) bool {
	switch name {
	case "REPLY", "MAPFILE", "BASH_REMATCH", "OPTARG", "_", "BASH_ARGV", "COPROC", "READLINE_LINE", "@", "*":
		return true
	}
	return name != "" && name[0] >= '0' && name[0] <= '9' // $1, $2, …
}

// subscriptCode reports whether a literal variable name (a[$i], as given
// to printf -v, read, declare, test -v) holds an expansion: bash expands
// it when it evaluates the subscript, after this check.
func subscriptCode(s string) bool {
	i := strings.IndexByte(s, '[')
	return i >= 0 && strings.ContainsAny(s[i:], "$`")
}

// numericCommand reports whether a command substitution certainly prints a
// number: $(nproc), $(wc -l < f), $(date +%s), $(grep -c x f), ...
func numericCommand(cs *syntax.CmdSubst) bool {
	if len(cs.Stmts) != 1 || cs.Stmts[0].Negated || cs.Stmts[0].Background {
		return false
	}
	cmd := cs.Stmts[0].Cmd
	// A pipeline prints what its last command prints: $(ls | wc -l).
	for {
		b, ok := cmd.(*syntax.BinaryCmd)
		if !ok || b.Op != syntax.Pipe && b.Op != syntax.PipeAll {
			break
		}
		cmd = b.Y.Cmd
	}
	call, ok := cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return false
	}
	var args []string
	for _, w := range call.Args {
		s, ok := literal(w)
		if !ok {
			return false
		}
		args = append(args, s)
	}
	rest := args[1:]
	has := func(opts ...string) bool {
		for _, a := range rest {
			for _, o := range opts {
				if a == o || len(o) == 2 && isFlagCluster(a) && strings.IndexByte(a[1:], o[1]) >= 0 {
					return true
				}
			}
		}
		return false
	}
	switch normalName(args[0]) {
	case "nproc", "wc":
		return true
	case "grep", "egrep", "fgrep", "rg":
		return has("-c", "--count")
	case "date":
		for _, a := range rest {
			if a == "+%s" || a == "+%N" || a == "+%s%N" {
				return true
			}
		}
	case "id":
		return has("-u", "-g")
	case "stat":
		return slices.Contains(rest, "%s") || slices.Contains(rest, "--format=%s") || slices.Contains(rest, "-c%s")
	case "git":
		return len(rest) > 0 && rest[0] == "rev-list" && slices.Contains(rest, "--count")
	case "seq":
		return !has("-f", "-s", "--format", "--separator")
	case "getconf":
		return true
	}
	return false
}

// numericWord reports whether a word's value is certainly a number: a
// literal integer, $((…)), ${#x}, or a command that prints one.
func numericWord(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	if s, ok := literal(w); ok {
		return isNumber(s)
	}
	parts := w.Parts
	if len(parts) == 1 {
		if dq, ok := parts[0].(*syntax.DblQuoted); ok {
			parts = dq.Parts
		}
	}
	if len(parts) != 1 {
		return false
	}
	switch p := parts[0].(type) {
	case *syntax.ArithmExp:
		return true
	case *syntax.ParamExp:
		return p.Length && p.Param != nil
	case *syntax.CmdSubst:
		return numericCommand(p)
	}
	return false
}

// isName reports whether s is a shell variable name.
func isName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// isNumber reports whether s is a literal integer bash reads as it is.
func isNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// leadingName is the variable name an argument such as x, x=1 or x[2]=1
// starts with, or "".
func leadingName(s string) string {
	end := strings.IndexAny(s, "=[+")
	if end < 0 {
		end = len(s)
	}
	if isName(s[:end]) {
		return s[:end]
	}
	return ""
}

// arith records the variables an arithmetic expression reads (array: the
// array it subscripts, if any). Names assigned by the expression (i=0,
// i++) hold numbers.
func (a *analysis) arith(x syntax.ArithmExpr, array string) {
	if x == nil {
		return
	}
	syntax.Walk(x, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			// The command itself is checked by the walk; its output is
			// evaluated here, and may hold a[$(cmd)].
			if numericCommand(n) {
				return false
			}
			a.report(core.Ask, "runtime-code", "$(("+wordSource(&syntax.Word{Parts: []syntax.WordPart{n}})+"))",
				"the output of a command is evaluated as arithmetic, where bash runs the command substitutions it may hold (a[$(cmd)])")
			return false
		case *syntax.ParamExp:
			// Its subscript and slice are visited by the walk itself.
			if n.Param != nil && !n.Length {
				a.vals.refs = append(a.vals.refs, valueRef{name: n.Param.Value, array: array, where: "arithmetic"})
			}
			return false
		case *syntax.BinaryArithm:
			if n.Op >= syntax.Assgn && n.Op <= syntax.ShrAssgn {
				if w, ok := n.X.(*syntax.Word); ok {
					if s, ok := literal(w); ok && isName(s) {
						a.vals.numeric[s] = true
					}
				}
			}
		case *syntax.UnaryArithm:
			if n.Op == syntax.Inc || n.Op == syntax.Dec {
				if w, ok := n.X.(*syntax.Word); ok {
					if s, ok := literal(w); ok && isName(s) {
						a.vals.numeric[s] = true
					}
				}
			}
		case *syntax.SglQuoted:
			// Quoted text evaluated as arithmetic (let 'x=a[$y]'): bash
			// expands what is in it.
			if strings.ContainsAny(n.Value, "$`") {
				a.report(core.Ask, "runtime-code", "'"+truncate(n.Value)+"'",
					"quoted text evaluated as arithmetic holds an expansion, which bash expands and evaluates (a[$(cmd)] runs cmd)")
			}
			a.arithNames(n.Value, array)
		case *syntax.Lit:
			a.arithNames(n.Value, array)
		}
		return true
	})
}

// arrayIndex finds the [index]= of a compound array value.
var arrayIndex = regexp.MustCompile(`\[([^\]]*)\]=`)

// subscriptNames records the names in the subscript of a literal variable
// name given to a builtin (unset 'a[x]', printf -v 'a[x]', test -v 'a[x]',
// declare 'a[x]=1', declare -n r='a[x]'): bash evaluates the subscript as
// arithmetic, so x's value is evaluated too, and b[$(cmd)] in it runs cmd
// (found by a regression test: unset "a[x]" with x made at run time was
// allowed).
func (a *analysis) subscriptNames(name string) {
	open := strings.IndexByte(name, '[')
	if open < 0 {
		return
	}
	end := strings.LastIndexByte(name, ']')
	if end < open {
		end = len(name)
	}
	a.arithNames(name[open+1:end], leadingName(name))
}

// arithNames records the bare names in arithmetic text: x in $((x + 1)).
// Numbers (0x1f) and the digits of a base (16#ff) are no names.
func (a *analysis) arithNames(s, array string) {
	{
		{
			for i := 0; i < len(s); {
				c := s[i]
				if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
					j := i
					for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
						j++
					}
					if isName(s[i:j]) && (i == 0 || s[i-1] != '#') {
						a.vals.refs = append(a.vals.refs, valueRef{name: s[i:j], array: array, where: "arithmetic"})
					}
					i = j
					continue
				}
				i++
			}
		}
	}
}

// valueNode records what node n (visited by the walk) tells about
// variables: assignments, arithmetic, indirection.
func (a *analysis) valueNode(n syntax.Node) {
	switch n := n.(type) {
	case *syntax.ArithmExp:
		a.arith(n.X, "")
	case *syntax.ArithmCmd:
		a.arith(n.X, "")
	case *syntax.CStyleLoop:
		a.arith(n.Init, "")
		a.arith(n.Cond, "")
		a.arith(n.Post, "")
	case *syntax.LetClause:
		for _, x := range n.Exprs {
			a.arith(x, "")
		}
	case *syntax.ParamExp:
		if n.Param == nil {
			return
		}
		name := n.Param.Value
		a.arith(n.Index, name)
		if n.Slice != nil {
			a.arith(n.Slice.Offset, "")
			a.arith(n.Slice.Length, "")
		}
		if n.Excl && n.Names == 0 && !allElements(n.Index) {
			a.vals.refs = append(a.vals.refs, valueRef{name: name, where: "indirection (${!" + name + "})", indirect: true})
		}
		if n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) {
			a.assigned(name, n.Exp.Word) // ${x:=value}
		}
		if n.Exp != nil && n.Exp.Op == syntax.OtherParamOps {
			if op, ok := literal(n.Exp.Word); ok && op == "P" {
				a.vals.refs = append(a.vals.refs, valueRef{name: name, where: "prompt expansion (${" + name + "@P})"})
			}
		}
	case *syntax.ArrayElem:
		a.arith(n.Index, "")
	case *syntax.Assign:
		if n.Name == nil {
			return
		}
		a.arith(n.Index, n.Name.Value)
		if n.Naked {
			return // declare x: no value
		}
		if n.Array != nil {
			a.vals.other[n.Name.Value] = true
			return
		}
		a.assigned(n.Name.Value, n.Value)
	case *syntax.DeclClause:
		a.declare(n)
	case *syntax.WordIter:
		if n.Name == nil {
			return
		}
		// A loop variable is assigned each item: one that names commands
		// (BASH_CMDS, GIT_SSH_COMMAND), PATH or PS4 is checked as any
		// assignment (found by a third regression test).
		if name := n.Name.Value; name == "PATH" || promptVar(name) || commandVariable(name) || loaderVariable(name) {
			a.variable(name)
			if name == "PATH" {
				a.pathChanged = true
			}
			if promptVar(name) {
				a.report(core.Ask, "runtime-code", "for PS4 in …", "PS4 is set by a loop; with set -x bash runs the command substitutions in it")
			}
			if name == "BASH_CMDS" || name == "BASH_ALIASES" || name == "PATH" {
				a.report(core.Ask, "command-variable", "for "+name+" in …", fmt.Sprintf("a loop sets %s, which decides what command names run", name))
			}
		}
		for _, w := range n.Items {
			if !numericWord(w) {
				a.vals.other[n.Name.Value] = true
				return
			}
		}
		if len(n.Items) > 0 {
			a.vals.numeric[n.Name.Value] = true
		} else {
			a.vals.other[n.Name.Value] = true // for x; do: the positional parameters
		}
	case *syntax.BinaryTest:
		switch n.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			// [[ x -eq y ]] evaluates both sides as arithmetic.
			for _, x := range []syntax.TestExpr{n.X, n.Y} {
				if w, ok := x.(*syntax.Word); ok {
					a.arith(w, "")
				}
			}
		}
	case *syntax.UnaryTest:
		if w, ok := n.X.(*syntax.Word); ok && n.Op == syntax.TsVarSet {
			a.nameArgument("[[ -v ]]", w)
		}
	}
}

// allElements reports whether a subscript is [@] or [*] (${!a[@]} lists
// keys; it is no indirection).
func allElements(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	if !ok {
		return false
	}
	s, ok := literal(w)
	return ok && (s == "@" || s == "*")
}

// declare handles declare, local, typeset, export, readonly: a name made
// at run time (or a subscript with an expansion), a nameref, and -i
// (integer: every value assigned later is evaluated as arithmetic too).
func (a *analysis) declare(d *syntax.DeclClause) {
	var flags string
	for _, as := range d.Args {
		if as.Naked && as.Name == nil && as.Value != nil {
			s, ok := literal(as.Value)
			switch {
			case ok && strings.HasPrefix(s, "-"):
				flags += s[1:]
			case ok && !subscriptCode(s):
				a.subscriptNames(strings.SplitN(s, "=", 2)[0])
				if _, val, _ := strings.Cut(s, "="); strings.HasPrefix(val, "(") {
					// declare -a 'b=([x]=1)': each [x] is evaluated too
					// (found by a regression test).
					for _, m := range arrayIndex.FindAllStringSubmatch(val, -1) {
						a.arithNames(m[1], leadingName(s))
					}
				}
				if name := leadingName(s); name != "" {
					if _, val, hasVal := strings.Cut(s, "="); hasVal { // declare 'x=1'
						a.assigned(name, &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: val}}})
					}
				}
			default:
				a.report(core.Ask, "runtime-code", d.Variant.Value+" "+wordSource(as.Value),
					"the variable's name is made when the command runs, or its subscript holds an expansion, which bash evaluates ("+d.Variant.Value+` "a[$(cmd)]"=1 runs cmd)`)
			}
		}
	}
	for _, as := range d.Args {
		name := ""
		if as.Name != nil {
			name = as.Name.Value
		} else if as.Naked && as.Value != nil {
			if s, ok := literal(as.Value); ok && !strings.HasPrefix(s, "-") {
				name = leadingName(s)
			}
		}
		if name == "" {
			continue
		}
		if strings.Contains(flags, "i") {
			a.vals.integer[name] = true
			if as.Name != nil && !as.Naked && as.Value != nil {
				a.arith(as.Value, "")
			}
		}
		if strings.Contains(flags, "n") && (as.Naked || as.Value == nil) {
			// declare -n h; h=BASH_CMDS: the reference's target is set
			// later, by an assignment the checker cannot follow.
			a.report(core.Ask, "runtime-code", d.Variant.Value+" -n "+name,
				"a reference whose target is set later: what is written through it cannot be checked")
		}
		if strings.Contains(flags, "n") && as.Name != nil && !as.Naked && as.Value != nil {
			target, ok := literal(as.Value)
			switch {
			case !ok || subscriptCode(target):
				a.report(core.Ask, "runtime-code", d.Variant.Value+" -n "+name+"="+wordSource(as.Value),
					"a reference to a variable whose name is made when the command runs, or whose subscript holds an expansion: bash evaluates it")
			case leadingName(target) != "":
				a.subscriptNames(target)
				t := leadingName(target)
				a.vals.nameref[name] = t
				if t == "PATH" {
					a.pathChanged = true // what is written through it sets PATH
				}
				a.variable(t) // a reference to PS4, BASH_ENV, GIT_PAGER: writing it sets them
				if promptVar(t) {
					a.report(core.Ask, "runtime-code", d.Variant.Value+" -n "+name+"=PS4", "a reference to PS4: what is assigned through it is prompt-expanded under set -x")
				}
			}
		}
	}
}

// nameArgument checks an argument bash takes as a variable's name: one
// made at run time asks, a literal one may be assigned anything.
func (a *analysis) nameArgument(command string, w *syntax.Word) {
	if w == nil {
		return
	}
	if s, ok := literal(w); ok && !subscriptCode(s) {
		a.subscriptNames(s)
		a.assignedByCommand(s)
		return
	}
	a.report(core.Ask, "runtime-code", command+" "+wordSource(w),
		"the variable's name is made when the command runs, and bash evaluates a subscript in it (a[$(cmd)] runs cmd)")
}

// assignedByCommand notes that a command may assign the variable an
// argument names (read x, printf -v x, mapfile x, getopts s x): its value
// is not known.
func (a *analysis) assignedByCommand(arg string) {
	name := leadingName(arg)
	if name == "" {
		return
	}
	if name == "PATH" {
		a.pathChanged = true
	}
	a.vals.other[name] = true
	a.variable(name) // printf -v GIT_EXTERNAL_DIFF …, exported by set -a
	if promptVar(name) {
		a.report(core.Ask, "runtime-code", "PS4", "a command sets PS4 to a value made when it runs; with set -x bash runs the command substitutions in it")
	}
}

// nameArguments checks the arguments of a builtin that assigns variables
// named by its arguments (read, printf -v, mapfile, getopts, unset, test
// -v, wait -p): every literal argument may name one; a computed name asks.
func (a *analysis) nameArguments(inv *invocation) {
	for _, w := range inv.args {
		if w.lit {
			a.assignedByCommand(w.text)
		}
	}
	var names []word // the arguments bash takes as names
	args := inv.args
	switch inv.name {
	case "read":
		names = optionOperands(args, "dinNptu", "a", true)
	case "mapfile", "readarray":
		names = optionOperands(args, "dnOstuCc", "", true)
	case "printf":
		names = optionOperands(args, "", "v", false)
	case "wait":
		names = optionOperands(args, "", "p", false)
	case "test", "[":
		for i, w := range args {
			if w.lit && w.text == "-v" && i+1 < len(args) {
				names = append(names, args[i+1])
			}
		}
	case "unset":
		names = optionOperands(args, "", "", true)
	case "getopts":
		if ops := optionOperands(args, "", "", true); len(ops) >= 2 {
			names = ops[1:2]
		}
	}
	for _, w := range names {
		if w.lit && !subscriptCode(w.text) {
			a.subscriptNames(w.text)
			a.assignedByCommand(w.text) // printf -vx: the name is in the option
			continue
		}
		a.report(core.Ask, "runtime-code", inv.text,
			fmt.Sprintf("%s is given a variable name made when the command runs, or a subscript holding an expansion, which bash evaluates (a[$(cmd)] runs cmd)", inv.name))
		return
	}
}

// optionOperands returns the arguments of a builtin that name variables:
// the values of the options in nameOpts, and (when operands) the operands
// after the options; the options in valueOpts take a value that is no
// name.
func optionOperands(args []word, valueOpts, nameOpts string, operands bool) []word {
	var out []word
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.lit || !strings.HasPrefix(w.text, "-") || w.text == "-" {
			if operands {
				out = append(out, args[i:]...)
			}
			return out
		}
		if w.text == "--" {
			if operands {
				out = append(out, args[i+1:]...)
			}
			return out
		}
		// A cluster such as -rp: the first option taking a value takes the
		// rest of the cluster, or the next argument.
		for j := 1; j < len(w.text); j++ {
			c := w.text[j]
			if strings.IndexByte(valueOpts, c) < 0 && strings.IndexByte(nameOpts, c) < 0 {
				continue
			}
			var v word
			if j+1 < len(w.text) {
				v = word{text: w.text[j+1:], lit: true}
			} else if i+1 < len(args) {
				i++
				v = args[i]
			}
			if strings.IndexByte(nameOpts, c) >= 0 {
				out = append(out, v)
			}
			break
		}
	}
	return out
}

// nameBuiltin reports whether a builtin assigns or tests variables named
// by its arguments.
func nameBuiltin(name string) bool {
	switch name {
	case "read", "mapfile", "readarray", "printf", "wait", "test", "[", "unset", "getopts":
		return true
	}
	return false
}

// checkValues asks for each place where a variable's value is evaluated
// as code and the variable may hold something other than a number.
func (a *analysis) checkValues() {
	v := &a.vals
	// Writing through a nameref writes its target.
	for changed := true; changed; {
		changed = false
		for ref, target := range v.nameref {
			for _, m := range []map[string]bool{v.other, v.plain} {
				if m[ref] && !m[target] {
					m[target], changed = true, true
				}
			}
		}
	}
	for name := range v.integer {
		if v.other[name] || v.plain[name] {
			a.report(core.Ask, "runtime-code", "$"+name,
				fmt.Sprintf("%s has the integer attribute, so bash evaluates every value assigned to it as arithmetic, and it is given one made when the command runs", name))
		}
	}
	for _, r := range v.refs {
		if r.indirect {
			if v.other[r.name] || textSpecial(r.name) {
				a.reportRef(r)
			}
			continue
		}
		switch {
		case textSpecial(r.name), v.other[r.name], v.plain[r.name]:
			a.reportRef(r)
		case numericSpecial(r.name), v.numeric[r.name], environmentSafe(r.name):
			// A number, or never assigned and what Airlock's
			// environment or the system gave it.
		default:
			a.reportRef(r)
		}
	}
}

func (a *analysis) reportRef(r valueRef) {
	a.report(core.Ask, "runtime-code", "$"+r.name,
		fmt.Sprintf("the value of %s is evaluated in %s, where bash runs the command substitutions it may hold (a[$(cmd)]); what it holds is known only when the command runs", r.name, r.where))
}

// assigned records the assignment of value to the variable name.
func (a *analysis) assigned(name string, value *syntax.Word) {
	if name == "PATH" {
		a.pathChanged = true
	}
	v, lit := "", false
	if value != nil {
		v, lit = literal(value)
	} else {
		lit = true // x=: empty
	}
	switch {
	case numericWord(value) || lit && v == "":
		a.vals.numeric[name] = true
	case lit && isName(v):
		a.vals.plain[name] = true
	default:
		a.vals.other[name] = true
	}
	if promptVar(name) && !lit {
		a.report(core.Ask, "runtime-code", "PS4=...", "PS4 is set to a value made when the command runs; with set -x bash runs the command substitutions in it")
	}
}

// promptVar reports whether bash expands a variable as a prompt, running
// the command substitutions in it: PS4 under set -x, PS0 to PS2 in an
// interactive shell (bash -i; found by a red-team test).
func promptVar(name string) bool {
	return name == "PS0" || name == "PS1" || name == "PS2" || name == "PS4"
}
