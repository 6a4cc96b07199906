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
	dir := t.TempDir()
	db, err := Open(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	path := filepath.Join(dir, JournalFileName)
	l, err := OpenAuditLog(db, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
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
