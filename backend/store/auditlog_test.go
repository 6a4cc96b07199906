package store_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
)

func rec(tool string) *core.AuditRecord {
	return &core.AuditRecord{Time: time.Now().UTC(), Agent: "a", Server: "s", Tool: tool, Decision: core.DecisionAllow, Status: core.StatusOK}
}

// A process that dies after Append (no Flush, no Close) loses nothing: the
// next OpenAuditLog replays the journal, once, and skips a torn last line.
func TestAuditLogReplaysAfterCrash(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, store.FileName)
	journal := filepath.Join(dir, store.JournalFileName)

	db1, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	l1, err := store.OpenAuditLog(db1, journal, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l1.Append([]*core.AuditRecord{rec("one"), rec("two")}); err != nil {
		t.Fatal(err)
	}
	// Simulate the crash: copy the journal as the dead process left it,
	// with half a record written at the end.
	data, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	crashDir := t.TempDir()
	os.WriteFile(filepath.Join(crashDir, store.JournalFileName), append(data, []byte(`{"id":3,"tool":"thr`)...), 0o600)
	l1.Close()
	db1.Close()
	// The crashed process's database never got the records.
	db2, err := store.Open(filepath.Join(crashDir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	for range 2 { // replaying twice must not duplicate
		l, err := store.OpenAuditLog(db2, filepath.Join(crashDir, store.JournalFileName), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := l.List(core.ActivityFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Tool != "two" || got[1].Tool != "one" || got[0].ID != 2 {
			t.Fatalf("after replay: %+v, want records 2 (two) and 1 (one)", got)
		}
		l.Close()
		// Leave the journal as a crash would.
		os.WriteFile(filepath.Join(crashDir, store.JournalFileName), data, 0o600)
	}
}

func TestAuditLogIDsContinueAfterRestart(t *testing.T) {
	db := openDB(t)
	journal := filepath.Join(t.TempDir(), store.JournalFileName)
	l, _ := store.OpenAuditLog(db, journal, nil)
	l.Append([]*core.AuditRecord{rec("a")})
	l.Close()
	l, _ = store.OpenAuditLog(db, journal, nil)
	r := rec("b")
	l.Append([]*core.AuditRecord{r})
	defer l.Close()
	if r.ID != 2 {
		t.Fatalf("id after restart = %d, want 2", r.ID)
	}
	if got, _ := l.List(core.ActivityFilter{}); len(got) != 2 {
		t.Fatalf("%d records, want 2", len(got))
	}
}

// BenchmarkAuditLogAppend is what a proxied call pays to be recorded.
func BenchmarkAuditLogAppend(b *testing.B) {
	l, err := store.OpenAuditLog(openDB(b), filepath.Join(b.TempDir(), store.JournalFileName), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	for b.Loop() {
		if err := l.Append([]*core.AuditRecord{rec("echo")}); err != nil {
			b.Fatal(err)
		}
	}
}
