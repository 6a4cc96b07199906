package airlock_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/teams"
)

// The Board screen reloads the whole board (api.Board.Get) on every
// board:changed, and each card carries its task's full description, which
// no card shows (TaskCard.svelte; the detail loads it). One worker call
// within every limit — create_tasks_batch, 100 tasks with 32 KB
// descriptions — adds 3.2 MB to every reload the person's window makes,
// and the worker can send it again and again: a few dozen calls and each
// status change anywhere in the project costs the person's browser a
// hundred megabytes. A board of 100 cards must stay far below that.
func TestRedTeamWorkerBloatsTheBoardEveryoneReloads(t *testing.T) {
	c := newCrew(t)
	worker := c.session(t, "worker-frontend-01", "task")
	desc := strings.Repeat("x", teams.MaxDescription)
	tasks := make([]any, teams.MaxBatch)
	for i := range tasks {
		tasks[i] = map[string]any{"title": "padding", "description": desc}
	}
	ok(t, worker, "create_tasks_batch", map[string]any{"tasks": tasks})

	v, err := c.in.API.Board.Get(crewProject, "")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 1<<20 {
		t.Errorf("the board of %d cards is %d bytes, each reload; one worker call made it so", teams.MaxBatch, len(raw))
	}
}
