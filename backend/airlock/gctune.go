package airlock

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// The gateway's GC target. With Go's default (GOGC=100) the heap may grow
// by as much as is live (heap, goroutine stacks and globals) before the
// next collection. For a gateway with a few sessions that is 2–3 MB, a
// collection every couple of hundred calls, each with its fixed cost; with
// 200 sessions the live set is larger and a proportional headroom is
// plenty, while the GOGC=200 Airlock used before raised the peak RSS by
// 15 MB (measured: desktop build 131 → 116 MB at the same calls/s; a fixed
// GOGC=100 got there too but cost 5–10 % of the calls/s). So the headroom
// is whichever is larger: gcMinHeadroom, or what is live (GOGC=100). There is deliberately no memory limit: a limit near the live
// heap makes the collector run without pause under load (measured: 200
// sessions 6.5× slower, and CPU burnt while idle).
const (
	gcMinHeadroom = 16 << 20
	gcMaxPercent  = 800
)

// gcPercentFor is the GOGC that gives a heap whose scannable part (live
// heap, stacks, globals) is scannable bytes a headroom of
// max(gcMinHeadroom, scannable).
func gcPercentFor(scannable uint64) int {
	if scannable == 0 {
		return gcMaxPercent
	}
	p := gcMinHeadroom * 100 / scannable
	return int(min(max(p, 100), gcMaxPercent))
}

// TuneRuntime sets the Go runtime for a gateway (serve and the desktop
// app; not the small commands): after every collection it sets the GC
// target from what the collection found live (gcPercentFor). A user's own
// GOGC is left alone. main calls it; the benchmarks call it too so that
// they measure what the binary does.
func TuneRuntime() {
	if os.Getenv("GOGC") != "" {
		return // the user's own GC target, as for any Go program
	}
	t := &gcTuner{samples: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/scan/stack:bytes"},
		{Name: "/gc/scan/globals:bytes"},
	}}
	t.adjust()
	t.arm()
}

type gcTuner struct {
	samples []metrics.Sample // touched only by adjust, which cleanups run one at a time
	percent int
}

// gcSentinel has a pointer so that it is never put in a tiny block, whose
// cleanups may not run.
type gcSentinel struct{ _ *byte }

// arm runs adjust after the next collection: the sentinel is unreachable
// at once, so the next cycle finds it and runs its cleanup, which arms the
// next one. Nothing runs while the heap does not grow (no timer).
func (t *gcTuner) arm() {
	runtime.AddCleanup(new(gcSentinel), func(t *gcTuner) {
		t.adjust()
		t.arm()
	}, t)
}

func (t *gcTuner) adjust() {
	metrics.Read(t.samples)
	var scannable uint64
	for _, s := range t.samples {
		if s.Value.Kind() == metrics.KindUint64 {
			scannable += s.Value.Uint64()
		}
	}
	if p := gcPercentFor(scannable); p != t.percent {
		t.percent = p
		debug.SetGCPercent(p)
	}
}
