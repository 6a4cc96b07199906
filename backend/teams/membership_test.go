package teams_test

import (
	"slices"
	"testing"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/teams"
)

// An agent taken off a project keeps no open task there (found by a
// new-user test: its tasks stayed assigned to an agent that could no longer
// see them).
func TestReleaseTasksOutside(t *testing.T) {
	w := newWorld(t)
	doing := w.task(t, "manager-dev", w.id("worker-frontend-01"), "doing", teams.StatusInProgress)
	waiting := w.task(t, "manager-dev", w.id("worker-frontend-01"), "waiting", teams.StatusTodo)
	stuck := w.task(t, "manager-dev", w.id("worker-frontend-01"), "stuck", teams.StatusBlocked)
	finished := w.task(t, "manager-dev", w.id("worker-frontend-01"), "finished", teams.StatusDone)
	other := w.task(t, "manager-dev", w.id("worker-frontend-02"), "someone else's", teams.StatusInProgress)

	// Still on the project: nothing moves.
	if rel, err := w.svc.ReleaseTasksOutside(); err != nil || len(rel) != 0 {
		t.Fatalf("released %v, %v; want nothing", rel, err)
	}
	if _, err := w.az.Unassign("worker-frontend-01", "proj-001"); err != nil {
		t.Fatal(err)
	}
	before := len(w.events.Events(teams.EventBoardChanged))
	rel, err := w.svc.ReleaseTasksOutside(w.id("worker-frontend-01"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rel {
		ids = append(ids, r.Task.ID)
		if r.Agent != "worker-frontend-01" || r.WasInProgress != (r.Task.ID == doing.ID) {
			t.Errorf("released %+v", r)
		}
	}
	slices.Sort(ids)
	want := []string{doing.ID, waiting.ID, stuck.ID}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("released %v, want the open tasks %v", ids, want)
	}
	for _, c := range []struct {
		task           teams.Task
		status, holder string
	}{
		{doing, teams.StatusTodo, ""},
		{waiting, teams.StatusTodo, ""},
		{stuck, teams.StatusBlocked, ""},
		{finished, teams.StatusDone, w.id("worker-frontend-01")},
		{other, teams.StatusInProgress, w.id("worker-frontend-02")},
	} {
		got, err := w.svc.Task(c.task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != c.status || got.AssigneeID != c.holder {
			t.Errorf("%s: %s held by %q, want %s held by %q", c.task.Title, got.Status, got.AssigneeID, c.status, c.holder)
		}
	}
	d, err := w.svc.Detail(doing.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := d.History[len(d.History)-2:]
	if last[0].Kind != teams.EventAssigned || last[0].Detail != "unassigned: worker-frontend-01 is no longer in the project" || last[0].AgentID != authz.OwnerID ||
		last[1].Kind != teams.EventStatus || last[1].FromStatus != teams.StatusInProgress || last[1].ToStatus != teams.StatusTodo {
		t.Errorf("history ends with %+v", last)
	}
	if n := len(w.events.Events(teams.EventBoardChanged)) - before; n != 1 {
		t.Errorf("%d board:changed events, want 1", n)
	}
	// Again: nothing left to release.
	if rel, err := w.svc.ReleaseTasksOutside(); err != nil || len(rel) != 0 {
		t.Fatalf("second run released %v, %v; want nothing", rel, err)
	}
}

// staleDirectory answers with the agents as they were when it was made.
type staleDirectory struct {
	agents []authz.Agent
	*authz.Service
}

func (d staleDirectory) Agents() ([]authz.Agent, error) { return d.agents, nil }

// An agent added back to its project (and given a task there) after the
// release read who is where keeps that task: the release checks the
// projects again in its transaction (found by a code review).
func TestReleaseTasksOutsideChecksProjectsInItsTransaction(t *testing.T) {
	w := newWorld(t)
	worker := w.id("worker-frontend-01")
	if _, err := w.az.Unassign("worker-frontend-01", "proj-001"); err != nil {
		t.Fatal(err)
	}
	agents, err := w.az.Agents() // read while it is off the project
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.az.Assign("worker-frontend-01", "proj-001"); err != nil {
		t.Fatal(err)
	}
	task := w.task(t, "manager-dev", worker, "given after its return", teams.StatusTodo)
	svc, err := teams.New(store.NewTeams(w.db), staleDirectory{agents, w.az}, teams.Options{Events: w.events, LogDir: w.logDir})
	if err != nil {
		t.Fatal(err)
	}
	if rel, err := svc.ReleaseTasksOutside(worker); err != nil || len(rel) != 0 {
		t.Fatalf("released %v (%v); want nothing: the agent is in the project again", rel, err)
	}
	if got, err := w.svc.Task(task.ID); err != nil || got.AssigneeID != worker {
		t.Errorf("task after the release: %+v (%v), want it still %s's", got, err, worker)
	}
}
