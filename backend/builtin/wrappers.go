package builtin

import (
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/airlock-dev/airlock/backend/core"
)

// wrapper describes a command that runs another command given in its
// arguments (sudo rm ..., env X=1 rm ..., timeout 5 rm ...): which of its
// options take a value, so that the wrapped command is found exactly. An
// option the table does not know makes the classifier treat every later
// argument as a possible start of the wrapped command (fail closed).
type wrapper struct {
	boolShort   string // short options without a value
	valueShort  string // short options with a value (attached or next)
	optShort    string // short options with an optional attached value
	scriptShort string // short options whose value is a shell script
	noCmdShort  string // short options after which nothing is run (taskset -p)
	boolLong    []string
	valueLong   []string
	optLong     []string // --opt or --opt=value
	scriptLong  []string
	operands    int  // fixed arguments before the command (timeout's duration)
	assigns     bool // NAME=VALUE words before the command (env)
	open        bool // the command gets more arguments at run time (xargs)
	numeric     bool // -N is an option (nice -10)
	// restScript: the wrapped words are joined into one shell script
	// (watch), unless execShort is given.
	restScript bool
	execShort  string
	// scanAll: only the script options matter, wherever they are (su,
	// script): the other arguments are not a command.
	scanAll bool
	// guess: the options are too many to list; every argument may start
	// the wrapped command, and arguments with spaces may be scripts.
	guess bool
	// postScript: after the operands, -c SCRIPT may follow (flock FILE -c).
	postScript bool
	// sub: the program runs a command only after one of these subcommands
	// (npm exec, uv run, poetry run); otherwise it is not a wrapper.
	sub []string
}

