package airlock_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock/backend/store"
)

// A servers.json that is broken when Airlock starts (mid-edit) keeps the
// order servers were added in: once it is fixed, the server added first
// still comes first (found by a code review: the order was erased, and a
// name two --no-prefix servers expose went to the other one).
func TestServerOrderSurvivesBrokenServersFile(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AddServerOrder("zeta"); err != nil { // added first
		t.Fatal(err)
	}
	if err := db.AddServerOrder("alpha"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.WriteFile(filepath.Join(dir, "servers.json"), []byte(`{"mcpServers": {`), 0o600); err != nil {
		t.Fatal(err)
	}
	start(t, dir).Close()
	db, err = store.Open(filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.ServerOrder([]string{"alpha", "zeta"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if got["zeta"] == 0 || got["zeta"] > got["alpha"] {
		t.Errorf("zeta was added first, but now orders after alpha: %v", got)
	}
}
