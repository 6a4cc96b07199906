package gateway

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A call's progress keeps rising when the server's own count follows the
// seconds Airlock reported while the call waited for a person (found by a
// new-user test: 5/300 was followed by 1/2).
func TestProgressKeepsRising(t *testing.T) {
	type note struct{ P, T float64 }
	var got []note
	send := rising(func(p, total float64, _ string) { got = append(got, note{p, total}) })
	send(1, 300, "waiting for a person")
	send(5.5, 300, "waiting for a person")
	send(0, 2, "") // the server starts its own count
	send(1, 2, "")
	send(2, 2, "")
	want := []note{{1, 300}, {5.5, 300}, {6.5, 8.5}, {7.5, 8.5}, {8.5, 8.5}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress sent (-want +got):\n%s", diff)
	}
	// A count that rises by itself is passed on unchanged.
	got = nil
	send = rising(func(p, total float64, _ string) { got = append(got, note{p, total}) })
	send(1, 3, "")
	send(2, 3, "")
	if diff := cmp.Diff([]note{{1, 3}, {2, 3}}, got); diff != "" {
		t.Errorf("progress of a server alone (-want +got):\n%s", diff)
	}
}
