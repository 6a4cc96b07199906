package events_test

import (
	"sync"
	"testing"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/events"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// A receiver that never reads cannot hold up the emitter; once it drains
// its queue it learns how many events it lost.
func TestEmitNeverBlocksAndLagIsReported(t *testing.T) {
	h := events.NewHub()
	stuck := h.Subscribe(nil)
	defer stuck.Close()
	for i := range 10 * events.QueueSize {
		h.Emit(core.EventActivity, i) // returns: nobody reads stuck
	}
	got := 0
	for len(stuck.C()) > 0 {
		<-stuck.C()
		got++
	}
	if got != events.QueueSize {
		t.Errorf("the receiver kept %d events, want its queue's %d", got, events.QueueSize)
	}
	if n := stuck.Lagged(); n != 9*events.QueueSize {
		t.Errorf("Lagged = %d, want the %d events it lost", n, 9*events.QueueSize)
	}
	if n := stuck.Lagged(); n != 0 {
		t.Errorf("Lagged after reading it = %d, want 0", n)
	}
}

// A receiver gets only the topics it asked for.
func TestTopics(t *testing.T) {
	h := events.NewHub()
	approvals := h.Subscribe([]string{"approval"})
	defer approvals.Close()
	all := h.Subscribe(nil)
	defer all.Close()
	h.Emit(core.EventActivity, 1)
	h.Emit(core.EventApprovalRequested, 2)
	if ev := <-approvals.C(); ev.Name != core.EventApprovalRequested || len(approvals.C()) != 0 {
		t.Errorf("an approval-topic receiver got %s (and %d more)", ev.Name, len(approvals.C()))
	}
	if len(all.C()) != 2 {
		t.Errorf("an all-topics receiver got %d events, want 2", len(all.C()))
	}
}

// blockingSink blocks in Emit until released, like a window that is busy.
type blockingSink struct {
	release chan struct{}
	mu      sync.Mutex
	names   []string
}

func (s *blockingSink) Emit(name string, _ any) {
	<-s.release
	s.mu.Lock()
	s.names = append(s.names, name)
	s.mu.Unlock()
}

// A slow sink (the desktop window raising itself) never holds up emitters,
// and is told when it fell behind.
func TestSlowSink(t *testing.T) {
	h := events.NewHub()
	sink := &blockingSink{release: make(chan struct{})}
	stop := h.AddSink(sink)
	defer stop()
	for i := range 3 * events.QueueSize {
		h.Emit(core.EventApprovalRequested, i) // returns although the sink is stuck
	}
	close(sink.release)
	testutil.Eventually(t, 10e9, func() bool {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		return len(sink.names) > 0 && sink.names[len(sink.names)-1] == events.EventLagged
	}, "the slow sink was never told it fell behind")
}

// Wants says whether an event would reach anyone, so emitters can skip
// building it.
func TestWants(t *testing.T) {
	h := events.NewHub()
	if h.Wants("activity:new") {
		t.Error("Wants with no receivers = true, want false")
	}
	other := h.Subscribe([]string{"approval"})
	if h.Wants("activity:new") {
		t.Error("Wants with only an approval receiver = true, want false")
	}
	all := h.Subscribe(nil)
	if !h.Wants("activity:new") {
		t.Error("Wants with a receiver of every topic = false, want true")
	}
	all.Close()
	other.Close()
	if h.Wants("approval:requested") {
		t.Error("Wants after every receiver closed = true, want false")
	}
}
