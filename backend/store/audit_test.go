package store_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/google/go-cmp/cmp"
)

func openDB(tb testing.TB) *store.DB {
	tb.Helper()
	db, err := store.Open(filepath.Join(tb.TempDir(), store.FileName))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func TestAuditAppendAndFilter(t *testing.T) {
	a := store.NewAudit(openDB(t))
	now := time.Date(2026, 11, 25, 10, 0, 0, 123456000, time.UTC)
	recs := []*core.AuditRecord{
		{Time: now, Kind: core.KindToolCall, Agent: "a1", Server: "fs", Tool: "read_file", Decision: core.DecisionAllow, Status: core.StatusOK, Arguments: `{"path":"/x"}`, RuleID: "r1", RuleSetVersion: 3, LatencyUs: 42},
		{Time: now.Add(time.Second), Agent: "a2", Server: "fs", Tool: "delete_file", Decision: core.DecisionDeclined, Reason: "no", Status: core.StatusError},
		{Time: now.Add(2 * time.Second), Agent: "a1", Server: "shell", Tool: "exec", Decision: core.DecisionApproved, Approver: "you", WaitMs: 1500, Status: core.StatusOK},
	}
	if err := a.Append(recs); err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if r.ID != int64(i+1) {
			t.Errorf("record %d got id %d, want %d", i, r.ID, i+1)
		}
	}
	all, err := a.List(core.ActivityFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(recs) {
		t.Fatalf("listed %d records, want %d", len(all), len(recs))
	}
	// One prepared statement wrote all three (the driver keeps it compiled
	// and binds each record anew): each row holds its own record.
	for i, r := range recs {
		want := *r
		if want.Kind == "" {
			want.Kind = core.KindToolCall // what a record without a kind is stored as
		}
		if diff := cmp.Diff(want, all[len(recs)-1-i]); diff != "" {
			t.Errorf("stored record %d differs from the one appended (-appended +read):\n%s", i, diff)
		}
	}
	cases := []struct {
		f    core.ActivityFilter
		want []int64
	}{
		{core.ActivityFilter{}, []int64{3, 2, 1}},
		{core.ActivityFilter{Agent: "a1"}, []int64{3, 1}},
		{core.ActivityFilter{Server: "fs"}, []int64{2, 1}},
		{core.ActivityFilter{Tool: "exec"}, []int64{3}},
		{core.ActivityFilter{Decision: core.DecisionDeclined}, []int64{2}},
		{core.ActivityFilter{BeforeID: 3, Limit: 1}, []int64{2}},
		{core.ActivityFilter{Since: now.Add(time.Second)}, []int64{3, 2}},
		{core.ActivityFilter{Until: now.Add(time.Second)}, []int64{1}},
		{core.ActivityFilter{Since: now.Add(time.Second), Until: now.Add(2 * time.Second), Agent: "a2"}, []int64{2}},
	}
	for _, c := range cases {
		got, err := a.List(c.f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range got {
			ids = append(ids, r.ID)
		}
		if diff := cmp.Diff(c.want, ids); diff != "" {
			t.Errorf("List(%+v) ids (-want +got):\n%s", c.f, diff)
		}
	}
}

func TestJournalModeWAL(t *testing.T) {
	mode, err := openDB(t).JournalMode()
	if err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
}

// BenchmarkAuditAppend is the cost every proxied call pays to be recorded.
func BenchmarkAuditAppend(b *testing.B) {
	a := store.NewAudit(openDB(b))
	rec := core.AuditRecord{Time: time.Now(), Agent: "agent", Session: "S123", Server: "everything", Tool: "echo",
		Arguments: `{"message":"hello"}`, ArgsDigest: "abc", Decision: "allow", Reason: "rule r1", Status: "ok"}
	for b.Loop() {
		r := rec
		if err := a.Append([]*core.AuditRecord{&r}); err != nil {
			b.Fatal(err)
		}
	}
}
