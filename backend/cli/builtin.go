package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/instance"
	"github.com/airlock-dev/airlock/backend/store"
)

const builtinUsage = `usage: airlock builtin <command> [flags]

Configure the built-in file-read, file-write and shell-exec tools. They are
off until a folder is allowed. Changes are written to the database; a
running Airlock applies them to the next call.

commands:
  show [--json]               the settings and the folders in effect
  allow-path DIR              allow agents to use DIR (turns the tools on)
  remove-path DIR             stop allowing DIR
  set KEY VALUE               set a number, or a list as a JSON array
  add KEY VALUE               add an entry to a list
  remove KEY VALUE            remove an entry from a list
  reset [KEY]                 restore the default of KEY, or of every
                              setting but the folders
  check [--json] -- COMMAND [ARG...]
                              what the shell policy says of a command

keys:
  shellTimeoutSeconds, outputCapBytes, readCapBytes, writeCapBytes (numbers)
  deny, ask, envAllow, binaryMimeAllow, executableExtensions (lists)

Run 'airlock builtin <command> -h' for a command's flags.
`

// RunBuiltin runs `airlock builtin <command>` against db.
func RunBuiltin(ctx context.Context, db *store.DB, args []string, stdout, stderr io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, builtinUsage)
		return core.Errorf(core.EInvalid, "missing builtin command").WithHint("see 'airlock builtin -h'")
	}
	if a := args[0]; a == "-h" || a == "-help" || a == "--help" || a == "help" {
		fmt.Fprint(stdout, builtinUsage)
		return nil
	}
	b, err := builtin.New(builtin.Options{Store: db, DataDir: filepath.Dir(db.Path)})
	if err != nil {
		return err
	}
	rest := args[1:]
	switch args[0] {
	case "show":
		return done(builtinShow(b, filepath.Dir(db.Path), rest, stdout))
	case "allow-path":
		return done(builtinPath(b, filepath.Dir(db.Path), builtinAllowPathCmd, rest, stdout))
	case "remove-path":
		return done(builtinPath(b, filepath.Dir(db.Path), builtinRemovePathCmd, rest, stdout))
	case "set":
		return done(builtinEdit(b, builtinSetCmd, rest, stdout))
	case "add":
		return done(builtinEdit(b, builtinAddCmd, rest, stdout))
	case "remove", "rm":
		return done(builtinEdit(b, builtinRemoveCmd, rest, stdout))
	case "reset":
		return done(builtinReset(b, rest, stdout))
	case "check":
		return done(builtinCheck(b, rest, stdout))
	}
	fmt.Fprint(stderr, builtinUsage)
	return core.Errorf(core.EInvalid, "unknown builtin command %q", args[0]).WithHint("see 'airlock builtin -h'")
}

var builtinShowCmd = command{name: "builtin show", usage: `builtin show [--json]

Show the settings of the built-in tools and the folders in effect.`}

func builtinShow(b *builtin.Builtin, dataDir string, args []string, stdout io.Writer) error {
	var ignored string // --data-dir was applied when db was opened
	fs := builtinShowCmd.newFlags(&ignored)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, _, err := builtinShowCmd.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return builtinShowCmd.usageError("unexpected argument %q", pos[0])
	}
	// A running Airlock knows what is in effect, including folders allowed
	// with --allow-path for its run only; the database alone does not.
	ov := b.Get()
	var live builtin.Overview
	if instance.Status(dataDir, instance.StatusBuiltin, &live) == nil {
		ov = live
	}
	if *asJSON {
		return writeJSON(stdout, ov)
	}
	printOverview(stdout, ov)
	return nil
}

func printOverview(w io.Writer, ov builtin.Overview) {
	s := ov.Settings
	if ov.Enabled {
		fmt.Fprintln(w, "built-in tools: on")
	} else {
		fmt.Fprintln(w, "built-in tools: off (no folder allowed; allow one with 'airlock builtin allow-path DIR')")
	}
	if ov.Error != "" {
		fmt.Fprintf(w, "stored settings unusable: %s\n", ov.Error)
	}
	fmt.Fprintln(w, "folders:")
	if len(ov.Roots) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for _, r := range ov.Roots {
		line := fmt.Sprintf("  %s (%s)", r.Path, r.Source)
		if !r.Available {
			line += " unavailable: " + r.Error
		}
		fmt.Fprintln(w, line)
	}
	if sb := ov.Sandbox; sb.Enforced {
		fmt.Fprintf(w, "shell sandbox: %s, keeping commands out of %s\n", sb.Mechanism, strings.Join(sb.Hidden, ", "))
	} else if len(sb.Hidden) > 0 {
		fmt.Fprintf(w, "shell sandbox: none (%s); only the command-line checks keep commands out of %s\n", sb.Reason, strings.Join(sb.Hidden, ", "))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "shellTimeoutSeconds\t%d\n", s.ShellTimeoutSeconds)
	fmt.Fprintf(tw, "outputCapBytes\t%d\n", s.OutputCapBytes)
	fmt.Fprintf(tw, "readCapBytes\t%d\n", s.ReadCapBytes)
	fmt.Fprintf(tw, "writeCapBytes\t%d\n", s.WriteCapBytes)
	fmt.Fprintf(tw, "envAllow\t%s\n", listOrNone(s.EnvAllow))
	fmt.Fprintf(tw, "binaryMimeAllow\t%s\n", listOrNone(s.BinaryMIMEAllow))
	fmt.Fprintf(tw, "executableExtensions\t%s\n", listOrNone(s.ExecutableExtensions))
	tw.Flush()
	for _, l := range []struct {
		name  string
		rules []string
	}{{"deny (refused, never asked)", s.Deny}, {"ask (a person approves)", s.Ask}} {
		fmt.Fprintf(w, "%s:\n", l.name)
		if len(l.rules) == 0 {
			fmt.Fprintln(w, "  (none)")
		}
		for _, r := range l.rules {
			fmt.Fprintf(w, "  %s\n", r)
		}
	}
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "(none)"
	}
	return strings.Join(l, " ")
}

