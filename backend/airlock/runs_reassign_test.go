package airlock_test

import (
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/runner"
	"github.com/airlock-dev/airlock/backend/teams"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// A task given to another agent while its run is live: the first agent's
// run works on, on a task it may no longer change (its update_task_status
// and report_completed are refused), the card shows it running, and the
// new assignee cannot get a run — by hand or by auto-run — "task is running
// already", until someone finds and stops the old run (found by a new-user
// test). As for a cancelled task or an agent taken off the project, the
// run ends when its task is no longer its agent's.
func TestRunEndsWhenItsTaskIsReassigned(t *testing.T) {
	rs := newRuns(t)
	other, err := rs.in.API.Agents.Create(authz.AgentInput{Name: "other", Kind: authz.KindWorker, Projects: []string{"apollo"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{rs.worker.Agent.ID, other.Agent.ID} {
		if _, err := rs.in.API.Runs.SetProfile(a, runner.Profile{Template: runner.TemplateCustom, Command: "/bin/sleep", Args: []string{"300"}, WorkDir: rs.work}); err != nil {
			t.Fatal(err)
		}
	}
	taskID := rs.task(t, teams.StatusInProgress)
	run, err := rs.in.API.Runs.Start(taskID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.in.API.Board.Assign(taskID, other.Agent.ID); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, func() bool {
		got, err := rs.in.API.Runs.Get(run.ID)
		return err == nil && got.Status != runner.StatusRunning
	}, "the run of %s goes on after its task was given to %s", rs.worker.Agent.Name, other.Agent.Name)
	if got, _ := rs.in.API.Runs.Get(run.ID); got.Status != runner.StatusStopped || !gone(run.PID) {
		t.Errorf("run after its task was reassigned = %+v (process gone %v), want stopped", got, gone(run.PID))
	}
	// The new assignee can be run for it now.
	next, err := rs.in.API.Runs.Start(taskID)
	if err != nil {
		t.Fatalf("a run for the new assignee: %v (%s)", err, core.ErrorCode(err))
	}
	if next.AgentID != other.Agent.ID {
		t.Errorf("the new run is %s's, want %s's", next.AgentID, other.Agent.ID)
	}
}
