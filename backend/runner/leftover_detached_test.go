package runner_test

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/runner"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// A process a run detached (setsid: a daemon, a dev server, a watcher)
// is ended with the run when the run is stopped (TestStopEndsTheProcessGroup),
// but not when the run's program ends by itself: it runs on, in the task's
// folder, carrying the run's id, long after the board shows the run
// completed (found by a new-user test: `setsid ... &` in a custom command
// was still running after the run ended).
func TestRunEndingByItselfEndsWhatItDetached(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	f.task("tsk_1", "ag_ann", "in_progress")
	// The script waits until its child has left the group, so that the
	// child is detached before the run ends.
	f.profile(t, runner.Profile{AgentID: "ag_ann", Template: runner.TemplateCustom,
		Command: f.script(t, "detacher", `setsid sh -c 'echo $$ > away.pid; exec sleep 300' </dev/null >/dev/null 2>&1 &
while [ ! -s away.pid ]; do :; done
echo "away=$(cat away.pid)"`)})
	run, err := f.r.Start("tsk_1")
	if err != nil {
		t.Fatal(err)
	}
	run = f.ended(t, run.ID)
	if run.Status != runner.StatusCompleted {
		t.Fatalf("run = %+v, want completed", run)
	}
	away := 0
	for _, l := range f.logLines(t, run.ID) {
		if v, ok := strings.CutPrefix(l, "away="); ok {
			away, _ = strconv.Atoi(v)
		}
	}
	if away == 0 {
		t.Fatalf("the run never said which process it detached: %q", f.logLines(t, run.ID))
	}
	t.Cleanup(func() { syscall.Kill(away, syscall.SIGKILL) })
	testutil.Eventually(t, 10*time.Second, func() bool { return gone(away) || zombie(away) },
		"the process %d the run detached still runs after the run completed", away)
}

// zombie reports whether pid has exited and waits to be reaped by its
// parent (init, here).
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] == 'Z'
}
