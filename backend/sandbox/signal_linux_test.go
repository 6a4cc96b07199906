package sandbox_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/sandbox"
)

// Landlock ABI 6 can scope signals (LANDLOCK_SCOPE_SIGNAL): a sandboxed
// process then cannot signal a process outside its domain. Without it a
// command could stop or kill Airlock itself (the test process stands in for
// it), which ends every agent's session and the approvals it waits for
// (found by a review). kill -0 checks the permission without sending
// anything; the command may still signal what it started.
func TestSandboxedCommandCannotSignalAirlock(t *testing.T) {
	_, data, project := homeLayout(t)
	sb := sandbox.New([]string{data})
	st := sb.Status()
	if !st.Enforced {
		t.Skipf("the kernel enforces no sandbox here: %s", st.Reason)
	}
	if abi, _ := strconv.Atoi(strings.TrimPrefix(st.Mechanism, "Landlock ABI ")); abi < 6 {
		t.Skipf("%s cannot scope signals", st.Mechanism)
	}
	if code, out := runArg(t, sb, project, `kill -0 $PPID`, data); code == 0 {
		t.Errorf("a sandboxed command may signal Airlock (pid %d): kill -0 succeeded %s", os.Getpid(), out)
	}
	if code, out := runArg(t, sb, project, `sleep 30 & kill $! && wait $!; test $? -gt 128`, data); code != 0 {
		t.Errorf("a sandboxed command cannot stop what it started: exit %d %s", code, out)
	}
}
