// Command bench measures Airlock as agents experience it and writes a
// Markdown report: `airlock serve` runs as its own process in front of
// @modelcontextprotocol/server-everything, and a separate client process
// (this program, run again in its client role) calls `echo` through it, each
// session with its own connection pool. In the same run, in interleaved
// rounds, the same calls go to server-everything directly over stdio (the
// floor) and through supergateway (stateful Streamable HTTP), so the report's
// ratios compare numbers taken at the same moment of a shared machine.
//
//	go run ./build/bench -airlock build/bin/airlock -out build/bench-report.md
//	go run ./build/bench -quick ...   (a smoke run: small counts, short idle wait)
//
// `go tool task bench` installs the npm peers, builds the binaries and runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
		os.Exit(1)
	}
}

// run is the whole program with its environment passed in.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	switch getenv(roleEnv) {
	case "client":
		return runClient(ctx, stdin, stdout)
	case "relay":
		return runRelay(ctx, getenv(relayAddrEnv), args)
	}
	cfg, err := parseFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	return orchestrate(ctx, cfg, stdout, stderr)
}

// config is everything a run needs, from flags and their -quick defaults.
type config struct {
	Airlock  string // the airlock binary measured
	Headless string // optional: the headless build, measured as its own column
	// Alone measures the desktop build serving itself (AIRLOCK_HANDOFF=0)
	// as its own column: what -airlock costs without the headless build
	// beside it.
	Alone    bool
	Baseline string // optional: another airlock build (an older commit), measured as its own column
	// Baseline2 is a second older build, measured as its own column too
	// (e.g. the build the figures came from, and the build before a
	// change); the targets compare with Baseline.
	Baseline2 string
	Bridge    string // the airlock-bridge binary (default: beside -airlock; else `airlock bridge`)
	Floor     bool   // measure the transport floor (build/bench's own minimal relay) too
	Out       string
	Append    string // a Markdown file appended to the report (the go test -bench report)
	Quick     bool
	NoPrefix  bool

	Rounds       int
	Tool         string
	SeqCalls     int
	ConcSessions int
	ConcCalls    int
	LoadSessions int
	LoadCalls    int
	LoadPeers    bool // run the many-session load against supergateway too
	BridgeCalls  int
	Warmup       int
	IdleAfter    time.Duration
	IdleInterval time.Duration
	Protocol     string
	MemstatsPath string
	ProfileDir   string        // where the profiling phase writes its pprof files ("" skips it)
	ProfileFor   time.Duration // length of each profile

	Node         string
	Everything   string // server-everything's dist/index.js
	Supergateway string // supergateway's dist/index.js

	Root    string   // the repository root
	Command []string // the command line, for the report
}

