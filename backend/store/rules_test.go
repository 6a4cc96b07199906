package store_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/glebarez/sqlite"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/store"
)

func sp(s string) *string { return &s }

func mustOpen(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestMigrate0002Upgrade upgrades a database made by the foundation
// migration: old data stays, the HITL tables appear.
func TestMigrate0002Upgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), store.FileName)
	gdb, err := gorm.Open(sqlite.Open(store.DSN(path)), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.MigrateTo(gdb, "0001_foundation"); err != nil {
		t.Fatalf("migrate to 0001: %v", err)
	}
	if gdb.Migrator().HasTable("tool_permission_rules") {
		t.Fatal("0001 already has tool_permission_rules")
	}
	// A record written by the 0001 schema, with that schema's columns.
	old := &store.DB{DB: gdb, Path: path}
	if err := gdb.Exec("INSERT INTO audit_records (time, agent, server, tool, decision, status) VALUES (?,?,?,?,?,?)",
		time.Now().UTC(), "a", "s", "t", core.DecisionAllow, core.StatusOK).Error; err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(gdb); err != nil {
		t.Fatalf("migrate to newest: %v", err)
	}
	recs, err := store.NewAudit(old).List(core.ActivityFilter{})
	if err != nil || len(recs) != 1 || recs[0].Agent != "a" {
		t.Errorf("audit after upgrade: %+v, %v", recs, err)
	}
	for _, table := range []string{"tool_permission_rules", "approvals"} {
		if !gdb.Migrator().HasTable(table) {
			t.Errorf("no table %s after upgrade", table)
		}
	}
	// The new tables work on the upgraded database.
	r := hitl.Rule{ID: "r1", AutoApprove: true, CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC()}
	if err := store.NewRules(old).CreateRule(r); err != nil {
		t.Errorf("create rule on the upgraded db: %v", err)
	}
	sqlDB, _ := gdb.DB()
	sqlDB.Close()
}

