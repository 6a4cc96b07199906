package store_test

import (
	"encoding/json"
	"strings"
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

// A decided approval keeps its arguments as the audit does, secrets
// redacted; a waiting one keeps them whole, for the person deciding (found
// by a red-team review: decided approvals kept keys at rest for good).
func TestDecidedApprovalsKeepNoSecrets(t *testing.T) {
	db := mustOpen(t)
	s := store.NewApprovals(db)
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	const secret = "sk-live-0123456789abcdef0123456789"
	args := json.RawMessage(`{"path":"/tmp/x","api_key":"` + secret + `"}`)
	for _, id := range []string{"waiting", "decided", "left-over"} {
		a := hitl.Approval{ID: id, Server: "fs", Tool: "write_file", Arguments: args, CreatedAt: now, Deadline: now.Add(time.Minute), Status: hitl.StatusPending}
		if id == "decided" {
			a.Status, a.DecidedBy, a.DecidedAt = hitl.StatusApproved, "owner", &now
		}
		if err := s.SaveApproval(a); err != nil {
			t.Fatal(err)
		}
	}
	stored := func(id string) string {
		a, ok, err := s.LoadApproval(id)
		if err != nil || !ok {
			t.Fatalf("LoadApproval(%s) = %v, %v", id, ok, err)
		}
		return string(a.Arguments)
	}
	if got := stored("waiting"); got != string(args) {
		t.Errorf("a waiting approval's arguments = %s, want them whole", got)
	}
	if got := stored("decided"); strings.Contains(got, secret) || !strings.Contains(got, `"path":"/tmp/x"`) {
		t.Errorf("a decided approval's arguments = %s, want the key redacted and the rest kept", got)
	}
	// A restart expires what was waiting: redacted then.
	s.SaveApproval(hitl.Approval{ID: "waiting", Server: "fs", Tool: "write_file", Arguments: args, CreatedAt: now, Deadline: now.Add(time.Minute), Status: hitl.StatusApproved, DecidedAt: &now})
	if _, err := s.ExpirePendingApprovals(now); err != nil {
		t.Fatal(err)
	}
	if got := stored("left-over"); strings.Contains(got, secret) {
		t.Errorf("an approval expired at a restart kept the key: %s", got)
	}
	var raw []string
	if err := db.Raw("SELECT arguments FROM approvals").Scan(&raw).Error; err != nil {
		t.Fatal(err)
	}
	for _, a := range raw {
		if strings.Contains(a, secret) {
			t.Errorf("the approvals table holds the key: %s", a)
		}
	}
}

// An upgrade redacts what earlier versions kept of decided approvals.
func TestUpgradeRedactsDecidedApprovals(t *testing.T) {
	gdb, _ := migratedTo(t, "0015_instruction_pins")
	const secret = "sk-live-0123456789abcdef0123456789"
	for _, st := range []string{hitl.StatusApproved, hitl.StatusPending} {
		if err := gdb.Exec(`INSERT INTO approvals (id, server, tool, arguments, created_at, deadline, status) VALUES (?, 'fs', 'w', ?, ?, ?, ?)`,
			st, `{"token":"`+secret+`"}`, time.Now().UTC(), time.Now().UTC(), st).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Migrate(gdb); err != nil {
		t.Fatal(err)
	}
	var got []struct{ ID, Arguments string }
	if err := gdb.Raw("SELECT id, arguments FROM approvals ORDER BY id").Scan(&got).Error; err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if kept := strings.Contains(r.Arguments, secret); kept != (r.ID == hitl.StatusPending) {
			t.Errorf("approval %s after the upgrade: %s", r.ID, r.Arguments)
		}
	}
}
