package store_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock/backend/fsutil"
	"github.com/airlock-dev/airlock/backend/store"
)

// TestOpenPathWithURICharacters: the database is the file at the path given,
// whatever characters the path holds. The path goes into a SQLite URI, where
// '#' ended it and '?' started the query: a data directory such as
// ~/C#/airlock opened (and created, mode 0644) a database elsewhere. Found
// when a test whose name made its directory end in "#01" shared a database
// with the test of the same name.
func TestOpenPathWithURICharacters(t *testing.T) {
	parent := t.TempDir()
	for _, dir := range []string{"C#", "what?", "100%25 done", "a b"} {
		path := filepath.Join(parent, dir, "sub", store.FileName)
		db, err := store.Open(path)
		if err != nil {
			t.Fatalf("open %s: %v", path, err)
		}
		if err := db.SetSetting("probe", dir); err != nil {
			t.Fatal(err)
		}
		db.Close()
		st, err := os.Stat(path)
		if err != nil || st.Size() == 0 || st.Mode().Perm() != fsutil.FileMode {
			t.Errorf("%s: %v, size %d, mode %v; want the database there, mode %v", path, err, sizeOf(st), modeOf(st), os.FileMode(fsutil.FileMode))
		}
		again, err := store.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if v, ok, err := again.Setting("probe"); err != nil || !ok || v != dir {
			t.Errorf("%s reopened: setting %q %v %v, want %q", path, v, ok, err, dir)
		}
		again.Close()
	}
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		if !e.IsDir() {
			t.Errorf("a file %s was made beside the data directories", e.Name())
		}
	}
}

func sizeOf(st os.FileInfo) int64 {
	if st == nil {
		return 0
	}
	return st.Size()
}

func modeOf(st os.FileInfo) os.FileMode {
	if st == nil {
		return 0
	}
	return st.Mode().Perm()
}
