package store

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
)

// Under steady load the journal is started afresh once it is over its
// limit, keeping only what the database does not have yet.
func TestAuditJournalRotates(t *testing.T) {
	l, path := openTestLog(t)
	l.limit = 2000
	for i := range 50 {
		if err := l.Append([]*core.AuditRecord{{Time: time.Now(), Tool: "t", Reason: "r"}}); err != nil {
			t.Fatal(err)
		}
		if i%10 == 9 {
			if err := l.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 2000 {
		t.Errorf("journal is %d bytes after rotation, want at most the limit", fi.Size())
	}
	if got, _ := l.List(core.ActivityFilter{Limit: 100}); len(got) != 50 {
		t.Errorf("%d records in the database, want 50", len(got))
	}
}

// A request whose Begin could not be written gives its id back: a Finish
// of it fails, and the next request gets the id (found by a bad-input test
// with a full disk: the refused request kept id 7, the next one got 7 too,
// and a Finish would have written one over the other).
func TestAuditBeginThatFailedKeepsNoID(t *testing.T) {
	l, path := openTestLog(t)
	good := l.f
	ro, err := os.Open(path) // writes to it fail
	if err != nil {
		t.Fatal(err)
	}
	l.f = ro
	refused := &core.AuditRecord{Time: time.Now(), Tool: "refused"}
	if err := l.Begin(refused); err == nil {
		t.Fatal("Begin on a journal that cannot be written succeeded")
	}
	if refused.ID != 0 {
		t.Errorf("a Begin that failed left id %d on its record", refused.ID)
	}
	l.f = good
	ro.Close()
	if err := l.Finish(refused); err == nil {
		t.Error("Finish of a record never begun succeeded")
	}
	next := &core.AuditRecord{Time: time.Now(), Tool: "next"}
	if err := l.Begin(next); err != nil {
		t.Fatal(err)
	}
	if next.ID != 1 {
		t.Errorf("the next record got id %d, want 1 (the id the refused one gave back)", next.ID)
	}
}

// After a write that stopped part way (a full disk), the next record starts
// on a line of its own: glued to the torn line, replay skipped it with it.
func TestAuditJournalLineAfterATornWrite(t *testing.T) {
	l, path := openTestLog(t)
	// What a write cut short by ENOSPC leaves: part of a line.
	if _, err := l.f.Write([]byte(`{"id":41,"time":"2026-`)); err != nil {
		t.Fatal(err)
	}
	l.torn = true
	if err := l.Begin(&core.AuditRecord{Time: time.Now(), Tool: "after"}); err != nil {
		t.Fatal(err)
	}
	// Replay it as a restart after a crash would.
	db2, err := Open(filepath.Join(t.TempDir(), FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	l2 := &AuditLog{audit: NewAudit(db2), log: l.log}
	if err := l2.replay(path); err != nil {
		t.Fatal(err)
	}
	got, ok, err := NewAudit(db2).get(1)
	if err != nil || !ok || got.Tool != "after" {
		t.Errorf("record 1 after replay = %+v, %v, %v; want the record written after the torn line", got, ok, err)
	}
}

// openTestLog opens an audit log with its journal in a new directory,
// closed (then its database) when the test ends.
func openTestLog(t *testing.T) (*AuditLog, string) {
	t.Helper()
	dir := t.TempDir()
	db, err := Open(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	path := filepath.Join(dir, JournalFileName)
	l, err := OpenAuditLog(db, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, path
}
