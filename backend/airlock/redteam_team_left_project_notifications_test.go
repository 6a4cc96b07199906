package airlock_test

import (
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/authz"
)

// A manager taken off a project hears nothing more of that project's work.
// Today the tasks it created there still notify it of every change (title,
// status, blocked reason), and its task session — connected with its token
// and no ?project, so working in its only project, proj-002 — has them
// attached to its next tool response: the responder claims notifications of
// every project when the session names none. Its proj-002 session via
// ?project=proj-002 filters them out; the same agent one URL parameter away
// reads them.
func TestRedTeamManagerTakenOffAProjectStillHearsOfItsTasks(t *testing.T) {
	c := newCrew(t)
	if _, err := c.in.API.Agents.CreateProject("proj-002", "the manager's next project"); err != nil {
		t.Fatal(err)
	}
	mgr := c.session(t, "manager-dev", "task")
	task := c.createTask(t, mgr, "build login", c.id("worker-frontend-01"))

	projects := []string{"proj-002"}
	if _, err := c.in.API.Agents.Update(c.id("manager-dev"), authz.AgentUpdate{Projects: &projects}); err != nil {
		t.Fatal(err)
	}
	const secret = "the proj-001 API key leaked, rotate it"
	worker := c.session(t, "worker-frontend-01", "task")
	ok(t, worker, "update_task_status", map[string]any{"task_id": task, "status": "in_progress"})
	ok(t, worker, "update_task_status", map[string]any{"task_id": task, "status": "blocked", "blocked_reason": secret})

	moved := c.connect(t, c.agents["manager-dev"].Token, "?purpose=task", nil) // its only project: proj-002
	if r := ok(t, moved, "get_my_tasks", nil); strings.Contains(textOf(r.res), secret) || strings.Contains(textOf(r.res), "build login") {
		t.Errorf("a manager now only in proj-002 is handed a proj-001 task's news: %s", textOf(r.res))
	}
}
