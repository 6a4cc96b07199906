package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
)

// AuditLog makes audit records durable before a call's reply goes out
// without putting a SQLite transaction on every call's path: Append writes
// the records to an append-only journal file with one write(2) — once that
// returns, a kill -9 cannot lose them — and a background flusher moves them
// into the audit_records table in batches. At the next start, records the
// flusher had not moved yet are replayed from the journal. Record ids are
// assigned here, so the replay is idempotent (INSERT OR IGNORE by id).
type AuditLog struct {
	audit *Audit
	log   *slog.Logger

	mu      sync.Mutex
	path    string
	f       *os.File
	size    int64
	limit   int64 // journalLimit; tests lower it
	nextID  int64
	pending []*core.AuditRecord

	flushMu sync.Mutex
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

// JournalFileName is the audit journal inside the data directory.
const JournalFileName = "audit.journal"

// flushDelay is how long records gather in the journal before they are
// moved into the database together.
const flushDelay = 100 * time.Millisecond

// journalLimit is the size past which the journal is started afresh with
// just the records not yet in the database.
const journalLimit = 4 << 20

// OpenAuditLog replays the journal at path into db and starts the flusher.
// Only one process may write the journal: Airlock holds the data directory
// lock while it runs.
func OpenAuditLog(db *DB, path string, log *slog.Logger) (*AuditLog, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &AuditLog{audit: NewAudit(db), log: log, limit: journalLimit, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if err := l.replay(path); err != nil {
		return nil, err
	}
	var maxID int64
	if err := db.Raw("SELECT COALESCE(MAX(id), 0) FROM audit_records").Scan(&maxID).Error; err != nil {
		return nil, fmt.Errorf("read last audit id: %w", err)
	}
	l.nextID = maxID + 1
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit journal: %w", err)
	}
	l.f, l.path = f, path
	go l.run()
	return l, nil
}

// replay inserts every complete record of the journal; a torn last line (the
// process died inside a write) is skipped.
func (l *AuditLog) replay(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open audit journal: %w", err)
	}
	defer f.Close()
	var recs []*core.AuditRecord
	br := bufio.NewReader(f)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var r core.AuditRecord
			if uerr := json.Unmarshal(line, &r); uerr != nil || r.ID == 0 {
				l.log.Warn("skip a damaged audit journal line", "err", uerr)
			} else {
				recs = append(recs, &r)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read audit journal: %w", err)
		}
	}
	if err := l.audit.insert(recs, true); err != nil {
		return fmt.Errorf("replay audit journal: %w", err)
	}
	if len(recs) > 0 {
		l.log.Info("replayed audit journal", "records", len(recs))
	}
	return nil
}

// Append assigns ids to recs and writes them to the journal. When it
// returns nil the records survive the process being killed.
func (l *AuditLog) Append(recs []*core.AuditRecord) error {
	if len(recs) == 0 {
		return nil
	}
	var buf []byte
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return core.Errorf(core.EUnavailable, "audit log is closed")
	}
	for _, r := range recs {
		r.ID = l.nextID
		l.nextID++
		b, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("encode audit record: %w", err)
		}
		buf = append(append(buf, b...), '\n')
	}
	n, err := l.f.Write(buf)
	l.size += int64(n)
	if err != nil {
		return fmt.Errorf("write audit journal: %w", err)
	}
	l.pending = append(l.pending, recs...)
	select {
	case l.kick <- struct{}{}:
	default:
	}
	return nil
}

func (l *AuditLog) run() {
	defer close(l.done)
	for {
		select {
		case <-l.stop:
			return
		case <-l.kick:
			// Let records gather: one transaction for many calls costs far
			// less CPU than one each, and the journal already keeps them.
			select {
			case <-l.stop:
				return
			case <-time.After(flushDelay):
			}
			if err := l.Flush(); err != nil {
				l.log.Error("audit flush failed; records stay in the journal", "err", err)
			}
		}
	}
}

// Flush moves every journaled record into the database.
func (l *AuditLog) Flush() error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	batch := l.pending
	l.pending = nil
	l.mu.Unlock()
	if err := l.audit.insert(batch, true); err != nil {
		l.mu.Lock()
		l.pending = append(batch, l.pending...)
		l.mu.Unlock()
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.size > l.limit && l.f != nil {
		return l.rotateLocked()
	}
	return nil
}

// rotateLocked starts the journal afresh with only the records not yet in
// the database. The new file replaces the old one by rename, so a crash at
// any moment leaves one complete journal.
func (l *AuditLog) rotateLocked() error {
	var buf []byte
	for _, r := range l.pending {
		b, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("encode audit record: %w", err)
		}
		buf = append(append(buf, b...), '\n')
	}
	path := l.path
	tmp := path + ".new"
	if err := os.WriteFile(tmp, buf, 0o600); err != nil {
		return fmt.Errorf("rotate audit journal: %w", err)
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("rotate audit journal: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		f.Close()
		return fmt.Errorf("rotate audit journal: %w", err)
	}
	l.f.Close()
	l.f, l.size = f, int64(len(buf))
	return nil
}

// List returns the newest records matching f, newest first, including the
// ones appended a moment ago.
func (l *AuditLog) List(f core.ActivityFilter) ([]core.AuditRecord, error) {
	if err := l.Flush(); err != nil {
		return nil, err
	}
	return l.audit.List(f)
}

// Close flushes, empties the journal and closes it.
func (l *AuditLog) Close() error {
	close(l.stop)
	<-l.done
	err := l.Flush()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		err = l.f.Truncate(0)
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}
