package airlock

import (
	"log/slog"
	"maps"
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock/backend/store"
)

// The order servers were added in is kept in the database: a new server
// comes after the others whatever its id, a removed one is forgotten (it
// comes last when added again), and a second Airlock reads the same order.
func TestServerOrderKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), store.FileName)
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	order := serverOrder(db, log, func() bool { return true })
	steps := []struct {
		ids  []string
		want map[string]uint64
	}{
		{[]string{"beta", "zeta"}, map[string]uint64{"beta": 1, "zeta": 2}},
		{[]string{"a0", "beta", "zeta"}, map[string]uint64{"beta": 1, "zeta": 2, "a0": 3}},
		{[]string{"a0", "zeta"}, map[string]uint64{"zeta": 2, "a0": 3}},
		{[]string{"a0", "beta", "zeta"}, map[string]uint64{"zeta": 2, "a0": 3, "beta": 4}},
	}
	for i, s := range steps {
		if got := order(s.ids); !maps.Equal(got, s.want) {
			t.Errorf("step %d: order(%v) = %v, want %v", i, s.ids, got, s.want)
		}
	}
	db.Close()
	db, err = store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got, want := serverOrder(db, log, func() bool { return true })([]string{"a0", "beta", "zeta"}), steps[3].want; !maps.Equal(got, want) {
		t.Errorf("after a restart: %v, want %v", got, want)
	}
}