// wrappers returns the table of known wrappers.
func wrappers() map[string]wrapper {
	sudo := wrapper{
		boolShort: "AbEeHiKkLlnPSsVv", valueShort: "CDghpRrtTUu",
		boolLong:  []string{"askpass", "background", "edit", "set-home", "login", "remove-timestamp", "reset-timestamp", "list", "non-interactive", "preserve-groups", "stdin", "shell", "validate", "version", "help"},
		valueLong: []string{"close-from", "chdir", "group", "host", "prompt", "chroot", "role", "type", "command-timeout", "other-user", "user"},
		optLong:   []string{"preserve-env"},
	}
	xargs := wrapper{
		boolShort: "0rtpxo", valueShort: "adEILnPs", optShort: "iel",
		boolLong:  []string{"null", "no-run-if-empty", "verbose", "interactive", "exit", "open-tty", "show-limits"},
		valueLong: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"},
		optLong:   []string{"max-lines", "replace", "eof"},
		open:      true,
	}
	guess := wrapper{guess: true}
	return map[string]wrapper{
		"env": {
			boolShort: "i0v", valueShort: "uC", scriptShort: "S",
			boolLong:   []string{"ignore-environment", "null", "debug", "list-signal-handling"},
			valueLong:  []string{"unset", "chdir"},
			optLong:    []string{"block-signal", "default-signal", "ignore-signal"},
			scriptLong: []string{"split-string"},
			assigns:    true,
		},
		"nohup": {},
		// The dynamic loader runs the program it is given (found by a
		// red-team test); normalName gives every loader's name this one.
		"ld.so":   guess,
		"builtin": {},
		"busybox": {},
		"toybox":  {},
		"command": {boolShort: "p", noCmdShort: "vV"}, // -v and -V only say what a name is
		"exec":    {boolShort: "cl", valueShort: "a"},
		"time":    {boolShort: "pavq", valueShort: "fo", boolLong: []string{"portability", "append", "verbose", "quiet"}, valueLong: []string{"format", "output"}},
		"timeout": {boolShort: "v", valueShort: "sk", boolLong: []string{"foreground", "preserve-status", "verbose"}, valueLong: []string{"signal", "kill-after"}, operands: 1},
		"nice":    {valueShort: "n", valueLong: []string{"adjustment"}, numeric: true},
		"ionice":  {boolShort: "t", valueShort: "cnPu", noCmdShort: "p", boolLong: []string{"ignore"}, valueLong: []string{"class", "classdata", "pgid", "uid"}},
		"stdbuf":  {valueShort: "ioe", valueLong: []string{"input", "output", "error"}},
		"setsid":  {boolShort: "cfw", boolLong: []string{"ctty", "fork", "wait"}},
		"sudo":    sudo,
		"doas":    {boolShort: "nsL", valueShort: "uC"},
		"pkexec":  {boolLong: []string{"disable-internal-agent", "keep-cwd"}, valueLong: []string{"user"}},
		"xargs":   xargs,
		"chroot":  {boolLong: []string{"skip-chdir"}, valueLong: []string{"userspec", "groups"}, operands: 1},
		"taskset": {boolShort: "ac", noCmdShort: "p", boolLong: []string{"all-tasks", "cpu-list"}, operands: 1},
		"flock": {
			boolShort: "sxeunoF", valueShort: "wE", scriptShort: "c",
			boolLong:   []string{"shared", "exclusive", "unlock", "nonblock", "close", "no-fork", "verbose"},
			valueLong:  []string{"timeout", "conflict-exit-code"},
			scriptLong: []string{"command"},
			operands:   1, postScript: true,
		},
		"watch": {
			boolShort: "bcegtpx", valueShort: "nq", optShort: "d",
			boolLong:   []string{"beep", "color", "no-color", "errexit", "chgexit", "no-title", "exec", "precise", "no-wrap"},
			valueLong:  []string{"interval", "equexit"},
			optLong:    []string{"differences"},
			restScript: true, execShort: "x",
		},
		"su":      {scanAll: true, scriptShort: "c", scriptLong: []string{"command", "session-command"}},
		"runuser": {scanAll: true, scriptShort: "c", scriptLong: []string{"command", "session-command"}, guess: true},
		"script":  {scanAll: true, scriptShort: "c", scriptLong: []string{"command"}},
		// Programs that run a command after options too many to list.
		"strace": guess, "ltrace": guess, "valgrind": guess, "chrt": guess, "unshare": guess,
		"nsenter": guess, "firejail": guess, "bwrap": guess, "systemd-run": guess, "cgexec": guess,
		"proxychains": guess, "proxychains4": guess, "torsocks": guess, "faketime": guess,
		"unbuffer": guess, "xvfb-run": guess, "sg": guess, "catchsegv": guess,
		"setarch": guess, "linux32": guess, "linux64": guess, "i386": guess, "x86_64": guess, "uname26": guess,
		"prlimit": guess, "setpriv": guess, "fakeroot": guess, "fakechroot": guess, "numactl": guess,
		"rlwrap": guess, "chpst": guess, "perf": guess, "tmux": guess, "screen": guess, "eatmydata": guess,
		"nocache": guess, "torify": guess, "tsocks": guess, "sshpass": guess, "flatpak-spawn": guess,
		// parallel, like xargs, adds what it reads to the command it runs.
		"parallel":    {guess: true, open: true},
		"dbus-launch": guess, "ssh-agent": guess, "caffeinate": guess,
		"dbus-run-session": guess, "systemd-cat": guess, "systemd-inhibit": guess,
		// Package runners run the command or package binary they are given
		// (npx rm -rf x runs rm; found by a regression test), or a script
		// (npx -c '...').
		"npx":  npx,
		"bunx": guess, "uvx": guess, "pnpx": guess,
		// npm's -c/--call script counts wherever it stands (npm --call 'cmd'
		// exec, npm exec -c=cmd; found by a regression test).
		"npm": withSub(wrapper{guess: true, scriptShort: "c", scriptLong: npmCall}, "exec", "x", "explore"),
		// pnpm runs a command it does not know as one (pnpm bash -c …).
		"pnpm": guess, "corepack": guess,
		"yarn":   withSub(guess, "exec", "dlx", "run", "node"),
		"bun":    withSub(guess, "x", "run", "exec"),
		"uv":     withSub(guess, "run"),
		"poetry": withSub(guess, "run"), "pipx": withSub(guess, "run"), "pdm": withSub(guess, "run"),
		"hatch": withSub(guess, "run"), "rye": withSub(guess, "run"), "pixi": withSub(guess, "run", "exec"),
		"conda": withSub(guess, "run"), "mamba": withSub(guess, "run"), "micromamba": withSub(guess, "run"),
		"mise": withSub(guess, "exec", "x"), "direnv": withSub(guess, "exec"), "asdf": withSub(guess, "exec"),
		"pipenv": withSub(guess, "run"), "volta": withSub(guess, "run"),
		"bundle": withSub(guess, "exec"), "pyenv": withSub(guess, "exec"), "rbenv": withSub(guess, "exec"),
		"fnm": withSub(guess, "exec"), "nvm": withSub(guess, "exec", "run"), "tox": withSub(guess, "exec", "run"),
		"opam": withSub(guess, "exec"), "stack": withSub(guess, "exec", "run"), "cabal": withSub(guess, "exec", "run"),
		"nix":       withSub(guess, "develop", "shell", "run"),
		"nix-shell": {scanAll: true, scriptLong: []string{"run", "command"}, guess: true},
	}
}

