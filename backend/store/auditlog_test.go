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

// A journal an older Airlock left directly in the data directory is
// replayed at the next start and removed; the journal lives in its own
// directory from then on.
func TestAuditLogReplaysLegacyJournal(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t)
	legacy := filepath.Join(dir, store.JournalFileName)
	line := `{"id":7,"time":"2026-01-02T03:04:05Z","kind":"tools/call","agent":"a","session":"s","server":"srv","tool":"old","arguments":"{}","argsDigest":"","decision":"allow","reason":"","status":"ok","latencyUs":5}` + "\n"
	if err := os.WriteFile(legacy, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := store.OpenDataDirAuditLog(db, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got, ok, err := l.Get(7)
	if err != nil || !ok || got.Tool != "old" {
		t.Fatalf("record 7 after replaying the old journal = %+v, %v, %v; want the tool \"old\"", got, ok, err)
	}
	if _, err := os.Stat(legacy); !os.IsNotExist(err) {
		t.Errorf("old journal still there after the replay (stat: %v)", err)
	}
	r := rec("new")
	if err := l.Begin(r); err != nil {
		t.Fatal(err)
	}
	if r.ID != 8 {
		t.Errorf("next id = %d, want 8", r.ID)
	}
	if fi, err := os.Stat(store.JournalPath(dir)); err != nil || fi.Size() == 0 {
		t.Errorf("journal at %s: %v (size %v), want the new record there", store.JournalPath(dir), err, fi)
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

// BenchmarkAuditLogFlush is what moving a burst of 100 journaled calls into
// the database costs the background flusher (once per 100 ms under load).
func BenchmarkAuditLogFlush(b *testing.B) {
	l, err := store.OpenAuditLog(openDB(b), filepath.Join(b.TempDir(), store.JournalFileName), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	recs := make([]*core.AuditRecord, 100)
	for b.Loop() {
		b.StopTimer()
		for i := range recs {
			recs[i] = &core.AuditRecord{Time: time.Now(), Agent: "agent", Session: "S123", Server: "everything", Tool: "echo",
				Arguments: `{"message":"hello"}`, ArgsDigest: "abc", Decision: "allow", Reason: "rule r1", Status: "ok"}
		}
		if err := l.Append(recs); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := l.Flush(); err != nil {
			b.Fatal(err)
		}
	}
}
