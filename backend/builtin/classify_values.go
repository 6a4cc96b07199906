package builtin

import (
	"fmt"
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
// unless every value the variable can hold is a number.

// values is what one classification learns about the variables of the
// command line.
type values struct {
	numeric map[string]bool // assigned a number somewhere
	plain   map[string]bool // assigned a literal variable name (x=HOME), for ${!x}
	other   map[string]bool // assigned anything else, or named by a command that assigns
	assoc   map[string]bool // declared -A: its subscripts are strings, not arithmetic
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
	return values{numeric: map[string]bool{}, plain: map[string]bool{}, other: map[string]bool{}, assoc: map[string]bool{}}
}

// numericSpecial are variables bash itself sets to numbers.
func numericSpecial(name string) bool {
	switch name {
	case "#", "?", "$", "!", "RANDOM", "SRANDOM", "SECONDS", "LINENO", "BASHPID", "PPID", "UID", "EUID",
		"EPOCHSECONDS", "OPTIND", "HISTCMD":
		return true
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
		case *syntax.Lit:
			// Bare names: x in $((x + 1)). Skip numbers (0x1f) and the
			// digits of a base (16#ff).
			s := n.Value
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
		return true
	})
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
		v, lit := "", false
		if n.Value != nil {
			v, lit = literal(n.Value)
		}
		switch {
		case n.Array != nil:
			a.vals.other[n.Name.Value] = true
		case lit && isNumber(v) || arithmeticOnly(n.Value):
			a.vals.numeric[n.Name.Value] = true
		case lit && isName(v):
			a.vals.plain[n.Name.Value] = true
		default:
			a.vals.other[n.Name.Value] = true
		}
		if n.Name.Value == "PS4" && !lit {
			a.report(core.Ask, "runtime-code", "PS4=...", "PS4 is set to a value made when the command runs; with set -x bash runs the command substitutions in it")
		}
	case *syntax.DeclClause:
		a.declare(n)
	case *syntax.WordIter:
		if n.Name == nil {
			return
		}
		for _, w := range n.Items {
			if s, ok := literal(w); !ok || !isNumber(s) {
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

// arithmeticOnly reports whether a word is one arithmetic expansion
// ($((n + 1)), quoted or not), whose value is a number.
func arithmeticOnly(w *syntax.Word) bool {
	if w == nil || len(w.Parts) != 1 {
		return false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.ArithmExp:
		return true
	case *syntax.DblQuoted:
		if len(p.Parts) == 1 {
			_, ok := p.Parts[0].(*syntax.ArithmExp)
			return ok
		}
	}
	return false
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
// at run time, a nameref to a name made at run time, and -i (integer:
// every value assigned is evaluated as arithmetic).
func (a *analysis) declare(d *syntax.DeclClause) {
	var flags string
	for _, as := range d.Args {
		if as.Naked && as.Name == nil && as.Value != nil {
			s, ok := literal(as.Value)
			switch {
			case ok && strings.HasPrefix(s, "-"):
				flags += s[1:]
			case ok:
			default:
				a.report(core.Ask, "runtime-code", d.Variant.Value+" "+wordSource(as.Value),
					"the variable's name is made when the command runs, and bash evaluates a subscript in it ("+d.Variant.Value+` "a[$(cmd)]"=1 runs cmd)`)
			}
		}
	}
	for _, as := range d.Args {
		if as.Name == nil || as.Naked || as.Value == nil {
			continue
		}
		if strings.Contains(flags, "A") {
			a.vals.assoc[as.Name.Value] = true
		}
		if strings.Contains(flags, "i") {
			a.arith(as.Value, "")
			a.vals.numeric[as.Name.Value] = true
		}
		if strings.Contains(flags, "n") {
			if _, ok := literal(as.Value); !ok {
				a.report(core.Ask, "runtime-code", d.Variant.Value+" -n "+as.Name.Value+"="+wordSource(as.Value),
					"a reference to a variable whose name is made when the command runs: bash evaluates a subscript in that name")
			}
		}
	}
	if strings.Contains(flags, "A") {
		for _, as := range d.Args {
			if as.Name != nil {
				a.vals.assoc[as.Name.Value] = true
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
	if s, ok := literal(w); ok {
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
	a.vals.other[name] = true
	if name == "PS4" {
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
		if !w.lit {
			a.report(core.Ask, "runtime-code", inv.text,
				fmt.Sprintf("%s is given a variable name made when the command runs, and bash evaluates a subscript in it (a[$(cmd)] runs cmd)", inv.name))
			return
		}
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
	for _, r := range a.vals.refs {
		if numericSpecial(r.name) || r.array != "" && a.vals.assoc[r.array] {
			continue
		}
		known := a.vals.numeric[r.name] || r.indirect && a.vals.plain[r.name]
		if known && !a.vals.other[r.name] && (r.indirect || !a.vals.plain[r.name]) {
			continue
		}
		a.report(core.Ask, "runtime-code", "$"+r.name,
			fmt.Sprintf("the value of %s is evaluated in %s, where bash runs the command substitutions it may hold (a[$(cmd)]); what it holds is known only when the command runs", r.name, r.where))
	}
}