// npx runs a package's binary, or a script with -c/--call.
var npx = wrapper{
	boolShort: "yq", valueShort: "p", scriptShort: "c",
	boolLong:   []string{"yes", "no", "quiet", "ignore-existing", "no-install", "prefer-online", "prefer-offline"},
	valueLong:  []string{"package", "workspace", "cache", "userconfig", "registry"},
	scriptLong: npmCall,
}

// npmCall are the long spellings of npm's --call: its option parser (nopt)
// takes an unknown --c for the shorthand -c, and a unique abbreviation of a
// long option for the option (npx --c 'rm -rf x' ran; found by a code
// review). --ca is another option (the certificate).
var npmCall = []string{"call", "cal", "c"}

// longName is the long option key abbreviates, as getopt_long reads it
// (env --split-str=…, found by a red-team test): the option itself, or the
// one option it is a prefix of. A prefix of a script option is taken for
// it, even when others share the prefix: judged as a script, it is checked
// more, never less.
func (w wrapper) longName(key string) string {
	all := slices.Concat(w.scriptLong, w.valueLong, w.optLong, w.boolLong)
	if key == "" || slices.Contains(all, key) {
		return key
	}
	if i := slices.IndexFunc(w.scriptLong, func(l string) bool { return strings.HasPrefix(l, key) }); i >= 0 {
		return w.scriptLong[i]
	}
	var match []string
	for _, l := range all {
		if strings.HasPrefix(l, key) {
			match = append(match, l)
		}
	}
	if len(match) == 1 {
		return match[0]
	}
	return key
}

// withSub is w, applying only after one of the subcommands.
func withSub(w wrapper, sub ...string) wrapper {
	w.sub = sub
	return w
}

// wrapped analyses what a wrapper runs.
func (a *analysis) wrapped(inv *invocation, w wrapper, args []word, redirs []*syntax.Redirect, depth int, open bool) []*invocation {
	var out []*invocation
	script := func(s word) { out = append(out, a.wrapperScript(inv, s, depth)...) }
	if w.scanAll {
		for _, s := range scanScripts(w, args) {
			script(s)
		}
		if !w.guess {
			return out
		}
	}
	if w.guess {
		return append(out, a.guessAll(args, redirs, depth, open || w.open, true)...)
	}
	inner, scripts, ok := parseWrapper(w, args)
	for _, s := range scripts {
		script(s)
	}
	if !ok {
		return append(out, a.guessAll(args, redirs, depth, open || w.open, false)...)
	}
	if w.assigns {
		for _, arg := range args[:len(args)-len(inner)] {
			if name, _, ok := strings.Cut(arg.text, "="); ok && envAssignment(arg.text) {
				a.variable(name)
				a.assignedByCommand(arg.text)
			}
		}
	}
	if len(inner) == 0 {
		if open {
			// xargs env, xargs nohup: the command comes from the input.
			a.report(core.Ask, "dynamic-command", inv.text, fmt.Sprintf("%s gets the command it runs from xargs' input, so what runs cannot be checked", inv.name))
		}
		return out
	}
	if inv.name == "xargs" {
		a.xargsReplace(args[:len(args)-len(inner)], inner)
	}
	if w.restScript && !hasAnyShort(args[:len(args)-len(inner)], w.execShort) {
		s, lit := joinLiteral(inner)
		script(word{text: s, lit: lit})
		return out
	}
	return append(out, a.run(inner, redirs, depth+1, open || w.open)...)
}

// wrapperScript analyses a script a wrapper is given to run (sh -c's,
// npm --call's).
func (a *analysis) wrapperScript(inv *invocation, s word, depth int) []*invocation {
	if !s.lit {
		a.report(core.Ask, "dynamic-script", inv.text, fmt.Sprintf("the script given to %s is computed when the command runs", inv.name))
		return nil
	}
	if inv.name == "env" && strings.ContainsAny(s.text, `\$`) {
		// env -S reads escapes (\_ is a space) and ${VAR} of its own
		// (found by a red-team test): the string is not what a shell
		// would make of it.
		a.report(core.Ask, "dynamic-script", inv.text, "env -S is given a string with escapes or variables it expands itself")
	}
	return a.script(s.text, depth+1)
}

