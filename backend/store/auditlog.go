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
	"path/filepath"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/fsutil"
)

// AuditLog makes audit records durable without putting a SQLite
// transaction on every request's path. A request is recorded twice: Begin
// when it arrives (before it can have any effect) and Finish when it ends.
// Each writes the record to an append-only journal file with one write(2) —
// once that returns, a kill -9 cannot lose it — and a background flusher
// moves the newest version of each record into the audit_records table in
// batches. At the next start, records the flusher had not moved yet are
// replayed from the journal; records still "running" then are the requests
// Airlock was handling when it stopped (see Unfinished). Record ids are
// assigned here, in arrival order, so the replay is idempotent (the last
// line of an id wins).
type AuditLog struct {
	audit *Audit
	log   *slog.Logger

	mu     sync.Mutex
	path   string
	f      *os.File
	size   int64
	limit  int64 // journalLimit; tests lower it
	nextID int64
	// pending holds the newest version of each record not yet in the
	// database, and order the ids in the order they were written.
	pending map[int64]*core.AuditRecord
	order   []int64
	buf     []byte // the encoding buffer, reused
	// torn is set when a write failed part way (a full disk): the next
	// write starts with a newline, so that its first record does not
	// continue the torn line (replay skips a damaged line whole).
	torn bool

	flushMu sync.Mutex
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

// JournalFileName is the name of the audit journal file (see JournalPath).
const JournalFileName = "audit.journal"

// flushDelay is how long records gather in the journal before they are
// moved into the database together.
const flushDelay = 100 * time.Millisecond

// maxKeptBuffer is the largest encoding buffer kept for the next write
// (records are a few hundred bytes; a long batch of Append is not kept).
const maxKeptBuffer = 64 << 10

// journalLimit is the size past which the journal is started afresh with
// just the records not yet in the database.
const journalLimit = 4 << 20

// JournalDir is the directory inside the data directory that holds the
// audit journal. The journal has a directory of its own because Airlock
// watches the data directory for edits of servers.json and rules.json:
// there, each of a call's two appends woke both watchers (four inotify
// reads and their goroutines per call; about a tenth of what a proxied
// call cost in CPU).
const JournalDir = "journal"

// JournalPath is the audit journal of the data directory dataDir.
func JournalPath(dataDir string) string { return filepath.Join(dataDir, JournalDir, JournalFileName) }

// OpenDataDirAuditLog opens the audit log of the data directory dataDir,
// its journal at JournalPath. A journal that an older Airlock left directly
// in the data directory is replayed as well, then removed.
func OpenDataDirAuditLog(db *DB, dataDir string, log *slog.Logger) (*AuditLog, error) {
	return openAuditLog(db, JournalPath(dataDir), filepath.Join(dataDir, JournalFileName), log)
}

// OpenAuditLog replays the journal at path into db and starts the flusher.
// Only one process may write the journal: Airlock holds the data directory
// lock while it runs.
func OpenAuditLog(db *DB, path string, log *slog.Logger) (*AuditLog, error) {
	return openAuditLog(db, path, "", log)
}

// openAuditLog is OpenAuditLog that first replays, then removes, the
// journal at legacy ("" for none).
func openAuditLog(db *DB, path, legacy string, log *slog.Logger) (*AuditLog, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &AuditLog{audit: NewAudit(db), log: log, limit: journalLimit, pending: map[int64]*core.AuditRecord{}, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if legacy != "" {
		if err := l.replay(legacy); err != nil {
			return nil, err
		}
	}
	if err := l.replay(path); err != nil {
		return nil, err
	}
	var maxID int64
	if err := db.Raw("SELECT COALESCE(MAX(id), 0) FROM audit_records").Scan(&maxID).Error; err != nil {
		return nil, fmt.Errorf("read last audit id: %w", err)
	}
	l.nextID = maxID + 1
	if err := os.MkdirAll(filepath.Dir(path), fsutil.DirMode); err != nil {
		return nil, fmt.Errorf("open audit journal: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_TRUNC, fsutil.FileMode)
	if err != nil {
		return nil, fmt.Errorf("open audit journal: %w", err)
	}
	if legacy != "" {
		// Its records are in the database now.
		if err := os.Remove(legacy); err != nil && !errors.Is(err, os.ErrNotExist) {
			f.Close()
			return nil, fmt.Errorf("remove the old audit journal: %w", err)
		}
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
	latest := map[int64]*core.AuditRecord{}
	var order []int64
	br := bufio.NewReader(f)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var r core.AuditRecord
			if uerr := json.Unmarshal(line, &r); uerr != nil || r.ID == 0 {
				l.log.Warn("skip a damaged audit journal line", "err", uerr)
			} else {
				if latest[r.ID] == nil {
					order = append(order, r.ID)
				}
				latest[r.ID] = &r
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read audit journal: %w", err)
		}
	}
	recs := make([]*core.AuditRecord, len(order))
	for i, id := range order {
		recs[i] = latest[id]
	}
	if err := l.audit.upsert(recs); err != nil {
		return fmt.Errorf("replay audit journal: %w", err)
	}
	if len(recs) > 0 {
		l.log.Info("replayed audit journal", "records", len(recs))
	}
	return nil
}

// Begin assigns rec its id and makes it durable. A request whose Begin
// fails must be refused: Airlock could not say afterwards that it ran.
func (l *AuditLog) Begin(rec *core.AuditRecord) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return core.Errorf(core.EUnavailable, "audit log is closed")
	}
	rec.ID = l.nextID
	if err := l.writeLocked([]*core.AuditRecord{rec}); err != nil {
		// Not begun: the id goes to the next record, and a Finish of
		// this one must fail rather than write a record under it.
		rec.ID = 0
		return err
	}
	l.nextID++
	return nil
}

// Finish makes the completed version of a record begun with Begin durable.
func (l *AuditLog) Finish(rec *core.AuditRecord) error {
	if rec.ID == 0 {
		return core.Errorf(core.EInvalid, "audit record was never begun")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return core.Errorf(core.EUnavailable, "audit log is closed")
	}
	return l.writeLocked([]*core.AuditRecord{rec})
}

// Append assigns ids to complete records and makes them durable (records
// Airlock makes without a request, such as the recovery of a crash).
func (l *AuditLog) Append(recs []*core.AuditRecord) error {
	if len(recs) == 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return core.Errorf(core.EUnavailable, "audit log is closed")
	}
	first := l.nextID
	for i, r := range recs {
		r.ID = first + int64(i)
	}
	if err := l.writeLocked(recs); err != nil {
		for _, r := range recs {
			r.ID = 0
		}
		return err
	}
	l.nextID += int64(len(recs))
	return nil
}

// writeLocked writes recs to the journal with one write and queues their
// newest versions for the database. On error nothing is queued.
func (l *AuditLog) writeLocked(recs []*core.AuditRecord) error {
	buf := l.buf[:0]
	if l.torn {
		buf = append(buf, '\n')
	}
	for _, r := range recs {
		buf = appendRecord(buf, r)
	}
	if cap(buf) <= maxKeptBuffer {
		l.buf = buf
	}
	n, err := l.f.Write(buf)
	l.size += int64(n)
	if err != nil {
		if n > 0 {
			l.torn = true
		}
		return fmt.Errorf("write audit journal: %w", err)
	}
	l.torn = false
	for _, r := range recs {
		if l.pending[r.ID] == nil {
			l.order = append(l.order, r.ID)
		}
		c := *r
		l.pending[r.ID] = &c
	}
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
	batch := make([]*core.AuditRecord, len(l.order))
	for i, id := range l.order {
		batch[i] = l.pending[id]
	}
	l.mu.Unlock()
	if err := l.audit.upsert(batch); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// Forget what was stored, unless a newer version arrived meanwhile.
	for _, r := range batch {
		if l.pending[r.ID] == r {
			delete(l.pending, r.ID)
		}
	}
	keep := l.order[:0]
	for _, id := range l.order {
		if l.pending[id] != nil {
			keep = append(keep, id)
		}
	}
	l.order = keep
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
	for _, id := range l.order {
		buf = appendRecord(buf, l.pending[id])
	}
	if err := fsutil.WriteFileAtomic(l.path, buf); err != nil {
		return fmt.Errorf("rotate audit journal: %w", err)
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND, fsutil.FileMode)
	if err != nil {
		return fmt.Errorf("rotate audit journal: %w", err)
	}
	l.f.Close()
	l.f, l.size, l.torn = f, int64(len(buf)), false
	return nil
}

// Unfinished returns the records still "running": at start-up, the
// requests Airlock was handling when it stopped.
func (l *AuditLog) Unfinished() ([]core.AuditRecord, error) {
	if err := l.Flush(); err != nil {
		return nil, err
	}
	return l.audit.running()
}

// Get returns one record.
func (l *AuditLog) Get(id int64) (core.AuditRecord, bool, error) {
	if err := l.Flush(); err != nil {
		return core.AuditRecord{}, false, err
	}
	return l.audit.get(id)
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
