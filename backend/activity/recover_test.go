package activity_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/airlock-dev/airlock/backend/activity"
	"github.com/airlock-dev/airlock/backend/core"
)

// flakyLog fails while full is set, like a disk that filled up and was
// cleared again.
type flakyLog struct {
	mu   sync.Mutex
	full bool
	next int64
}

func (l *flakyLog) write(rec *core.AuditRecord) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.full {
		return errors.New("audit journal: disk full")
	}
	l.next++
	rec.ID = l.next
	return nil
}
func (l *flakyLog) Begin(rec *core.AuditRecord) error  { return l.write(rec) }
func (l *flakyLog) Finish(rec *core.AuditRecord) error { return l.write(rec) }
func (l *flakyLog) setFull(v bool)                     { l.mu.Lock(); l.full = v; l.mu.Unlock() }

// sink keeps the audit events in order.
type sink struct {
	mu     sync.Mutex
	topics []string
}

func (s *sink) Emit(topic string, _ any) {
	if topic == core.EventActivity {
		return
	}
	s.mu.Lock()
	s.topics = append(s.topics, topic)
	s.mu.Unlock()
}

func (s *sink) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.topics...)
}

// A failed write is reported and kept for the UI until a write works again;
// then the failure clears and audit:recovered says so, once.
func TestFailureClearsWhenWritesWorkAgain(t *testing.T) {
	log, events := &flakyLog{}, &sink{}
	r := activity.New(log, events, nil)
	defer r.Close()

	if err := r.Begin(&core.AuditRecord{Tool: "echo"}); err != nil {
		t.Fatal(err)
	}
	if f := r.LastFailure(); f != nil {
		t.Fatalf("LastFailure after a good write = %+v, want nil", f)
	}
	log.setFull(true)
	if err := r.Begin(&core.AuditRecord{Tool: "echo"}); err == nil {
		t.Fatal("Begin on a full log succeeded, want its error (the pipeline refuses the request)")
	}
	if err := r.Finish(&core.AuditRecord{Tool: "echo"}); err == nil {
		t.Fatal("Finish on a full log succeeded, want its error")
	}
	if f := r.LastFailure(); f == nil || f.Error != "audit journal: disk full" {
		t.Fatalf("LastFailure = %+v, want the disk-full error", f)
	}
	log.setFull(false)
	if err := r.Finish(&core.AuditRecord{Tool: "echo"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Begin(&core.AuditRecord{Tool: "echo"}); err != nil {
		t.Fatal(err)
	}
	if f := r.LastFailure(); f != nil {
		t.Errorf("LastFailure after writes work again = %+v, want nil", f)
	}
	want := []string{core.EventAuditFailed, core.EventAuditFailed, core.EventAuditRecovered}
	got := events.seen()
	if len(got) != len(want) {
		t.Fatalf("audit events = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("audit events = %v, want %v", got, want)
		}
	}
}
