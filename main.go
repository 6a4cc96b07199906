// Command airlock is the Airlock desktop app, its headless server, its
// stdio bridge and its admin commands. Only main.go and app.go import Wails.
package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/airlock-dev/airlock/backend/agentscript"
	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/bridge"
	"github.com/airlock-dev/airlock/backend/cli"
	"github.com/airlock-dev/airlock/backend/config"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/instance"
	"github.com/airlock-dev/airlock/backend/store"
)

//go:embed all:frontend/dist
var assets embed.FS

// shownBinary is the airlock binary Airlock names in the commands it shows
// (client configs): the desktop one when it handed this command over.
var shownBinary string

func main() {
	handOff(os.Args[1:])
	shownBinary = handedOffFrom()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			var e *core.Error
			if errors.As(err, &e) {
				fmt.Fprintf(os.Stderr, "airlock: %s [%s]\n", e.Message, e.Code)
				if e.Hint != "" {
					fmt.Fprintln(os.Stderr, "hint:", e.Hint)
				}
			} else {
				fmt.Fprintln(os.Stderr, "airlock:", err)
			}
		}
		if core.ErrorCode(err) == core.EInvalid || errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

const usage = `Airlock stands between AI agents and the MCP servers they call.

Usage:
  airlock [--data-dir DIR] [--addr HOST:PORT] [--allow-path DIR]        the desktop app
  airlock serve [--data-dir DIR] [--addr HOST:PORT] [--allow-path DIR]  headless; the UI in a browser
  airlock bridge [--token T] [--purpose task|chat] [--project NAME] [--url U]
                                                     stdio ⇄ Streamable HTTP for stdio-only MCP clients
  airlock token [--rotate]                           print the agent connection token
  airlock servers list|add|update|restart|rm|changes|accept|import|export
                                                     manage downstream MCP servers
  airlock rules list|add|update|rm|test|export|import  manage approval rules
  airlock agents list|add|update|rm|suspend|resume|token|passkey  manage agents
  airlock roles list|add|grant|revoke|default|rm      manage permission roles
  airlock builtin show|allow-path|remove-path|set|add|remove|reset|check
                                                     the built-in file and shell tools
  airlock projects list|add                          projects and their task counts
  airlock tasks list|show|add|move|assign|update|log  the task board, as the owner
  airlock chat list|show|send|start|end              agents' conversations, as the owner
  airlock runs templates|profile|set-profile|settings|start|stop|list|live|log
                                                     agent runs in the running Airlock
  airlock approvals list|show|approve|decline        the calls waiting for you, in the running Airlock
  airlock agent-script FILE [--mcp-config F | --url U --token T]
                                                     the scripted agent (a test double for an LLM agent)
  airlock version

Environment: AIRLOCK_DATA_DIR, AIRLOCK_ADDR, AIRLOCK_TOKEN (bridge), AIRLOCK_URL (bridge).
`

