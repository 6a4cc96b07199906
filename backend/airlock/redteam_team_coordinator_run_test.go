package airlock_test

import (
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/teams"
)

// A coordinator works only in its projects (TestCoordinatorStaysInItsProjects).
// An agent in two projects that is running for a task of the other project
// must not show that run to a coordinator of the first: not its execution
// id in list_managed_agents, and above all no "stop" from get_agent_action,
// which tells the coordinator to kill another team's run because nothing is
// open for the agent in its own project. Today summarize looks for a running
// execution of the agent in every project.
func TestRedTeamCoordinatorIsToldToStopAnotherProjectsRun(t *testing.T) {
	c := newCrew(t)
	if _, err := c.in.API.Agents.CreateProject("proj-002", "another team"); err != nil {
		t.Fatal(err)
	}
	qa := c.id("worker-qa-01")
	if _, err := c.in.API.Agents.Assign(qa, "proj-002"); err != nil { // now in proj-001 and proj-002
		t.Fatal(err)
	}
	work, err := c.in.API.Board.Create("proj-002", teams.TaskInput{Title: "another team's work", AssigneeID: qa, Status: teams.StatusTodo})
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.in.Teams().StartExecution(work.ID, qa) // the agent runs for proj-002
	if err != nil {
		t.Fatal(err)
	}

	coord := c.session(t, "coordinator", "task") // assigned to proj-001 only
	if r := ok(t, coord, "list_managed_agents", nil); strings.Contains(textOf(r.res), run.ID) {
		t.Errorf("list_managed_agents of a proj-001 coordinator shows the agent's proj-002 run %s: %s", run.ID, textOf(r.res))
	}
	r := ok(t, coord, "get_agent_action", map[string]any{"agent_id": "worker-qa-01"})
	if r.str("action") == teams.AgentStop || strings.Contains(textOf(r.res), run.ID) {
		t.Errorf("get_agent_action(worker-qa-01) for a proj-001 coordinator = %s; want no word of (and no stop for) its proj-002 run %s", textOf(r.res), run.ID)
	}
}