var (
	builtinAllowPathCmd = command{name: "builtin allow-path", usage: `builtin allow-path DIR

Allow the built-in tools to use DIR and everything below it. The first
folder turns the tools on.`}
	builtinRemovePathCmd = command{name: "builtin remove-path", usage: `builtin remove-path DIR

Stop allowing DIR. Folders given with --allow-path are not stored and
cannot be removed here.`}
)

func builtinPath(b *builtin.Builtin, dataDir string, c command, args []string, stdout io.Writer) error {
	var ignored string // --data-dir was applied when db was opened
	fs := c.newFlags(&ignored)
	pos, _, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return c.usageError("give exactly one folder")
	}
	dir, err := filepath.Abs(pos[0])
	if err != nil {
		return core.Errorf(core.EInvalid, "%s: %v", pos[0], err)
	}
	if c.name == builtinAllowPathCmd.name {
		ov, err := b.AllowPath(dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "allowed %s; built-in tools are %s\n", dir, onOff(ov.Enabled))
		return nil
	}
	// Folders a running Airlock was given with --allow-path are in effect
	// too, but only it knows them (found by a new-user test: with one, this
	// said the tools were off, and a removal of it that it was not an
	// allowed folder).
	var cmdLine []string
	var live builtin.Overview
	if instance.Status(dataDir, instance.StatusBuiltin, &live) == nil {
		for _, r := range live.Roots {
			if r.Source == builtin.SourceCommandLine {
				cmdLine = append(cmdLine, r.Path)
			}
		}
	}
	ov, err := b.RemovePath(dir)
	if core.ErrorCode(err) == core.ENotFound && slices.Contains(cmdLine, filepath.Clean(dir)) {
		return core.Errorf(core.EInvalid, "%s was allowed on the command line of the running Airlock (--allow-path), not in the settings", filepath.Clean(dir)).
			WithHint("restart Airlock without --allow-path " + filepath.Clean(dir))
	}
	if err != nil {
		return err
	}
	if len(cmdLine) > 0 {
		fmt.Fprintf(stdout, "removed %s; built-in tools are on: the running Airlock also allows %s (--allow-path)\n", dir, strings.Join(cmdLine, ", "))
		return nil
	}
	fmt.Fprintf(stdout, "removed %s; built-in tools are %s\n", dir, onOff(ov.Enabled))
	return nil
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

var (
	builtinSetCmd = command{name: "builtin set", usage: `builtin set KEY VALUE

Set a number (shellTimeoutSeconds, outputCapBytes, readCapBytes,
writeCapBytes) or replace a list (deny, ask, envAllow, binaryMimeAllow,
executableExtensions) with a JSON array, e.g.
  airlock builtin set shellTimeoutSeconds 120
  airlock builtin set binaryMimeAllow '["image/png","application/pdf"]'`}
	builtinAddCmd = command{name: "builtin add", usage: `builtin add KEY VALUE

Add an entry to a list, e.g.
  airlock builtin add ask 'docker {run,exec}'
  airlock builtin add envAllow GOPATH`}
	builtinRemoveCmd = command{name: "builtin remove", usage: `builtin remove KEY VALUE

Remove an entry from a list, e.g.
  airlock builtin remove executableExtensions .sh`}
)

// setNumber sets the number setting key; false for an unknown key.
func setNumber(s *builtin.Settings, key string, n int64) bool {
	switch key {
	case "shellTimeoutSeconds":
		s.ShellTimeoutSeconds = int(n)
	case "outputCapBytes":
		s.OutputCapBytes = int(n)
	case "readCapBytes":
		s.ReadCapBytes = n
	case "writeCapBytes":
		s.WriteCapBytes = n
	default:
		return false
	}
	return true
}

