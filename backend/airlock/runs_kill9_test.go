package airlock_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/runner"
	"github.com/airlock-dev/airlock/backend/teams"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// runKill9Setup prepares dir for a run: a folder allowed for agents, a
// project, an AI worker in it whose run profile is command, and a task for
// it. It returns the task's id.
func runKill9Setup(t *testing.T, dir, work, command string) string {
	t.Helper()
	in := startWith(t, airlock.Options{DataDir: dir})
	if _, err := in.API.Builtin.AllowPath(work); err != nil {
		t.Fatal(err)
	}
	project, err := in.API.Agents.CreateProject("apollo", "")
	if err != nil {
		t.Fatal(err)
	}
	worker, err := in.API.Agents.Create(authz.AgentInput{Name: "builder", Kind: authz.KindWorker, Projects: []string{"apollo"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.API.Runs.SetProfile(worker.Agent.ID, runner.Profile{Template: runner.TemplateCustom, Command: command, WorkDir: work}); err != nil {
		t.Fatal(err)
	}
	card, err := in.API.Board.Create(project.ID, teams.TaskInput{Title: "Work", Status: teams.StatusTodo, AssigneeID: worker.Agent.ID})
	if err != nil {
		t.Fatal(err)
	}
	in.Close()
	return card.ID
}

// A run's credential is "a session opened for the run and ended with it"
// (README, Agent runs). When Airlock is killed (SIGKILL, a crash, a power
// cut) while a run is live, the next start records the run as failed — but
// the run's session stays open for its whole TTL (24 hours): whoever holds
// a copy of the run's MCP config (a process the run detached, a file the
// agent wrote) goes on acting as the agent through Airlock, after the run
// is shown as ended.
func TestRunCredentialEndsWhenAirlockIsKilled(t *testing.T) {
	runChildIfAsked(false)
	dir, work := t.TempDir(), t.TempDir()
	stolen := filepath.Join(work, "copy-of-mcp.json")
	agentCmd := filepath.Join(work, "agent.sh")
	if err := os.WriteFile(agentCmd, []byte("#!/bin/sh\ncp \"$AIRLOCK_MCP_CONFIG\" "+stolen+".tmp && mv "+stolen+".tmp "+stolen+"\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	taskID := runKill9Setup(t, dir, work, agentCmd)

	ch := startChild(t, "TestRunCredentialEndsWhenAirlockIsKilled", dir)
	var run runner.Run
	ch.rpc(t, "Runs.Start", &run, taskID)
	var token string
	testutil.Eventually(t, 30*time.Second, func() bool {
		b, _ := os.ReadFile(stolen)
		token = regexp.MustCompile(authz.SessionPrefix + `[A-Za-z0-9_-]+`).FindString(string(b))
		return token != ""
	}, "the run never copied its MCP config")
	ch.kill()

	in := startWith(t, airlock.Options{DataDir: dir})
	if got, err := in.API.Runs.Get(run.ID); err != nil || got.Status != runner.StatusFailed {
		t.Fatalf("the run after the restart = %+v, %v; want failed", got, err)
	}
	if code := mcpStatus(t, in, token); code != 401 {
		t.Errorf("the credential of a run that ended when Airlock was killed: HTTP %d after the restart, want 401 (revoked with the run)", code)
	}
}
