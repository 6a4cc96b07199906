package store_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/teams"
)

// TestMigrate0007Upgrade upgrades a database made by 0006 that holds
// agents and a project: they stay, and the team tables appear and accept
// tasks, conversations, notifications and executions that refer to them.
// Deleting the project takes its tasks and conversations with it; deleting
// an agent keeps the tasks it was assigned, unassigned.
func TestMigrate0007Upgrade(t *testing.T) {
	gdb, path := migratedTo(t, "0006_agents")
	if gdb.Migrator().HasTable("tasks") {
		t.Fatal("0006 already has tasks")
	}
	now := time.Now().UTC()
	// Rows written with the 0006 schema's columns.
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO projects (id, name, description, created_at, updated_at) VALUES (?,?,?,?,?)", []any{"pj_1", "apollo", "", now, now}},
		{"INSERT INTO agents (id, name, kind, parent_id, status, role_name, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)",
			[]any{"ag_w", "worker", "worker", "ag_owner", "active", "default", now, now}},
		{"INSERT INTO project_agents (project_id, agent_id, created_at) VALUES (?,?,?)", []any{"pj_1", "ag_w", now}},
	} {
		if err := gdb.Exec(q.sql, q.args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Migrate(gdb); err != nil {
		t.Fatalf("migrate to newest: %v", err)
	}
	db := &store.DB{DB: gdb, Path: path}
	agents, err := store.NewAgents(db).ListAgents()
	if err != nil || len(agents) != 3 {
		t.Fatalf("agents after the upgrade: %+v, %v", agents, err)
	}
	st := store.NewTeams(db)
	task := teams.Task{ID: "tsk_1", ProjectID: "pj_1", Title: "t", Status: teams.StatusTodo, Priority: teams.PriorityHigh, AssigneeID: "ag_w",
		CreatedByAgentID: authz.OwnerID, DependsOn: []string{}, CreatedAt: now, UpdatedAt: now}
	if err := st.CreateTask(task); err != nil {
		t.Fatal(err)
	}
	conv := teams.Conversation{ID: "conv_1", ProjectID: "pj_1", State: teams.ConversationActive, CreatedAt: now, UpdatedAt: now,
		Participants: []teams.Participant{{AgentID: "ag_w", Role: teams.RoleMember, JoinedAt: now}, {AgentID: authz.OwnerID, Role: teams.RoleMember, JoinedAt: now}}}
	if err := st.CreateConversation(conv); err != nil {
		t.Fatal(err)
	}
	m := teams.Message{ID: "msg_1", ConversationID: "conv_1", SenderID: authz.OwnerID, Content: "hi", CreatedAt: now}
	if err := st.AddMessage(&m); err != nil || m.Seq == 0 {
		t.Fatalf("add message: seq %d, %v", m.Seq, err)
	}
	if err := st.CreateNotification(teams.Notification{ID: "ntf_1", TargetAgentID: "ag_w", TargetProjectID: "pj_1", Type: teams.NotifyMessage, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateExecution(teams.Execution{ID: "exec_1", TaskID: "tsk_1", AgentID: "ag_w", ProjectID: "pj_1", Status: teams.ExecRunning, StartedAt: now}); err != nil {
		t.Fatal(err)
	}
	// The checks hold for every writer.
	bad := task
	bad.ID, bad.Status = "tsk_2", "finished"
	if err := st.CreateTask(bad); err == nil {
		t.Error("a task with an unknown status was stored")
	}
	if err := st.CreateNotification(teams.Notification{ID: "ntf_2", TargetAgentID: "ag_nobody", Type: teams.NotifyMessage, CreatedAt: now}); core.ErrorCode(err) != core.EConflict {
		t.Errorf("a notification for an unknown agent: %v", err)
	}
	// Deleting the agent unassigns its task and drops its notifications.
	if err := store.NewAgents(db).DeleteAgent("ag_w"); err != nil {
		t.Fatalf("delete the agent: %v", err)
	}
	got, err := st.GetTask("tsk_1")
	if err != nil || got.AssigneeID != "" || got.CreatedByAgentID != authz.OwnerID {
		t.Errorf("the task after its assignee was deleted: %+v, %v", got, err)
	}
	if ns, _ := st.UnreadNotifications("ag_w", ""); len(ns) != 0 {
		t.Errorf("notifications of a deleted agent: %+v", ns)
	}
	// Its executions stay in the task's history (0014).
	if e, err := st.GetExecution("exec_1"); err != nil || e.AgentID != "ag_w" {
		t.Errorf("the execution of a deleted agent: %+v, %v; want it kept, with the agent's id", e, err)
	}
	c, err := st.GetConversation("conv_1")
	if err != nil {
		t.Fatal(err)
	}
	var who []string
	for _, p := range c.Participants {
		who = append(who, p.AgentID)
	}
	if diff := cmp.Diff([]string{authz.OwnerID}, who); diff != "" {
		t.Errorf("participants after the agent's deletion (-want +got):\n%s", diff)
	}
	// Deleting the project takes the rest.
	if err := store.NewAgents(db).DeleteProject("pj_1"); err != nil {
		t.Fatalf("delete the project: %v", err)
	}
	for _, table := range []string{"tasks", "conversations", "chat_messages", "conversation_participants", "agent_notifications", "execution_logs"} {
		var n int64
		if err := gdb.Table(table).Count(&n).Error; err != nil || n != 0 {
			t.Errorf("%s after the project's deletion: %d rows, %v", table, n, err)
		}
	}
}

// A database made before the teams feature was merged may have run 0008
// (relay rules) without 0007: the upgrade runs 0007 and leaves 0008 alone.
func TestMigrate0007AfterRelayRules(t *testing.T) {
	path := filepath.Join(t.TempDir(), store.FileName)
	gdb, err := gorm.Open(sqlite.Open(store.DSN(path)), &gorm.Config{Logger: logger.Discard, TranslateError: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := gdb.DB(); err == nil {
			sqlDB.Close()
		}
	})
	if err := store.MigrateTo(gdb, "0006_agents"); err != nil {
		t.Fatal(err)
	}
	// What 0008 did on such a database, recorded as run.
	now := time.Now().UTC()
	for _, q := range []string{
		`INSERT INTO tool_permission_rules (id, kind, auto_approve, priority, conditions, created_at, updated_at) VALUES ('default-sampling', 'sampling', 1, 0, '[]', ?, ?)`,
		`INSERT INTO tool_permission_rules (id, kind, auto_approve, priority, conditions, created_at, updated_at) VALUES ('default-elicitation', 'elicitation', 1, 0, '[]', ?, ?)`,
	} {
		if err := gdb.Exec(q, now, now).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := gdb.Exec(`INSERT INTO schema_migrations (id) VALUES ('0008_relay_rules')`).Error; err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(gdb); err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	if !gdb.Migrator().HasTable("tasks") {
		t.Fatal("0007 did not run")
	}
	var n int64
	gdb.Table("tool_permission_rules").Where("kind IN ('sampling', 'elicitation')").Count(&n)
	if n != 2 {
		t.Errorf("%d relay rules after the upgrade, want the 2 made before", n)
	}
}

// TestMigrate0014Upgrade: executions stored before 0014 stay, with their
// indexes and checks, and from then on outlive their agent.
func TestMigrate0014Upgrade(t *testing.T) {
	gdb, path := migratedTo(t, "0013_session_subs")
	now := time.Now().UTC()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO projects (id, name, description, created_at, updated_at) VALUES (?,?,?,?,?)", []any{"pj_1", "apollo", "", now, now}},
		{"INSERT INTO agents (id, name, kind, parent_id, status, role_name, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)",
			[]any{"ag_w", "worker", "worker", "ag_owner", "active", "default", now, now}},
		{"INSERT INTO tasks (id, project_id, title, status, status_rank, priority, priority_rank, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
			[]any{"tsk_1", "pj_1", "t", "in_progress", 0, "high", 1, now, now}},
		{"INSERT INTO execution_logs (id, task_id, agent_id, project_id, status, started_at, exit_code, log_file_path) VALUES (?,?,?,?,?,?,?,?)",
			[]any{"exec_1", "tsk_1", "ag_w", "pj_1", "completed", now, 0, "/logs/exec_1.log"}},
	} {
		if err := gdb.Exec(q.sql, q.args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Migrate(gdb); err != nil {
		t.Fatalf("migrate to newest: %v", err)
	}
	db := &store.DB{DB: gdb, Path: path}
	st := store.NewTeams(db)
	e, err := st.GetExecution("exec_1")
	if err != nil || e.Status != teams.ExecCompleted || e.LogFilePath != "/logs/exec_1.log" || e.ExitCode == nil || *e.ExitCode != 0 {
		t.Fatalf("the execution after the upgrade: %+v, %v", e, err)
	}
	for _, idx := range []string{"idx_execution_logs_agent", "idx_execution_logs_task_id"} {
		if !gdb.Migrator().HasIndex("execution_logs", idx) {
			t.Errorf("index %s lost in the upgrade", idx)
		}
	}
	bad := e
	bad.ID, bad.Status = "exec_2", "finished"
	if err := st.CreateExecution(bad); err == nil {
		t.Error("an execution with an unknown status was stored after the upgrade")
	}
	bad.Status, bad.TaskID = teams.ExecRunning, "tsk_none"
	if err := st.CreateExecution(bad); err == nil {
		t.Error("an execution of an unknown task was stored after the upgrade")
	}
	if err := store.NewAgents(db).DeleteAgent("ag_w"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetExecution("exec_1"); err != nil {
		t.Errorf("the execution went with its agent: %v", err)
	}
	if err := store.NewAgents(db).DeleteProject("pj_1"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetExecution("exec_1"); core.ErrorCode(err) != core.ENotFound {
		t.Errorf("the execution after its project was deleted: %v, want not found", err)
	}
}
