package airlock_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/testutil"
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

// Close returns once nothing Airlock started to keep things current (file
// watchers, pollers, followers of events) runs any more: none of them
// writes to the database or the data directory after it (found by CI: the
// rules file was written into a test's data directory while it was being
// removed, by a watcher that ran on after Close).
func TestCloseLeavesNoWatcherRunning(t *testing.T) {
	watchers := []string{
		"backend/fsutil.Watch.func", "backend/hitl.(*Rules).Watch", "backend/authz.(*Service).Watch",
		"backend/builtin.(*Builtin).Watch", "backend/teams.(*Service).Watch", "backend/airlock.follow",
		"backend/airlock.noteRunToolCalls", "backend/airlock.(*Instance).releaseTasksOutside",
	}
	running := func() map[string]string {
		out := map[string]string{}
		for _, g := range goroutines() {
			for _, w := range watchers {
				if strings.Contains(g, w) {
					out[strings.Fields(g)[1]] = w
				}
			}
		}
		return out
	}
	before := running() // other tests' (none should be left either)
	in := start(t, t.TempDir())
	// The instance's own (the release of tasks may be over already), once
	// their goroutines have started.
	testutil.Eventually(t, 10*time.Second, func() bool {
		seen := map[string]bool{}
		for id, w := range running() {
			if _, old := before[id]; !old {
				seen[w] = true
			}
		}
		for _, w := range watchers[:len(watchers)-1] {
			if !seen[w] {
				return false
			}
		}
		return true
	}, "the test does not find the instance's watchers running")
	in.Close()
	for id, w := range running() {
		if _, old := before[id]; !old {
			t.Errorf("after Close, goroutine %s still runs %s", id, w)
		}
	}
}
