package authz

import (
	"fmt"
	"testing"
	"time"
)

// TestLimiterBoundsMemory: made-up agent ids do not grow the limiter
// without bound; forgotten ones are dropped first.
func TestLimiterBoundsMemory(t *testing.T) {
	l := newLimiter(Limits{})
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < maxLimiterKeys; i++ {
		l.fail(fmt.Sprintf("ghost-%d", i), t0)
	}
	if len(l.keys) != maxLimiterKeys {
		t.Fatalf("%d keys", len(l.keys))
	}
	later := t0.Add(DefaultLimits.Forget + time.Hour)
	l.fail("fresh", later)
	if len(l.keys) != 1 {
		t.Errorf("%d keys after the old ones were forgotten; want 1", len(l.keys))
	}
	// All recent: the map is reset rather than grown.
	for i := 0; i < maxLimiterKeys; i++ {
		l.fail(fmt.Sprintf("recent-%d", i), later)
	}
	if len(l.keys) > maxLimiterKeys {
		t.Errorf("%d keys; the bound is %d", len(l.keys), maxLimiterKeys)
	}
	// The global counter still slows everyone down.
	if l.wait("anyone", later) == 0 {
		t.Error("no global slowdown after 20,000 failures")
	}
}
