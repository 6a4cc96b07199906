package gateway

import (
	"log/slog"

	"github.com/airlock-dev/airlock/backend/core"
)

// AuditStore persists audit records. Append returns once they are durable.
type AuditStore interface {
	Append(recs []*core.AuditRecord) error
}

// AuditWriter records each call before its reply goes out (so a kill -9
// loses nothing an agent saw) and tells the UI in batches, off the call's
// path.
type AuditWriter struct {
	store  AuditStore
	sink   core.EventSink
	log    *slog.Logger
	events chan core.AuditRecord
	stop   chan struct{}
	done   chan struct{}
}

// NewAuditWriter returns a writer over store whose records also reach sink
// as core.EventActivity events, batched. Close stops it.
func NewAuditWriter(store AuditStore, sink core.EventSink, log *slog.Logger) *AuditWriter {
	if sink == nil {
		sink = core.Discard
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &AuditWriter{store: store, sink: sink, log: log, events: make(chan core.AuditRecord, 1024),
		stop: make(chan struct{}), done: make(chan struct{})}
	go w.emit()
	return w
}

var _ AuditSink = (*AuditWriter)(nil)

// Record stores rec and returns once it is durable. A failing store is
// logged; it does not fail the call.
func (w *AuditWriter) Record(rec *core.AuditRecord) {
	if err := w.store.Append([]*core.AuditRecord{rec}); err != nil {
		w.log.Error("audit append failed", "err", err)
	}
	select {
	case w.events <- *rec:
	default: // the UI is far behind; it reloads Activity when it catches up
	}
}

// emit sends what has queued up as one event, so a burst of calls is one
// message to the UI rather than hundreds.
func (w *AuditWriter) emit() {
	defer close(w.done)
	for {
		var batch []core.AuditRecord
		select {
		case <-w.stop:
			return
		case rec := <-w.events:
			batch = append(batch, rec)
		}
	more:
		for len(batch) < 256 {
			select {
			case r := <-w.events:
				batch = append(batch, r)
			default:
				break more
			}
		}
		w.sink.Emit(core.EventActivity, batch)
	}
}

// Close stops the event batching. Records made after it are still stored,
// only no longer announced.
func (w *AuditWriter) Close() {
	close(w.stop)
	<-w.done
}