func TestRulesRoundTrip(t *testing.T) {
	db := mustOpen(t)
	s := store.NewRules(db)
	// A new database holds the default rules that let prompts, resources
	// and relayed sampling and elicitation run unasked, as they did before
	// they were gated, and Airlock's own tools (tested below).
	if v, err := s.RulesVersion(); err != nil || v != 3 {
		t.Fatalf("initial RulesVersion = %d, %v; want 3 (three migrations added defaults)", v, err)
	}
	defaults, err := s.ListRules()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range defaults {
		if r.ID == store.OwnToolsRuleID || r.ID == store.FileReadRuleID {
			continue
		}
		if !r.AutoApprove || r.ServerID != nil || r.ToolName != nil || r.ToolPattern != nil {
			t.Errorf("default rule %+v is not a global auto-approve rule", r)
		}
		kinds = append(kinds, r.Kind)
	}
	slices.Sort(kinds)
	if diff := cmp.Diff([]string{hitl.KindElicitation, hitl.KindPrompt, hitl.KindResource, hitl.KindSampling}, kinds); diff != "" {
		t.Errorf("default rule kinds (-want +got):\n%s", diff)
	}
	if err := s.ImportRules(nil, true); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 3, 4, 5, 6, 7, 123456000, time.UTC)
	exp := now.Add(time.Hour)
	full := hitl.Rule{
		ID: "full", Kind: hitl.KindTool, ServerID: sp("fs"), ToolName: sp("read_file"), ToolPattern: sp("read_*"), AutoApprove: true, Priority: 100,
		Conditions: []hitl.Condition{{Path: "$.path", Op: "inside", Value: "/tmp"}},
		AgentID:    sp("alice"), SessionID: sp("s1"), ExpiresAt: &exp, CreatedAt: now, UpdatedAt: now,
	}
	global := hitl.Rule{ID: "global", Kind: hitl.KindTool, Conditions: []hitl.Condition{}, CreatedAt: now, UpdatedAt: now}
	for _, r := range []hitl.Rule{full, global} {
		if err := s.CreateRule(r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ListRules()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]hitl.Rule{full, global}, got); diff != "" {
		t.Errorf("rules (-stored +read back):\n%s", diff)
	}
	// auto_approve is stored as 1/0, as seed 002 says.
	var flags []int
	db.Raw("SELECT auto_approve FROM tool_permission_rules ORDER BY id").Scan(&flags)
	if diff := cmp.Diff([]int{1, 0}, flags); diff != "" {
		t.Errorf("auto_approve column (-want +got):\n%s", diff)
	}
	if err := db.Exec("UPDATE tool_permission_rules SET auto_approve = 2 WHERE id = 'full'").Error; err == nil {
		t.Error("auto_approve accepted 2")
	}

	full.Priority, full.AutoApprove, full.ExpiresAt = 5, false, nil
	if err := s.UpdateRule(full); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateRule(hitl.Rule{ID: "missing"}); core.ErrorCode(err) != core.ENotFound {
		t.Errorf("UpdateRule(missing) = %v, want %s", err, core.ENotFound)
	}
	if err := s.DeleteRule("missing"); core.ErrorCode(err) != core.ENotFound {
		t.Errorf("DeleteRule(missing) = %v, want %s", err, core.ENotFound)
	}
	if err := s.CreateRule(global); core.ErrorCode(err) != core.EConflict {
		t.Errorf("CreateRule(duplicate) = %v, want %s", err, core.EConflict)
	}
	got, _ = s.ListRules()
	if diff := cmp.Diff([]hitl.Rule{full, global}, got, cmp.Transformer("byID", func(in []hitl.Rule) map[string]hitl.Rule {
		m := map[string]hitl.Rule{}
		for _, r := range in {
			m[r.ID] = r
		}
		return m
	})); diff != "" {
		t.Errorf("after update (-want +got):\n%s", diff)
	}
	if err := s.DeleteRule("full"); err != nil {
		t.Fatal(err)
	}
	// Three successful changes, three bumps; failures bump nothing.
	if v, _ := s.RulesVersion(); v != 8 {
		t.Errorf("RulesVersion = %d, want 8 (three migrations' defaults, clearing them, 2 creates, 1 update, 1 delete)", v)
	}

	imported := []hitl.Rule{{ID: "i1", Kind: hitl.KindTool, Conditions: []hitl.Condition{}, CreatedAt: now, UpdatedAt: now}}
	if err := s.ImportRules(imported, true); err != nil {
		t.Fatal(err)
	}
	got, _ = s.ListRules()
	if diff := cmp.Diff(imported, got); diff != "" {
		t.Errorf("after replace import (-want +got):\n%s", diff)
	}
	if err := s.SetRulesFileHash("abc"); err != nil {
		t.Fatal(err)
	}
	if h, err := s.RulesFileHash(); h != "abc" || err != nil {
		t.Errorf("RulesFileHash = %q, %v", h, err)
	}
}

// An upgraded database gets the visible default rules that let Airlock's
// own tools and the built-in file_read run without asking, beside the
// user's rules; the rules version moves so that running engines reload.
func TestMigrate0010DefaultRules(t *testing.T) {
	gdb, path := migratedTo(t, "0008_relay_rules")
	db := &store.DB{DB: gdb, Path: path}
	before, err := store.NewRules(db).RulesVersion()
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(gdb); err != nil {
		t.Fatalf("migrate to newest: %v", err)
	}
	rules, err := store.NewRules(db).ListRules()
	if err != nil {
		t.Fatal(err)
	}
	for id, server := range map[string]string{store.OwnToolsRuleID: "airlock", store.FileReadRuleID: "file-read"} {
		i := slices.IndexFunc(rules, func(r hitl.Rule) bool { return r.ID == id })
		if i < 0 {
			t.Errorf("no rule %s after the upgrade", id)
			continue
		}
		r := rules[i]
		if !r.AutoApprove || r.Kind != hitl.KindTool || r.ServerID == nil || *r.ServerID != server ||
			r.ToolName != nil || r.ToolPattern != nil || r.AgentID != nil {
			t.Errorf("rule %s = %+v, want an auto-approve tool rule for server %s only", id, r, server)
		}
	}
	after, err := store.NewRules(db).RulesVersion()
	if err != nil || after <= before {
		t.Errorf("rules version %d → %d (%v), want it to move", before, after, err)
	}
}

// migratedTo returns a database in a temporary file migrated up to and
// including migration id (an older version's schema, for upgrade tests),
// and its path.
func migratedTo(t *testing.T, id string) (*gorm.DB, string) {
	t.Helper()
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
	if err := store.MigrateTo(gdb, id); err != nil {
		t.Fatalf("migrate to %s: %v", id, err)
	}
	return gdb, path
}
