package gateway

import (
	"log/slog"
	"sync"

	"github.com/airlock-dev/airlock/backend/core"
)

// AuditStore persists audit records.
type AuditStore interface {
	Append(recs []*core.AuditRecord) error
}

// AuditWriter records calls with group commit: a call's record is committed
// before its reply goes out (so a kill -9 loses nothing an agent saw), and
// concurrent calls share one transaction.
type AuditWriter struct {
	store AuditStore
	sink  core.EventSink
	log   *slog.Logger

	mu      sync.Mutex
	queue   []*core.AuditRecord
	waiters []chan struct{}
	busy    bool
}

// NewAuditWriter returns a writer over store that also emits each committed
// batch as one core.EventActivity event.
func NewAuditWriter(store AuditStore, sink core.EventSink, log *slog.Logger) *AuditWriter {
	if sink == nil {
		sink = core.Discard
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &AuditWriter{store: store, sink: sink, log: log}
}

var _ AuditSink = (*AuditWriter)(nil)

// Record appends rec and returns once it is committed (or failed to be; a
// failing database is logged, it does not fail the call).
func (w *AuditWriter) Record(rec *core.AuditRecord) {
	done := make(chan struct{})
	w.mu.Lock()
	w.queue = append(w.queue, rec)
	w.waiters = append(w.waiters, done)
	if !w.busy {
		w.busy = true
		go w.flush()
	}
	w.mu.Unlock()
	<-done
}

func (w *AuditWriter) flush() {
	for {
		w.mu.Lock()
		batch, waiters := w.queue, w.waiters
		w.queue, w.waiters = nil, nil
		if len(batch) == 0 {
			w.busy = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		if err := w.store.Append(batch); err != nil {
			w.log.Error("audit append failed", "records", len(batch), "err", err)
		}
		for _, d := range waiters {
			close(d)
		}
		out := make([]core.AuditRecord, len(batch))
		for i, r := range batch {
			out[i] = *r
		}
		w.sink.Emit(core.EventActivity, out)
	}
}
