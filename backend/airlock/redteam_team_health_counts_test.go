package airlock_test

import (
	"testing"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/teams"
)

// A coordinator works only in its projects (TestCoordinatorStaysInItsProjects:
// list_managed_agents and get_agent_action refuse another project). Its
// health_check still counts every project's agents, open tasks, active
// conversations and runs, and the number of projects: a coordinator of
// proj-001 watches another team's workload rise and fall.
func TestRedTeamHealthCheckCountsOtherProjects(t *testing.T) {
	c := newCrew(t)
	coord := c.session(t, "coordinator", "task") // assigned to proj-001 only
	before := ok(t, coord, "health_check", nil)

	if _, err := c.in.API.Agents.CreateProject("proj-002", "another team"); err != nil {
		t.Fatal(err)
	}
	other, err := c.in.API.Agents.Create(authz.AgentInput{Name: "other-worker", Kind: authz.KindWorker, Parent: "owner", Role: "tools", Projects: []string{"proj-002"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{"secret one", "secret two", "secret three"} {
		if _, err := c.in.API.Board.Create("proj-002", teams.TaskInput{Title: title, AssigneeID: other.Agent.ID, Status: teams.StatusTodo}); err != nil {
			t.Fatal(err)
		}
	}

	after := ok(t, coord, "health_check", nil)
	for _, k := range []string{"agents", "projects", "open_tasks"} {
		if before.body[k] != after.body[k] {
			t.Errorf("health_check of a proj-001 coordinator: %s went from %v to %v when another project grew", k, before.body[k], after.body[k])
		}
	}
}
