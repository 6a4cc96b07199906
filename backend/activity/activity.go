// Package activity records every request that passes the pipeline and tells
// the UI about it: it is the pipeline's audit stage over a durable log (the
// store's journal), plus batched live events for the Activity screen.
//
// It imports core only; the log is any Log.
package activity

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
)

// Log makes audit records durable: Begin assigns the id of a new record,
// Finish stores its completed version. Both return once the record
// survives a kill -9.
type Log interface {
	Begin(rec *core.AuditRecord) error
	Finish(rec *core.AuditRecord) error
}

// Recorder is the pipeline's auditor: it writes each record through the log
// before the request goes on (Begin) and when it ends (Finish), and sends
// the records to the UI as core.EventActivity events in batches, off the
// request's path.
type Recorder struct {
	log    Log
	sink   core.EventSink
	logger *slog.Logger
	events chan core.AuditRecord
	stop   chan struct{}
	done   chan struct{}

	// lastErr is the failure since which no write has worked, nil when
	// the last write worked.
	lastErr atomic.Pointer[Failure]
}

// Failure is the last audit write that failed, for the UI to show.
type Failure struct {
	Error string    `json:"error"`
	At    time.Time `json:"at"`
}

// New returns a recorder over log whose records also reach sink.
// Close stops it.
func New(log Log, sink core.EventSink, logger *slog.Logger) *Recorder {
	if sink == nil {
		sink = core.Discard
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &Recorder{log: log, sink: sink, logger: logger, events: make(chan core.AuditRecord, 1024),
		stop: make(chan struct{}), done: make(chan struct{})}
	go r.emit()
	return r
}

// Begin makes the first record of a request durable; an error refuses the
// request.
func (r *Recorder) Begin(rec *core.AuditRecord) error {
	if err := r.log.Begin(rec); err != nil {
		r.failed(err)
		return err
	}
	r.worked()
	r.announce(rec)
	return nil
}

// Finish makes the completed record durable.
func (r *Recorder) Finish(rec *core.AuditRecord) error {
	if err := r.log.Finish(rec); err != nil {
		r.failed(err)
		return err
	}
	r.worked()
	r.announce(rec)
	return nil
}

func (r *Recorder) failed(err error) {
	f := &Failure{Error: err.Error(), At: time.Now().UTC()}
	r.lastErr.Store(f)
	r.logger.Error("audit write failed", "err", err)
	r.sink.Emit(core.EventAuditFailed, *f)
}

// worked clears a failure once a write works again and says so, so that a
// warning shown since the failure can go away.
func (r *Recorder) worked() {
	if r.lastErr.Load() == nil {
		return // the hot path: one atomic load
	}
	if f := r.lastErr.Swap(nil); f != nil {
		r.logger.Info("audit writes work again", "failedAt", f.At)
		r.sink.Emit(core.EventAuditRecovered, Recovery{FailedAt: f.At, At: time.Now().UTC()})
	}
}

// Recovery is the payload of audit:recovered: writes work again after the
// failure at FailedAt.
type Recovery struct {
	FailedAt time.Time `json:"failedAt"`
	At       time.Time `json:"at"`
}

// LastFailure returns the failed audit write since which no write has
// worked, nil when the last write worked.
func (r *Recorder) LastFailure() *Failure { return r.lastErr.Load() }

func (r *Recorder) announce(rec *core.AuditRecord) {
	if w, ok := r.sink.(wanter); ok && !w.Wants(core.EventActivity) {
		return // no UI is listening: it loads Activity when it opens
	}
	select {
	case r.events <- *rec:
	default: // the UI is far behind; it is told to reload (see the hub)
	}
}

// wanter is a sink that can tell whether anyone receives an event (the
// events hub): records nobody receives are not queued, copied and encoded.
type wanter interface{ Wants(name string) bool }

// emit sends what has queued up as one event, so a burst of requests is one
// message to the UI rather than hundreds.
func (r *Recorder) emit() {
	defer close(r.done)
	for {
		var batch []core.AuditRecord
		select {
		case <-r.stop:
			return
		case rec := <-r.events:
			batch = append(batch, rec)
		}
	more:
		for len(batch) < 256 {
			select {
			case rec := <-r.events:
				batch = append(batch, rec)
			default:
				break more
			}
		}
		r.sink.Emit(core.EventActivity, batch)
	}
}

// Close stops the event batching. Records made after it are still stored,
// only no longer announced.
func (r *Recorder) Close() {
	close(r.stop)
	<-r.done
}
