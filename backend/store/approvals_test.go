package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/store"
)

func TestApprovals(t *testing.T) {
	s := store.NewApprovals(mustOpen(t))
	tr := true
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	a := hitl.Approval{
		ID: "a1", Agent: "alice", Session: "s1", Server: "fs", Tool: "write_file", ExposedName: "fs__write_file",
		Arguments: json.RawMessage(`{"path":"/tmp/x"}`), Annotations: &core.ToolAnnotations{Destructive: &tr},
		Risk: hitl.RiskDestructive, Warning: "w", RuleID: "r1", Reason: "because", RuleSetVersion: 3,
		CreatedAt: now, Deadline: now.Add(5 * time.Minute), Status: hitl.StatusPending,
	}
	if err := s.SaveApproval(a); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.LoadApproval("a1")
	if err != nil || !ok {
		t.Fatalf("LoadApproval = %v, %v", ok, err)
	}
	if diff := cmp.Diff(a, got); diff != "" {
		t.Errorf("approval (-saved +loaded):\n%s", diff)
	}
	b := a
	b.ID, b.CreatedAt = "a2", now.Add(time.Second)
	decided := now.Add(time.Minute)
	b.Status, b.DecidedBy, b.DeclineReason, b.DecidedAt = hitl.StatusDeclined, "owner", "no", &decided
	if err := s.SaveApproval(b); err != nil {
		t.Fatal(err)
	}
	expired, err := s.ExpirePendingApprovals(now.Add(time.Hour))
	if err != nil || len(expired) != 1 || expired[0].ID != a.ID || expired[0].Status != hitl.StatusExpired {
		t.Fatalf("ExpirePendingApprovals = %+v, %v; want approval %s, expired", expired, err, a.ID)
	}
	list, err := s.ListApprovals(10)
	if err != nil {
		t.Fatal(err)
	}
	var statuses []string
	for _, x := range list {
		statuses = append(statuses, x.ID+":"+x.Status)
	}
	if diff := cmp.Diff([]string{"a2:declined", "a1:expired"}, statuses); diff != "" {
		t.Errorf("approvals newest first (-want +got):\n%s", diff)
	}
	if _, ok, err := s.LoadApproval("nope"); ok || err != nil {
		t.Errorf("LoadApproval(nope) = %v, %v", ok, err)
	}
}

// An approval keeps the task its caller was working on; one saved by an
// older Airlock (before 0011) loads with none.
func TestApprovalTask(t *testing.T) {
	gdb, path := migratedTo(t, "0010_default_rules")
	now := time.Now().UTC().Truncate(time.Second)
	if err := gdb.Exec(`INSERT INTO approvals (id, kind, agent, session, server, tool, exposed_name, arguments, risk, warning, rule_id, reason,
		rule_set_version, created_at, deadline, status) VALUES ('old', 'tools/call', 'a', 's', 'srv', 't', 'srv__t', '{}', 'unknown', '', '', '', 1, ?, ?, 'pending')`,
		now, now.Add(time.Minute)).Error; err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(gdb); err != nil {
		t.Fatal(err)
	}
	s := store.NewApprovals(&store.DB{DB: gdb, Path: path})
	old, ok, err := s.LoadApproval("old")
	if err != nil || !ok || old.Task != nil || old.Tool != "t" {
		t.Fatalf("the older approval = %+v, %v, %v; want it whole, with no task", old, ok, err)
	}
	a := hitl.Approval{ID: "new", Kind: core.KindToolCall, Server: "srv", Tool: "t", Status: hitl.StatusPending, CreatedAt: now, Deadline: now.Add(time.Minute),
		Task: &hitl.TaskRef{ID: "tsk_1", ProjectID: "pj_1", Title: "Write the notes"}}
	if err := s.SaveApproval(a); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.LoadApproval("new")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a.Task, got.Task); diff != "" {
		t.Errorf("task (-want +got):\n%s", diff)
	}
}