// run is the whole program, with its environment passed in.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	// A --data-dir before the command is the command's (airlock --data-dir
	// X agents list; found by a new-user test): it reaches every command
	// as $AIRLOCK_DATA_DIR does, which a --data-dir after the command
	// still overrides.
	dataDirFirst := func(dir string) {
		env := getenv
		getenv = func(k string) string {
			if k == "AIRLOCK_DATA_DIR" {
				return dir
			}
			return env(k)
		}
	}
	if len(args) > 1 && (args[0] == "--data-dir" || args[0] == "-data-dir") && !strings.HasPrefix(args[1], "-") {
		dataDirFirst(args[1])
		args = args[2:]
	} else if len(args) > 0 && strings.HasPrefix(args[0], "--data-dir=") {
		dataDirFirst(strings.TrimPrefix(args[0], "--data-dir="))
		args = args[1:]
	}
	cmd := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("airlock "+cmd, flag.ContinueOnError)
	// Help goes to stdout and is no error (exit 0); a bad flag is one line
	// on stderr (main prints it) and exit 2.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	dataDirFlag := fs.String("data-dir", "", "data directory `DIR` (default $AIRLOCK_DATA_DIR or the user config dir)")
	addrFlag := fs.String("addr", "", "listen address `HOST:PORT` (default $AIRLOCK_ADDR or "+airlock.DefaultAddr+")")
	var allowPaths hostList
	fs.Var(&allowPaths, "allow-path", "a folder `DIR` the built-in file and shell tools may use for this run (repeatable; '.' is the folder Airlock starts in); 'airlock builtin allow-path DIR' allows one for good")
	var allowHosts hostList
	fs.Var(&allowHosts, "allow-host", "a host `NAME` remote clients use to reach a non-loopback --addr (repeatable; also $AIRLOCK_ALLOW_HOSTS, comma-separated)")

	parse := func() error {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, synopses[cmd])
			fmt.Fprintln(stdout, "\nFlags of '"+strings.TrimSpace("airlock "+cmd)+"':")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return errHelpShown
		}
		help := "see '" + strings.TrimSpace("airlock "+cmd) + " --help'"
		if err != nil {
			return core.Errorf(core.EInvalid, "%v", err).WithHint(help)
		}
		if fs.NArg() > 0 {
			return core.Errorf(core.EInvalid, "unexpected argument %q", fs.Arg(0)).WithHint(help)
		}
		return nil
	}
	switch cmd {
	case "", "serve":
		if err := parse(); err != nil {
			return done(err)
		}
		dataDir, err := cli.ResolveDataDir(*dataDirFlag, getenv)
		if err != nil {
			return err
		}
		addr := *addrFlag
		if addr == "" {
			addr = getenv("AIRLOCK_ADDR")
		}
		for _, h := range strings.Split(getenv("AIRLOCK_ALLOW_HOSTS"), ",") {
			if h = strings.TrimSpace(h); h != "" {
				allowHosts = append(allowHosts, h)
			}
		}
		o := airlock.Options{DataDir: dataDir, Addr: addr, UI: uiFS(), AllowedHosts: allowHosts, AllowPaths: allowPaths, Binary: shownBinary}
		airlock.TuneRuntime()
		if cmd == "serve" {
			return serve(ctx, o, stdout, stderr)
		}
		return desktop(ctx, o, stdout, stderr)
	case "bridge":
		// The bridge takes only its own flags (not --addr, --allow-path).
		fs = flag.NewFlagSet("airlock bridge", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Usage = func() {}
		dataDirFlag = fs.String("data-dir", "", "data directory `DIR` (default $AIRLOCK_DATA_DIR or the user config dir)")
		token := fs.String("token", getenv("AIRLOCK_TOKEN"), "agent token (default $AIRLOCK_TOKEN, else the data dir's token)")
		url := fs.String("url", getenv("AIRLOCK_URL"), "Airlock MCP endpoint (default: the Airlock running on the data dir, else http://$AIRLOCK_ADDR/mcp)")
		purpose := fs.String("purpose", "", bridge.PurposeUsage)
		project := fs.String("project", "", bridge.ProjectUsage)
		if err := parse(); err != nil {
			return done(err)
		}
		dataDir, err := cli.ResolveDataDir(*dataDirFlag, getenv)
		if err != nil {
			return err
		}
		addr := getenv("AIRLOCK_ADDR")
		if addr == "" {
			addr = airlock.DefaultAddr
		}
		return bridge.Main(ctx, bridge.Options{DataDir: dataDir, URL: *url, Token: *token, DefaultAddr: addr,
			Purpose: *purpose, Project: *project}, stdin, stdout)
	case "token", "servers", "rules", "agents", "roles", "builtin", "projects", "tasks", "chat":
		// These take --data-dir anywhere among their own arguments.
		dataDirArg, rest := extractDataDir(args)
		dataDir, err := cli.ResolveDataDir(dataDirArg, getenv)
		if err != nil {
			return err
		}
		if dataDirArg == "" && getenv(config.DataDirEnv) == "" && !isHelp(rest) {
			fmt.Fprintf(stderr, "airlock: data directory %s (change it with --data-dir or $%s)\n", dataDir, config.DataDirEnv)
		}
		if err := admin(ctx, cmd, dataDir, rest, stdin, stdout, stderr); err != nil {
			return err
		}
		// A running Airlock reads the change before the command returns:
		// a rotated token or a suspended agent is refused at its next request.
		if err := instance.NotifyChanged(dataDir); err != nil {
			fmt.Fprintf(stderr, "airlock: warning: the running Airlock did not confirm the change (%v); it picks it up within a second\n", core.ErrorMessage(err))
		}
		return nil
	case "agent-script":
		return agentscript.Run(ctx, args, getenv, stdout, stderr)
	case "runs":
		dataDirArg, rest := extractDataDir(args)
		dataDir, err := cli.ResolveDataDir(dataDirArg, getenv)
		if err != nil {
			return err
		}
		return cli.RunRuns(ctx, dataDir, rest, stdout, stderr)
	case "approvals":
		dataDirArg, rest := extractDataDir(args)
		dataDir, err := cli.ResolveDataDir(dataDirArg, getenv)
		if err != nil {
			return err
		}
		return cli.RunApprovals(ctx, dataDir, rest, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "airlock", airlock.Version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return core.Errorf(core.EInvalid, "unknown command %q", cmd)
}

// extractDataDir pulls --data-dir DIR / --data-dir=DIR out of args.
func extractDataDir(args []string) (string, []string) {
	var dir string
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--data-dir" || a == "-data-dir":
			if i+1 < len(args) {
				dir = args[i+1]
				i++
			}
		case strings.HasPrefix(a, "--data-dir=") || strings.HasPrefix(a, "-data-dir="):
			dir = a[strings.Index(a, "=")+1:]
		default:
			rest = append(rest, a)
		}
	}
	return dir, rest
}

func uiFS() fs.FS {
	sub, err := fs.Sub(assets, "frontend/dist")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	return sub
}

// hostList is a repeatable string flag.
type hostList []string

func (h *hostList) String() string     { return strings.Join(*h, ",") }
func (h *hostList) Set(v string) error { *h = append(*h, v); return nil }