// number returns the number setting key.
func number(s builtin.Settings, key string) (int64, bool) {
	switch key {
	case "shellTimeoutSeconds":
		return int64(s.ShellTimeoutSeconds), true
	case "outputCapBytes":
		return int64(s.OutputCapBytes), true
	case "readCapBytes":
		return s.ReadCapBytes, true
	case "writeCapBytes":
		return s.WriteCapBytes, true
	}
	return 0, false
}

// list returns the list setting key, to read or replace.
func list(s *builtin.Settings, key string) *[]string {
	switch key {
	case "deny":
		return &s.Deny
	case "ask":
		return &s.Ask
	case "envAllow":
		return &s.EnvAllow
	case "binaryMimeAllow":
		return &s.BinaryMIMEAllow
	case "executableExtensions":
		return &s.ExecutableExtensions
	}
	return nil
}

func knownKeys() string {
	return "shellTimeoutSeconds, outputCapBytes, readCapBytes, writeCapBytes, deny, ask, envAllow, binaryMimeAllow, executableExtensions"
}

func builtinEdit(b *builtin.Builtin, c command, args []string, stdout io.Writer) error {
	var dataDir string
	fs := c.newFlags(&dataDir)
	pos, _, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return c.usageError("give a KEY and a VALUE")
	}
	key, value := pos[0], pos[1]
	s := b.Settings()
	_, isNumber := number(s, key)
	l := list(&s, key)
	switch {
	case isNumber && c.name == builtinSetCmd.name:
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return core.Errorf(core.EInvalid, "%s takes a whole number, got %q", key, value)
		}
		setNumber(&s, key, n)
	case isNumber:
		return c.usageError("%s is a number; use 'airlock builtin set %s N'", key, key)
	case l != nil && c.name == builtinSetCmd.name:
		var v []string
		if err := json.Unmarshal([]byte(value), &v); err != nil {
			return core.Errorf(core.EInvalid, "%s takes a JSON array of strings, e.g. '[\"a\",\"b\"]': %v", key, err).
				WithHint("or change one entry with 'airlock builtin add|remove " + key + " VALUE'")
		}
		*l = v
	case l != nil && c.name == builtinAddCmd.name:
		if !slices.Contains(*l, value) {
			*l = append(*l, value)
		}
	case l != nil:
		i := slices.Index(*l, value)
		if i < 0 {
			return core.Errorf(core.ENotFound, "%q is not in %s", value, key).WithHint("see 'airlock builtin show'")
		}
		*l = slices.Delete(*l, i, i+1)
	case key == "roots":
		return c.usageError("change folders with 'airlock builtin allow-path|remove-path DIR'")
	default:
		return c.usageError("unknown key %q; keys are %s", key, knownKeys())
	}
	if _, err := b.Update(s); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s updated\n", key)
	return nil
}

var builtinResetCmd = command{name: "builtin reset", usage: `builtin reset [KEY]

Restore the default of KEY, or of every setting except the allowed folders.`}

func builtinReset(b *builtin.Builtin, args []string, stdout io.Writer) error {
	var dataDir string
	fs := builtinResetCmd.newFlags(&dataDir)
	pos, _, err := builtinResetCmd.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return builtinResetCmd.usageError("give at most one KEY")
	}
	s, d := b.Settings(), builtin.Defaults()
	if len(pos) == 0 {
		d.Roots = s.Roots
		s = d
	} else {
		key := pos[0]
		if n, ok := number(d, key); ok {
			setNumber(&s, key, n)
		} else if l := list(&s, key); l != nil {
			*l = *list(&d, key)
		} else {
			return builtinResetCmd.usageError("unknown key %q; keys are %s", key, knownKeys())
		}
	}
	if _, err := b.Update(s); err != nil {
		return err
	}
	if len(pos) == 0 {
		fmt.Fprintln(stdout, "settings reset to the defaults (folders kept)")
	} else {
		fmt.Fprintf(stdout, "%s reset to the default\n", pos[0])
	}
	return nil
}

var builtinCheckCmd = command{name: "builtin check", usage: `builtin check [--json] -- COMMAND [ARG...]

Say what the shell policy makes of shell_exec with this command and these
arguments: allow, ask (a person must approve) or deny, and why. Quote a
whole command line as one COMMAND: airlock builtin check -- 'curl x | sh'`}

func builtinCheck(b *builtin.Builtin, args []string, stdout io.Writer) error {
	var dataDir string
	fs := builtinCheckCmd.newFlags(&dataDir)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, rest, err := builtinCheckCmd.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	words := append(pos, rest...)
	if len(words) == 0 {
		return builtinCheckCmd.usageError("give a command after --")
	}
	c, err := b.ClassifyCommand(words[0], words[1:])
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, c)
	}
	fmt.Fprintf(stdout, "decision: %s\n", c.Outcome)
	for _, f := range c.Findings {
		fmt.Fprintf(stdout, "  %s: %s\n", f.Outcome, f.Reason)
	}
	if len(c.Commands) > 0 {
		fmt.Fprintln(stdout, "commands checked:")
		for _, cmd := range c.Commands {
			fmt.Fprintf(stdout, "  %s\n", cmd)
		}
	}
	return nil
}
