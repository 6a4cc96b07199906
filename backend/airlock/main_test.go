package airlock_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/airlock-dev/airlock/backend/agentscript"
	"github.com/airlock-dev/airlock/backend/airlock"
)

func TestMain(m *testing.M) {
	// The runner launches the scripted agent as `<this program>
	// agent-script ...` ({{airlock}} is the running program): here that is
	// this test binary, which then is the scripted agent as airlock is.
	if len(os.Args) > 1 && os.Args[1] == "agent-script" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := agentscript.Run(ctx, os.Args[2:], os.Getenv, os.Stdout, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "airlock:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	airlock.TuneRuntime() // as the binary does
	os.Exit(m.Run())
}
