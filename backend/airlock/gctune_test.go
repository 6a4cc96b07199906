package airlock

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/testutil"
)

func TestGCPercentFor(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		scannable uint64
		want      int
	}{
		{0, gcMaxPercent},        // before the first collection
		{1 * mb, gcMaxPercent},   // capped: 16 MB would be 1600 %
		{4 * mb, 400},            // a few sessions: 16 MB of headroom
		{8 * mb, 200},            //
		{16 * mb, 100},           // from here on: as much headroom as is live
		{200 * mb, 100},          // never below Go's default
		{3 * mb, 533},            // rounded down
		{gcMinHeadroom * 2, 100}, //
	} {
		if got := gcPercentFor(c.scannable); got != c.want {
			t.Errorf("gcPercentFor(%d MB) = %d, want %d", c.scannable/mb, got, c.want)
		}
	}
}

// The test binary runs TuneRuntime as the gateway does (TestMain): after a
// collection, the GC target is the one gcPercentFor gives for what that
// collection found live.
func TestGCTargetFollowsTheLiveHeap(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: TuneRuntime leaves the user's target alone")
	}
	s := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/scan/stack:bytes"},
		{Name: "/gc/scan/globals:bytes"},
		{Name: "/gc/gogc:percent"},
	}
	// Something live that moves the target off where it starts (capped at
	// gcMaxPercent before any collection and for a heap this small).
	live := make([]byte, 6<<20)
	defer runtime.KeepAlive(live)
	var scannable uint64
	var gogc int
	testutil.Eventually(t, 30*time.Second, func() bool {
		runtime.GC()
		metrics.Read(s)
		scannable = s[0].Value.Uint64() + s[1].Value.Uint64() + s[2].Value.Uint64()
		gogc = int(s[3].Value.Uint64())
		return gogc == gcPercentFor(scannable) && gogc < gcMaxPercent
	}, "%v", lazy(func() string {
		return fmt.Sprintf("GOGC %d after a collection that found %d bytes live, want %d", gogc, scannable, gcPercentFor(scannable))
	}))
}

// lazy formats when the message is printed, with the values of then.
type lazy func() string

func (f lazy) String() string { return f() }
