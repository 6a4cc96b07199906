package store_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/runner"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// TestMigrate0009Upgrade upgrades a database made by 0008 that has agents
// and rules: they stay, and the runner's tables appear empty and usable.
func TestMigrate0009Upgrade(t *testing.T) {
	gdb, path := migratedTo(t, "0008_relay_rules")
	if gdb.Migrator().HasTable("run_profiles") || gdb.Migrator().HasTable("agent_runs") {
		t.Fatal("0008 already has the runner's tables")
	}
	if err := store.Migrate(gdb); err != nil {
		t.Fatalf("migrate to newest: %v", err)
	}
	db := &store.DB{DB: gdb, Path: path}
	agents, err := store.NewAgents(db).ListAgents()
	if err != nil || len(agents) != 2 {
		t.Fatalf("agents after the upgrade: %d, %v; want the owner and default", len(agents), err)
	}
	runs := store.NewRuns(db)
	if ps, err := runs.Profiles(); err != nil || len(ps) != 0 {
		t.Fatalf("profiles after the upgrade = %v, %v; want none", ps, err)
	}
	if _, ok, err := runs.RunSettings(); ok || err != nil {
		t.Fatalf("runner settings after the upgrade: stored %v, %v; want none", ok, err)
	}
	p := runner.Profile{AgentID: authz.DefaultAgentID, Template: runner.TemplateScripted, ExtraArgs: []string{"s.yaml"},
		Args: []string{}, Env: map[string]string{}, UpdatedAt: time.Now().UTC().Truncate(time.Second)}
	if err := runs.SaveProfile(p); err != nil {
		t.Fatalf("save a profile after the upgrade: %v", err)
	}
}

func TestRunsStoreRoundTrip(t *testing.T) {
	db := testutil.MustOpenDB(t)
	runs := store.NewRuns(db)
	now := time.Date(2026, 2, 6, 9, 0, 0, 0, time.UTC)

	p := runner.Profile{AgentID: authz.DefaultAgentID, Template: runner.TemplateCustom, Command: "/bin/sh",
		Args: []string{"-c", "echo {{task_id}}"}, ExtraArgs: []string{}, WorkDir: "/tmp", Model: "m1",
		Env: map[string]string{"K": "v"}, Prompt: "do {{task_title}}", UpdatedAt: now}
	if err := runs.SaveProfile(p); err != nil {
		t.Fatal(err)
	}
	got, err := runs.Profile(authz.DefaultAgentID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, got); diff != "" {
		t.Errorf("profile (-saved +read):\n%s", diff)
	}
	p.Model = "m2"
	if err := runs.SaveProfile(p); err != nil {
		t.Fatalf("replace a profile: %v", err)
	}
	if got, _ := runs.Profile(authz.DefaultAgentID); got.Model != "m2" {
		t.Errorf("replaced profile has model %q, want m2", got.Model)
	}
	if _, err := runs.Profile("ag_nobody"); core.ErrorCode(err) != core.ENotFound {
		t.Errorf("profile of an unknown agent: %v, want not_found", err)
	}
	if err := runs.SaveProfile(runner.Profile{AgentID: "ag_nobody", Template: runner.TemplateCodex, UpdatedAt: now}); core.ErrorCode(err) != core.EConflict {
		t.Errorf("profile of an agent that does not exist: %v, want conflict (foreign key)", err)
	}

	s := runner.Settings{AutoRun: true, MaxConcurrent: 3, MaxAttempts: 2, RetryBackoffSeconds: 5, StopGraceSeconds: 2}
	if err := runs.SaveRunSettings(s); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := runs.RunSettings(); err != nil || !ok || got != s {
		t.Errorf("settings = %+v %v %v, want %+v stored", got, ok, err, s)
	}

	recs := []runner.Record{
		{ID: "exec_1", TaskID: "tsk_1", AgentID: authz.DefaultAgentID, Trigger: runner.TriggerManual, Template: "custom", Command: "sh -c", WorkDir: "/tmp", PID: 42, Active: true, CreatedAt: now},
		{ID: "exec_2", TaskID: "tsk_1", AgentID: authz.DefaultAgentID, Trigger: runner.TriggerAuto, Attempt: 1, Reason: "exit status 1", CreatedAt: now.Add(time.Minute)},
		{ID: "exec_3", TaskID: "tsk_2", AgentID: authz.DefaultAgentID, Trigger: runner.TriggerManual, CreatedAt: now},
	}
	for _, r := range recs {
		if err := runs.CreateRun(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := runs.CreateRun(recs[0]); core.ErrorCode(err) != core.EConflict {
		t.Errorf("a run created twice: %v, want conflict", err)
	}
	bad := recs[2]
	bad.ID, bad.Trigger = "exec_4", "sometimes"
	if err := runs.CreateRun(bad); err == nil {
		t.Error("a run with an unknown trigger was stored")
	}
	list, err := runs.TaskRuns("tsk_1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]runner.Record{recs[1], recs[0]}, list); diff != "" {
		t.Errorf("runs of tsk_1, newest first (-want +got):\n%s", diff)
	}
	active, err := runs.ActiveRuns()
	if err != nil || len(active) != 1 || active[0].ID != "exec_1" {
		t.Errorf("active runs = %+v %v, want exec_1", active, err)
	}
	ended := recs[0]
	ended.Active, ended.PID, ended.Reason = false, 0, "stopped by the user"
	if err := runs.UpdateRun(ended); err != nil {
		t.Fatal(err)
	}
	if got, _ := runs.Run("exec_1"); !cmp.Equal(got, ended) {
		t.Errorf("updated run = %+v, want %+v", got, ended)
	}
	if active, _ := runs.ActiveRuns(); len(active) != 0 {
		t.Errorf("active runs after the end = %+v, want none", active)
	}
	if err := runs.UpdateRun(runner.Record{ID: "exec_9", Trigger: runner.TriggerManual}); core.ErrorCode(err) != core.ENotFound {
		t.Errorf("update of an unknown run: %v, want not_found", err)
	}

	// An agent's profile goes with the agent; its runs stay (history).
	svc, err := authz.New(store.NewAgents(db), authz.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.DeleteAgent(authz.DefaultAgentID); err != nil {
		t.Fatal(err)
	}
	if _, err := runs.Profile(authz.DefaultAgentID); core.ErrorCode(err) != core.ENotFound {
		t.Errorf("profile of a deleted agent: %v, want not_found", err)
	}
	if list, _ := runs.TaskRuns("tsk_1"); len(list) != 2 {
		t.Errorf("runs of a deleted agent = %d, want 2 kept", len(list))
	}
}