// guessAll treats every argument that is not an option as a possible start
// of the wrapped command: used when the wrapper's options are not known.
func (a *analysis) guessAll(args []word, redirs []*syntax.Redirect, depth int, open, scripts bool) []*invocation {
	var out []*invocation
	for i, w := range args {
		if w.lit && (strings.HasPrefix(w.text, "-") || w.text == "." || w.text == "..") {
			// An option; or a folder (a wrapper execs a program, and
			// "." is the shell's source, no program).
			continue
		}
		if scripts && w.lit && strings.ContainsAny(w.text, " \t\n;|&") && !a.parsed[w.text] {
			a.parsed[w.text] = true
			out = append(out, a.script(w.text, depth+1)...)
		}
		out = append(out, a.run(args[i:], redirs, depth+1, open)...)
		// Some runners' option parsers swallow a "--" after the command
		// (npm's nopt: npm exec rm -- -rf x runs rm -rf x; found by a code
		// review), so the command is judged without it too.
		for j := i + 1; j < len(args); j++ {
			if args[j].lit && args[j].text == "--" {
				out = append(out, a.run(slices.Concat(args[i:j], args[j+1:]), redirs, depth+1, open)...)
				break
			}
		}
	}
	return out
}

// parseWrapper finds the wrapped command in a wrapper's arguments. It
// returns the command's words, the values of script options, and ok=false
// when an option it does not know (or a word computed at run time) stands
// where the options are.
func parseWrapper(w wrapper, args []word) (inner, scripts []word, ok bool) {
	operands := w.operands
	i := 0
	for i < len(args) {
		a := args[i]
		if !a.lit {
			return nil, scripts, false
		}
		t := a.text
		switch {
		case t == "--":
			return args[i+1:], scripts, true
		case w.assigns && envAssignment(t):
			i++
			continue
		case w.assigns && t == "-":
			i++
			continue
		case strings.HasPrefix(t, "--") && operands == w.operands:
			key, val, hasEq := strings.Cut(t[2:], "=")
			key = w.longName(key)
			switch {
			case slices.Contains(w.scriptLong, key):
				if hasEq {
					scripts = append(scripts, word{text: val, lit: true})
				} else if i+1 < len(args) {
					scripts = append(scripts, args[i+1])
					i++
				}
			case slices.Contains(w.valueLong, key):
				if !hasEq {
					i++
				}
			case slices.Contains(w.optLong, key), slices.Contains(w.boolLong, key) && !hasEq:
			default:
				return nil, scripts, false
			}
			i++
			continue
		case len(t) > 1 && t[0] == '-' && operands == w.operands:
			next, stop, known := shortOptions(w, t, args, i, &scripts)
			if !known {
				return nil, scripts, false
			}
			if stop {
				return nil, scripts, true
			}
			i = next
			continue
		case operands > 0:
			operands--
			i++
			continue
		case w.postScript && (t == "-c" || t == "--command"):
			if i+1 < len(args) {
				scripts = append(scripts, args[i+1])
			}
			return nil, scripts, true
		}
		break
	}
	if i >= len(args) {
		return nil, scripts, true // an option's value was missing: nothing runs
	}
	if strings.HasPrefix(args[i].text, "-") {
		// A command name never starts with -: this is an option the table
		// does not place, so the command may start anywhere after it.
		return nil, scripts, false
	}
	return args[i:], scripts, true
}

// shortOptions parses one cluster of short options at args[i]. It returns
// the index of the next argument, whether the wrapper runs nothing (stop),
// and whether every option was known.
func shortOptions(w wrapper, t string, args []word, i int, scripts *[]word) (next int, stop, known bool) {
	next = i + 1
	for j := 1; j < len(t); j++ {
		c := t[j]
		rest := t[j+1:]
		switch {
		case strings.IndexByte(w.noCmdShort, c) >= 0:
			return next, true, true
		case strings.IndexByte(w.scriptShort, c) >= 0:
			// -c=cmd is cmd to nopt (npx -c='rm -rf x'; a regression test
			// found it passed as "=rm").
			if rest = strings.TrimPrefix(rest, "="); rest != "" {
				*scripts = append(*scripts, word{text: rest, lit: true})
			} else if next < len(args) {
				*scripts = append(*scripts, args[next])
				next++
			}
			return next, false, true
		case strings.IndexByte(w.valueShort, c) >= 0:
			if rest == "" {
				next++
			}
			return next, false, true
		case strings.IndexByte(w.optShort, c) >= 0:
			return next, false, true
		case strings.IndexByte(w.boolShort, c) >= 0:
		case w.numeric && c >= '0' && c <= '9':
			return next, false, true
		default:
			return next, false, false
		}
	}
	return next, false, true
}

