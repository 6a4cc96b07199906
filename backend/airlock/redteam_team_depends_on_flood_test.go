package airlock_test

import (
	"testing"

	"github.com/airlock-dev/airlock/backend/core"
)

// Every list an agent hands the team tools has a bound (MaxBatch tasks,
// MaxParticipants, message sizes) except depends_on: create_tasks_batch
// (any agent, from a task session) takes a task depending on the same task
// 50,000 times and looks each one up inside the write transaction before
// deduplicating. On SQLite's single connection every other agent's team
// call waits meanwhile: 200,000 entries (4.6 MB, well under the 16 MiB
// request cap) held a manager's create_tasks_batch for 20 s, and a worker
// can send it again and again. A list this long must be refused (too
// large, or invalid for naming one task 50,000 times) before any work is
// done.
func TestRedTeamWorkerStallsTheBoardWithAHugeDependsOn(t *testing.T) {
	c := newCrew(t)
	worker := c.session(t, "worker-frontend-01", "task")
	first := c.createTask(t, worker, "first", "")
	deps := make([]any, 50000)
	for i := range deps {
		deps[i] = first
	}
	r := tool(t, worker, "create_tasks_batch", map[string]any{"tasks": []any{map[string]any{"title": "second", "depends_on": deps}}})
	if !r.res.IsError || (r.code() != core.ETooLarge && r.code() != core.EInvalid) {
		t.Errorf("create_tasks_batch with depends_on of %d entries = %.300s (code %q); want a refusal with %q or %q", len(deps), textOf(r.res), r.code(), core.ETooLarge, core.EInvalid)
	}
}
