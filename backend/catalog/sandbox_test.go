package catalog_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// A server set to run in the sandbox never starts without one (fail
// closed), and says why.
func TestSandboxedServerDoesNotStartWithoutASandbox(t *testing.T) {
	for name, sandbox := range map[string]func() error{
		"no sandbox given":   nil,
		"none on the system": func() error { return errors.New("it is set to run in a sandbox, and there is none here: no Landlock") },
	} {
		t.Run(name, func(t *testing.T) {
			c := catalog.New("test", catalog.Options{Sandbox: sandbox, MaxCrashes: 1, BackoffMin: time.Millisecond, BackoffMax: time.Millisecond})
			t.Cleanup(c.Close)
			c.Apply([]core.ServerConfig{{ID: "files", Command: "/bin/cat", Sandbox: true}})
			var st core.ServerStatus
			testutil.Eventually(t, 10*time.Second, func() bool {
				st, _ = c.ServerStatus("files")
				return strings.Contains(st.LastError, "sandbox")
			}, "the server's status never said why it did not start")
			if st.PID != 0 {
				t.Errorf("the server runs (pid %d) without its sandbox", st.PID)
			}
		})
	}
}
