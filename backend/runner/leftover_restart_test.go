package runner_test

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/runner"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// When Airlock was killed, the next start ends the runs left alive — by
// signalling the process group of the run's recorded process id. But a
// run's process group dies with Airlock anyway (its guard kills it); what
// survives is what left the group (setsid), and the restart leaves it
// running although it carries the run's id (AIRLOCK_RUN_ID), which a Stop
// would have used to find and end it.
func TestLeftoverRunsDetachedProcessesAreEnded(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	f.task("tsk_1", "ag_ann", "in_progress")
	exec1, _ := f.board.StartExecution("tsk_1", "ag_ann")
	// The run's own process is gone (killed with Airlock's process group).
	dead := exec.Command("/bin/true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	// What it detached is still there, in a session of its own.
	away := exec.Command("/bin/sh", "-c", "exec sleep 300")
	away.Env = []string{"PATH=/usr/bin:/bin", "AIRLOCK_RUN_ID=" + exec1.ID}
	away.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := away.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { away.Wait(); close(exited) }()
	t.Cleanup(func() { away.Process.Kill(); <-exited })
	if err := f.st.CreateRun(runner.Record{ID: exec1.ID, TaskID: "tsk_1", AgentID: "ag_ann", Trigger: runner.TriggerManual,
		PID: dead.Process.Pid, Active: true, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}

	r2, err := runner.New(runner.Options{Store: f.st, Executions: f.board, Tasks: f.board, Agents: f.agents, Tokens: f.tokens, RunsDir: f.runsDir})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if run, _ := r2.Get(exec1.ID); run.Status != runner.StatusFailed {
		t.Errorf("leftover run = %+v, want failed", run)
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		select {
		case <-exited:
			return true
		default:
			return false
		}
	}, "the process %d the leftover run detached still runs after the restart ended the run", away.Process.Pid)
}
