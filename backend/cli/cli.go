// Package cli implements Airlock's admin subcommands (servers, token, ...):
// the operations of the UI for headless machines and scripts.
//
// Each command is a function taking its arguments, its data directory and
// its streams, and returning an error; errors a user should read are
// *core.Error values with a code, and main maps them to exit codes. The
// commands work on the files in the data directory, which a running Airlock
// watches, so they take effect at once without talking to it.
//
// It may import core, config, store, hitl, authz, teams, instance and runner.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/backend/config"
	"github.com/airlock-dev/airlock/backend/core"
)

// ResolveDataDir picks the data directory: the --data-dir flag when given,
// else $AIRLOCK_DATA_DIR, else the per-user default (see config.DefaultDataDir).
func ResolveDataDir(flagValue string, getenv func(string) string) (string, error) {
	dir := flagValue
	if dir == "" {
		var err error
		if dir, err = config.DefaultDataDir(getenv); err != nil {
			return "", err
		}
	}
	// Absolute, so that logs, the UI and the snippets name it wherever
	// they are read (a relative one showed as "../x/servers.json").
	return filepath.Abs(dir)
}

// command describes one subcommand for its flag set and usage text.
type command struct {
	name  string // "servers add"
	usage string // the synopsis and description, without the flag list
}

// newFlags returns a flag set for cmd that reports errors instead of printing
// them, with the --data-dir flag every command shares.
func (c command) newFlags(dataDir *string) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(dataDir, "data-dir", *dataDir, "the data directory (default from $"+config.DataDirEnv+" or the per-user config dir)")
	return fs
}

// printUsage writes the usage text and the flags of fs to w.
func (c command) printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: airlock %s\n", strings.TrimSpace(c.usage))
	fmt.Fprintln(w, "\nflags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// parse parses args with fs, letting flags and positional arguments mix
// (`add fs --url U` as well as `add --url U fs`). Arguments after "--" are
// returned apart and never parsed as flags. errHelp means -h was given and
// the usage was printed to stdout.
func (c command) parse(fs *flag.FlagSet, args []string, stdout io.Writer) (positional, rest []string, err error) {
	for i, a := range args {
		if a == "--" {
			args, rest = args[:i], args[i+1:]
			if rest == nil {
				rest = []string{}
			}
			break
		}
	}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				c.printUsage(stdout, fs)
				return nil, nil, errHelp
			}
			return nil, nil, c.usageError("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, rest, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// usageError is an EInvalid error pointing at the command's help.
func (c command) usageError(format string, args ...any) *core.Error {
	return core.Errorf(core.EInvalid, format, args...).WithHint("see 'airlock " + c.name + " -h'")
}

// errHelp tells a command that it printed its usage and has nothing to do.
var errHelp = errors.New("help requested")

// done turns errHelp into success: asking for help is not a failure.
func done(err error) error {
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}

// seconds is a timeout flag in whole seconds: "90", "2m" or "1h30m".
type seconds struct{ n *int }

func (s seconds) String() string {
	if s.n == nil || *s.n == 0 {
		return ""
	}
	return (time.Duration(*s.n) * time.Second).String()
}

func (s seconds) Set(v string) error {
	text := v
	if _, err := strconv.Atoi(v); err == nil {
		text += "s" // a bare number is seconds, as in servers.json
	}
	d, err := time.ParseDuration(text)
	if err != nil || d%time.Second != 0 || d < time.Second || d > config.MaxTimeout*time.Second {
		return fmt.Errorf("%q is not a whole number of seconds from 1s to 24h (e.g. 90, 2m, 1h30m)", v)
	}
	*s.n = int(d / time.Second)
	return nil
}

// keyValues is a repeatable K=V flag.
type keyValues map[string]string

func (kv keyValues) String() string {
	var parts []string
	for k, v := range kv {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ",")
}

func (kv keyValues) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not KEY=VALUE", s)
	}
	kv[k] = v
	return nil
}