// scanScripts returns the values of a wrapper's script options wherever
// they stand (su permutes its options).
func scanScripts(w wrapper, args []word) []word {
	var out []word
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			continue
		}
		t := a.text
		if strings.HasPrefix(t, "--") {
			key, val, hasEq := strings.Cut(t[2:], "=")
			// getopt takes a unique abbreviation for the option (env
			// --split-str=…, script --comm=…; found by a red-team test):
			// any prefix of a script option counts as it.
			if key != "" && slices.ContainsFunc(w.scriptLong, func(l string) bool { return strings.HasPrefix(l, key) }) {
				if hasEq {
					out = append(out, word{text: val, lit: true})
				} else if i+1 < len(args) {
					out = append(out, args[i+1])
					i++
				}
			}
			continue
		}
		if len(t) > 1 && t[0] == '-' {
			for j := 1; j < len(t); j++ {
				if strings.IndexByte(w.scriptShort, t[j]) < 0 {
					continue
				}
				if rest := strings.TrimPrefix(t[j+1:], "="); rest != "" {
					out = append(out, word{text: rest, lit: true})
				} else if i+1 < len(args) {
					out = append(out, args[i+1])
					i++
				}
				break
			}
		}
	}
	return out
}

func hasAnyShort(args []word, chars string) bool {
	if chars == "" {
		return false
	}
	for _, a := range args {
		if !a.lit {
			continue
		}
		if a.text == "--exec" {
			return true
		}
		if isFlagCluster(a.text) && strings.ContainsAny(a.text[1:], chars) {
			return true
		}
	}
	return false
}

// isAssignment reports whether s is NAME=VALUE.
// envAssignment reports whether env takes an argument as an assignment:
// GNU env sets any NAME=VALUE before the command, whatever NAME is
// (env 'a-b=1' rm … runs rm).
func envAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	return ok && name != "" && !strings.HasPrefix(s, "-")
}

func isAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || isLetter(c) || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// xargsReplace asks when xargs -I (or -i, --replace) fills its input into
// the command's name or into a script (xargs -I{} sh -c {}): that text is
// only known when the command runs. The words are still checked as written,
// so a deny rule they match still denies.
func (a *analysis) xargsReplace(opts, inner []word) {
	replace := ""
	for i, o := range opts {
		t := o.text
		switch {
		case t == "-I" && i+1 < len(opts):
			replace = opts[i+1].text
		case strings.HasPrefix(t, "-I") && len(t) > 2:
			replace = t[2:]
		case t == "-i" || t == "--replace":
			replace = "{}"
		case strings.HasPrefix(t, "-i") && len(t) > 2:
			replace = t[2:]
		case strings.HasPrefix(t, "--replace="):
			replace = strings.TrimPrefix(t, "--replace=")
		}
	}
	if replace == "" {
		return
	}
	name := normalName(inner[0].text)
	_, wrapper := a.c.wrappers[name]
	switch {
	case wrapper && slices.ContainsFunc(inner[1:], func(w word) bool { return strings.Contains(w.text, replace) }):
		// xargs -I{} env {} …: the wrapper runs what the input fills in.
		a.report(core.Ask, "dynamic-command", truncate(joinWords(inner)), fmt.Sprintf("xargs fills its input into what %s runs (%s), so what runs cannot be checked", name, replace))
	case strings.Contains(inner[0].text, replace):
		a.report(core.Ask, "dynamic-command", truncate(joinWords(inner)), fmt.Sprintf("xargs fills its input into the command name (%s), so what runs cannot be checked", replace))
	case posixShell(name) || otherShell(name) || name == "eval" || interpreter(name):
		for _, w := range inner[1:] {
			if strings.Contains(w.text, replace) {
				a.report(core.Ask, "dynamic-script", truncate(joinWords(inner)), fmt.Sprintf("xargs fills its input into the code %s runs (%s), so what runs cannot be checked", name, replace))
				return
			}
		}
	}
}

func joinWords(ws []word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.text
	}
	return strings.Join(parts, " ")
}