func serve(ctx context.Context, o airlock.Options, stdout, stderr io.Writer) error {
	o.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	in, err := airlock.Start(ctx, o)
	if err != nil {
		return err
	}
	defer in.Close()
	printEndpoints(stdout, in)
	warnConfig(stderr, in)
	<-ctx.Done()
	fmt.Fprintln(stdout, "Airlock stopping")
	return nil
}

func printEndpoints(w io.Writer, in *airlock.Instance) {
	if host, _, _ := net.SplitHostPort(in.Addr); !isLoopback(host) {
		fmt.Fprintf(w, "Warning: listening on %s, reachable from other machines over plain HTTP: tokens travel unencrypted. Prefer an SSH tunnel or a TLS proxy.\n", in.Addr)
	}
	fmt.Fprintf(w, "Airlock UI: %s\n", in.UIURL())
	fmt.Fprintf(w, "MCP endpoint: %s\n", in.Info.MCPURL)
	if in.SharedTokenLive() {
		fmt.Fprintf(w, "Agent token: %s\n", in.Info.AgentToken)
	} else {
		fmt.Fprintln(w, "Agent token: none (the agent \"default\" it belonged to was deleted; 'airlock agents add NAME' gives a client its own)")
	}
	fmt.Fprintf(w, "Data dir: %s\n", in.Info.DataDir)
	if in.SharedTokenLive() {
		fmt.Fprintf(w, "Connect Claude Code: claude mcp add --transport http airlock %s --header \"Authorization: Bearer %s\"\n", in.Info.MCPURL, in.Info.AgentToken)
	}
}

// warnConfig says on the console what the Servers and Rules screens say:
// that the servers file or the rules file is not in effect, and why.
func warnConfig(w io.Writer, in *airlock.Instance) {
	if msg := in.ConfigError(); msg != "" {
		fmt.Fprintf(w, "Warning: the servers file is not in effect (%s); Airlock starts without its servers. Fix the file (it is watched) or use the Servers screen.\n", msg)
	}
	if msg := in.RulesFileError(); msg != "" {
		fmt.Fprintf(w, "Warning: the rules file is not in effect (%s); the rules stored before stay in force. The file is kept as it is: fix it (it is watched), or remove it and Airlock writes it again at the next rule change.\n", msg)
	}
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// admin runs one of the admin subcommands on dataDir. A data directory the
// command had to create is said so: a mistyped --data-dir would otherwise
// give a new, empty Airlock without a word.
func admin(ctx context.Context, cmd, dataDir string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if _, err := os.Stat(dataDir); errors.Is(err, fs.ErrNotExist) && !isHelp(args) {
		defer func() {
			if _, err := os.Stat(dataDir); err == nil {
				fmt.Fprintf(stderr, "note: %s did not exist; it is a new data directory now (check --data-dir if you meant another)\n", dataDir)
			}
		}()
	}
	return runAdmin(ctx, cmd, dataDir, args, stdin, stdout, stderr)
}

func runAdmin(ctx context.Context, cmd, dataDir string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	switch cmd {
	case "token":
		return cli.TokenCmd(dataDir, args, stdout)
	case "servers":
		return cli.Servers(ctx, dataDir, args, stdin, stdout, stderr)
	}
	db, err := store.Open(filepath.Join(dataDir, store.FileName))
	if err != nil {
		return err
	}
	defer db.Close()
	switch cmd {
	case "agents":
		return cli.RunAgents(ctx, db, cli.KnownServers(dataDir), args, stdout, stderr)
	case "roles":
		return cli.RunRoles(ctx, db, cli.KnownServers(dataDir), args, stdout, stderr)
	case "builtin":
		return cli.RunBuiltin(ctx, db, args, stdout, stderr)
	case "projects":
		return cli.RunProjects(ctx, db, args, stdout, stderr)
	case "tasks":
		return cli.RunTasks(ctx, db, args, stdout, stderr)
	case "chat":
		return cli.RunChat(ctx, db, args, stdout, stderr)
	}
	return cli.RunRules(ctx, db, cli.KnownServers(dataDir), filepath.Join(dataDir, "rules.json"), args, stdout, stderr)
}

// isHelp reports whether args ask for a command's help.
func isHelp(args []string) bool {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" || a == "help" {
			return true
		}
	}
	return false
}

// synopses are what --help prints before the flags of the commands that
// parse flags here: the desktop app and serve get the whole usage's
// command list too, since plain `airlock --help` lands there.
var synopses = map[string]string{
	"": usage,
	"serve": `Usage: airlock serve [--data-dir DIR] [--addr HOST:PORT] [--allow-path DIR] [--allow-host NAME]

Runs Airlock without a window: the gateway for agents at /mcp, the UI in a
browser. It prints the UI's URL (with its access token), the MCP endpoint
and the agent token, and runs until interrupted.
`,
	"bridge": bridge.Synopsis,
}

// errHelpShown tells run that a command printed its help and has nothing
// else to do.
var errHelpShown = errors.New("help shown")

// done turns errHelpShown into success: asking for help is not a failure.
func done(err error) error {
	if errors.Is(err, errHelpShown) {
		return nil
	}
	return err
}
