// Command conformance runs the MCP project's server conformance suite
// (@modelcontextprotocol/conformance, pinned with the Node ≥ 22 it needs in
// this directory's package-lock.json) against the Go SDK's
// conformance/everything-server twice — directly over Streamable HTTP, and
// through `airlock serve` with the same server as a downstream stdio server —
// and reports, scenario by scenario, whether Airlock passes what the server
// passes on its own.
//
//	go run ./build/conformance -airlock build/bin/airlock-headless -report
//
// writes build/conformance-report.md. Another install of the suite (a newer
// release, in a directory of its own with its package.json) is tried with
// AIRLOCK_CONFORMANCE_DIR=that/directory; -scenario runs only some. conformance_test.go runs the same
// comparison as a test that fails for every scenario that passes directly
// but not through Airlock.
//
// The suite cannot send request headers (its `server` command takes only a
// URL), and Airlock wants `Authorization: Bearer <agent token>`; a small
// reverse proxy here adds the header and changes nothing else. A third run
// through the same proxy in front of the server itself is the control that
// shows the proxy is transparent.
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
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "conformance:", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	def := getenv("AIRLOCK_BIN")
	if def == "" {
		def = getenv("AIRLOCK_HEADLESS_BIN")
	}
	fs := flag.NewFlagSet("conformance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bin := fs.String("airlock", def, "airlock binary (default $AIRLOCK_BIN, else $AIRLOCK_HEADLESS_BIN)")
	report := fs.Bool("report", false, "write the Markdown report to -out (and exit 0 whatever the differences)")
	out := fs.String("out", filepath.Join(root, "build", "conformance-report.md"), "where -report writes")
	noPrefix := fs.String("no-prefix", "auto", "add everything-server with `servers add --no-prefix`: auto (when the binary knows the flag), on, off")
	keep := fs.Bool("keep", false, "keep the work directory (suite results, logs) and print its path")
	only := fs.String("scenario", "", "run only these scenarios (comma-separated), not every server scenario")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *bin == "" {
		return errors.New("no airlock binary: pass -airlock or set AIRLOCK_BIN")
	}
	if *noPrefix != "auto" && *noPrefix != "on" && *noPrefix != "off" {
		return fmt.Errorf("-no-prefix %q: want auto, on or off", *noPrefix)
	}
	abs, err := filepath.Abs(*bin)
	if err != nil {
		return err
	}
	var scenarios []string
	for _, n := range strings.Split(*only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			scenarios = append(scenarios, n)
		}
	}
	cmp, err := Compare(ctx, Options{Root: root, Airlock: abs, NoPrefix: *noPrefix, Keep: *keep, Scenarios: scenarios, Log: stderr})
	if err != nil {
		return err
	}
	md := cmp.Markdown()
	if *report {
		if err := os.WriteFile(*out, []byte(md), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\nReport: %s\n", md, *out)
		return nil
	}
	fmt.Fprint(stdout, md)
	if d := cmp.Differences(); len(d) > 0 {
		return fmt.Errorf("%d scenario(s) pass directly but fail through Airlock", len(d))
	}
	return nil
}

// repoRoot walks up from the working directory to the directory holding
// go.mod: go run starts at the root, go test in this directory.
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
