// Command airlock-bridge is `airlock bridge` on its own: a small cgo-free
// program (no GTK, no WebKit, no database) that relays an MCP client's
// stdio to a running Airlock over Streamable HTTP. Claude Desktop and other
// clients that start only stdio servers run one per connection, so it is
// kept light; the desktop binary would map its GUI libraries in each.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/airlock-dev/airlock/backend/bridge"
	"github.com/airlock-dev/airlock/backend/config"
	"github.com/airlock-dev/airlock/backend/core"
)

// defaultAddr is where Airlock listens unless told otherwise (the same
// default as airlock.DefaultAddr, which this program does not import).
const defaultAddr = "127.0.0.1:4750"

func main() {
	fs := flag.NewFlagSet("airlock-bridge", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	dataDir := fs.String("data-dir", "", "data directory (default $AIRLOCK_DATA_DIR or the user config dir)")
	token := fs.String("token", os.Getenv("AIRLOCK_TOKEN"), "agent token (default $AIRLOCK_TOKEN, else the data dir's token)")
	url := fs.String("url", os.Getenv("AIRLOCK_URL"), "Airlock MCP endpoint (default: the Airlock running on the data dir, else http://$AIRLOCK_ADDR/mcp)")
	purpose := fs.String("purpose", "", bridge.PurposeUsage)
	project := fs.String("project", "", bridge.ProjectUsage)
	version := fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), bridge.Synopsis, "\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	if *version {
		fmt.Println("airlock-bridge", core.Version)
		return
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "airlock-bridge: unexpected argument %q [invalid]\nhint: see 'airlock-bridge -h'\n", fs.Arg(0))
		os.Exit(2)
	}
	dir := *dataDir
	if dir == "" {
		var err error
		if dir, err = config.DefaultDataDir(os.Getenv); err != nil {
			fail(err)
		}
	}
	addr := os.Getenv("AIRLOCK_ADDR")
	if addr == "" {
		addr = defaultAddr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := bridge.Main(ctx, bridge.Options{DataDir: dir, URL: *url, Token: *token, DefaultAddr: addr,
		Purpose: *purpose, Project: *project}, os.Stdin, os.Stdout); err != nil {
		fail(err)
	}
}

func fail(err error) {
	var e *core.Error
	if errors.As(err, &e) {
		fmt.Fprintf(os.Stderr, "airlock-bridge: %s [%s]\n", e.Message, e.Code)
		if e.Hint != "" {
			fmt.Fprintln(os.Stderr, "hint:", e.Hint)
		}
	} else {
		fmt.Fprintln(os.Stderr, "airlock-bridge:", err)
	}
	os.Exit(1)
}