func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (*config, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	c := &config{Root: root}
	// The desktop build is the one users run; with both builds at hand the
	// headless one becomes an extra column (its RSS and start-up differ:
	// no GTK/WebKit libraries to map).
	defAirlock, defHeadless := getenv("AIRLOCK_BIN"), getenv("AIRLOCK_HEADLESS_BIN")
	if defAirlock == "" {
		defAirlock, defHeadless = defHeadless, ""
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Airlock, "airlock", defAirlock, "airlock binary to measure (default $AIRLOCK_BIN, else $AIRLOCK_HEADLESS_BIN)")
	fs.StringVar(&c.Headless, "headless", defHeadless, "the headless airlock build, measured as an extra column (default $AIRLOCK_HEADLESS_BIN when $AIRLOCK_BIN is set; empty: none)")
	fs.BoolVar(&c.Alone, "alone", false, "also measure -airlock with AIRLOCK_HANDOFF=0 (the desktop build serving itself, not handing serve to the headless build beside it) as an extra column")
	fs.StringVar(&c.Baseline, "baseline", "", "a second airlock binary (e.g. a build of an older commit) measured in the same rounds as its own column; the 'today's calls/s' target compares with it")
	fs.StringVar(&c.Baseline2, "baseline2", "", "a third airlock binary, measured as its own column too")
	fs.StringVar(&c.Bridge, "bridge", "", "the airlock-bridge binary measured as the bridge (default: airlock-bridge beside -airlock, else `AIRLOCK bridge`)")
	fs.BoolVar(&c.Floor, "floor", true, "measure the transport floor too: a minimal HTTP-to-stdio relay (this program, no SDK, no audit) in front of the same server")
	fs.StringVar(&c.Out, "out", filepath.Join(root, "build", "bench-report.md"), "Markdown report to write")
	fs.StringVar(&c.Append, "append", "", "Markdown file to append to the report (the in-process go test -bench report)")
	fs.BoolVar(&c.Quick, "quick", false, "smoke run: one round, small counts, 1 s idle wait (flags given explicitly still win)")
	fs.BoolVar(&c.NoPrefix, "no-prefix", false, "add server-everything with `servers add --no-prefix` (then -tool defaults to echo)")
	fs.IntVar(&c.Rounds, "rounds", 3, "interleaved rounds; the report shows medians")
	fs.StringVar(&c.Tool, "tool", "everything__echo", "the echo tool's name as Airlock exposes it")
	fs.IntVar(&c.SeqCalls, "seq-calls", 2000, "calls in the sequential (one session) test")
	fs.IntVar(&c.ConcSessions, "conc-sessions", 8, "sessions in the concurrent test")
	fs.IntVar(&c.ConcCalls, "conc-calls", 4000, "calls in the concurrent test, shared by its sessions")
	fs.IntVar(&c.LoadSessions, "load-sessions", 200, "sessions in the load test")
	fs.IntVar(&c.LoadCalls, "load-calls", 100, "calls per session in the load test")
	fs.BoolVar(&c.LoadPeers, "load-peers", false, "run the load test against supergateway too (it starts one server-everything per session)")
	fs.IntVar(&c.BridgeCalls, "bridge-calls", 500, "calls through `airlock bridge`")
	fs.IntVar(&c.Warmup, "warmup", 50, "untimed calls per session before each timed test")
	fs.DurationVar(&c.IdleAfter, "idle-after", time.Minute, "wait after the last load before measuring idle CPU")
	fs.DurationVar(&c.IdleInterval, "idle-interval", 10*time.Second, "how long idle CPU is measured")
	fs.StringVar(&c.Protocol, "protocol", "2025-11-25", "MCP protocol version the clients ask for (empty: the SDK's default)")
	fs.StringVar(&c.MemstatsPath, "memstats-path", "/debug/vars", "expvar path on Airlock's address with memstats.TotalAlloc, for allocations per call (absent: reported as not exposed)")
	fs.StringVar(&c.ProfileDir, "profile", "", "after the rounds, profile Airlock (GET /debug/pprof/...) while a client drives it sequentially and with the concurrent sessions; write the pprof files to this directory and a summary to the report")
	fs.DurationVar(&c.ProfileFor, "profile-for", 10*time.Second, "length of each profile")
	fs.StringVar(&c.Node, "node", "node", "node for server-everything and supergateway")
	fs.StringVar(&c.Everything, "everything", filepath.Join(root, "backend", "testutil", "mcpservers", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"), "server-everything's entry script")
	fs.StringVar(&c.Supergateway, "supergateway", filepath.Join(root, "build", "bench", "node_modules", "supergateway", "dist", "index.js"), "supergateway's entry script")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	def := func(name string, dst any, v any) {
		if set[name] {
			return
		}
		switch d := dst.(type) {
		case *int:
			*d = v.(int)
		case *time.Duration:
			*d = v.(time.Duration)
		case *string:
			*d = v.(string)
		}
	}
	if c.NoPrefix {
		def("tool", &c.Tool, "echo")
	}
	if c.Quick {
		def("rounds", &c.Rounds, 1)
		def("seq-calls", &c.SeqCalls, 100)
		def("conc-calls", &c.ConcCalls, 200)
		def("load-sessions", &c.LoadSessions, 20)
		def("load-calls", &c.LoadCalls, 10)
		def("bridge-calls", &c.BridgeCalls, 20)
		def("warmup", &c.Warmup, 5)
		def("idle-after", &c.IdleAfter, time.Second)
		def("idle-interval", &c.IdleInterval, time.Second)
		def("profile-for", &c.ProfileFor, 2*time.Second)
	}
	if c.Airlock == "" {
		return nil, errors.New("no airlock binary: pass -airlock or set AIRLOCK_BIN (go tool task bench does)")
	}
	for _, p := range []*string{&c.Airlock, &c.Headless, &c.Baseline, &c.Baseline2} {
		if *p != "" {
			if *p, err = filepath.Abs(*p); err != nil {
				return nil, err
			}
			if _, err := os.Stat(*p); err != nil {
				return nil, fmt.Errorf("%v: build it with `go tool task build` or `go tool task build:headless`", err)
			}
		}
	}
	if c.Headless == c.Airlock {
		c.Headless = ""
	}
	if c.Bridge == "" {
		if b := filepath.Join(filepath.Dir(c.Airlock), "airlock-bridge"); fileExists(b) {
			c.Bridge = b
		}
	} else if c.Bridge, err = filepath.Abs(c.Bridge); err != nil {
		return nil, err
	} else if !fileExists(c.Bridge) {
		return nil, fmt.Errorf("-bridge %s: no such file: build it with `go tool task build`", c.Bridge)
	}
	for _, chk := range []struct{ path, fix string }{
		{c.Everything, "run `go tool task deps:npm`"},
		{c.Supergateway, "run `npm ci --no-audit --no-fund` in build/bench (go tool task bench does)"},
	} {
		if _, err := os.Stat(chk.path); err != nil {
			return nil, fmt.Errorf("%v: %s", err, chk.fix)
		}
	}
	if c.Rounds < 1 || c.SeqCalls < 1 || c.ConcSessions < 1 || c.ConcCalls < 1 || c.LoadSessions < 1 || c.LoadCalls < 1 {
		return nil, errors.New("rounds, sessions and calls must be at least 1")
	}
	c.Command = append([]string{"go", "run", "./build/bench"}, args...)
	return c, nil
}

// repoRoot walks up from the working directory to the directory holding
// go.mod, so the program works from the root (go run) and from its own
// directory (go test).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s: run from the Airlock repository", dir)
		}
	}
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

func goVersion() string { return runtime.Version() }

func runtimeCPUs() int { return runtime.NumCPU() }

// shellQuote quotes s for sh -c (supergateway runs its --stdio command
// through a shell).
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
