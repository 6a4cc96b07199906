package runner_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/runner"
)

// Every run's log ends with a line saying how it ended ("ended: failed
// (exit status 3)", "ended: stopped ...") — except a run Airlock was
// killed during: the next start records it as failed ("Airlock stopped
// while the run was alive") but its log, which the task's detail shows
// and get_execution_log gives the agent, stops at the run's last output
// as if it were still running.
func TestLeftoverRunsLogSaysHowItEnded(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	f.task("tsk_1", "ag_ann", "in_progress")
	exec1, err := f.board.StartExecution("tsk_1", "ag_ann")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exec1.LogPath, []byte("[2026-01-01T09:00:00Z] [airlock] started, process 4242\n[2026-01-01T09:00:01Z] working on it\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.st.CreateRun(runner.Record{ID: exec1.ID, TaskID: "tsk_1", AgentID: "ag_ann", Trigger: runner.TriggerManual,
		PID: 0, Active: true, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	r2, err := runner.New(runner.Options{Store: f.st, Executions: f.board, Tasks: f.board, Agents: f.agents, Tokens: f.tokens, RunsDir: f.runsDir})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if run, _ := r2.Get(exec1.ID); run.Status != runner.StatusFailed {
		t.Fatalf("leftover run = %+v, want failed", run)
	}
	c, err := r2.Log(exec1.ID, runner.LogQuery{Tail: ptr(5)})
	if err != nil {
		t.Fatal(err)
	}
	if last := c.Lines[len(c.Lines)-1]; !strings.Contains(last, "ended") || !strings.Contains(last, "Airlock stopped") {
		t.Errorf("the leftover run's log ends with %q; want a line saying it ended as Airlock stopped while it was alive", last)
	}
}
