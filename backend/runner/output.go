package runner

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/backend/fsutil"
)

// Output limits.
const (
	// MaxLogLine bounds one line of a run's log; a longer line is cut.
	MaxLogLine = 8 << 10
	// MaxLogBytes bounds a run's log file; past it lines are counted, not
	// written.
	MaxLogBytes = 64 << 20
	// maxPendingLines bounds the lines waiting for the next event: a run
	// that writes faster than events go out loses the oldest from the
	// events (never from the log file).
	maxPendingLines = 500
)

// output takes a run's stdout and stderr: every line goes to the log file
// with a timestamp, and to the UI in batches, one event per interval at
// most. Writes never fail and never wait on anything but a mutex and the
// file, so the child cannot stall on its output.
type output struct {
	emitMu sync.Mutex // orders batches: taken before mu, held while emitting
	mu     sync.Mutex
	f      *os.File
	now    func() time.Time
	emit   func(b batch)
	every  time.Duration

	partial [2][]byte // the unfinished line of each stream
	cut     [2]bool   // the line of that stream was cut; skip to its end
	pending []string
	dropped int
	// lines counts the lines so far (sent, dropped or not): the index of
	// the next one. Up to the log's cap it is also the line's place in
	// the log file, which lets a view that read the file skip the lines
	// of later batches it already has.
	lines   int
	timer   *time.Timer
	written int64
	full    bool
	closed  bool
}

// batch is what one event carries: lines, the index of the first of them
// (see output.lines) and how many were dropped before them.
type batch struct {
	lines   []string
	first   int
	dropped int
}

func newOutput(f *os.File, now func() time.Time, every time.Duration, emit func(batch)) *output {
	return &output{f: f, now: now, every: every, emit: emit}
}

// stream returns the writer of stream i (0 stdout, 1 stderr).
func (o *output) stream(i int) io.Writer { return streamWriter{o, i} }

type streamWriter struct {
	o *output
	i int
}

func (w streamWriter) Write(p []byte) (int, error) {
	w.o.write(w.i, p)
	return len(p), nil
}

func (o *output) write(i int, p []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	for len(p) > 0 {
		nl := bytes.IndexByte(p, '\n')
		chunk := p
		if nl >= 0 {
			chunk = p[:nl]
		}
		if !o.cut[i] {
			room := MaxLogLine - len(o.partial[i])
			if len(chunk) > room {
				o.partial[i] = append(o.partial[i], chunk[:room]...)
				o.lineLocked(runLine(fsutil.CutUTF8(o.partial[i]) + fsutil.LineCutMarker))
				o.partial[i] = o.partial[i][:0]
				o.cut[i] = true
			} else {
				o.partial[i] = append(o.partial[i], chunk...)
			}
		}
		if nl < 0 {
			return
		}
		if !o.cut[i] {
			o.lineLocked(runLine(string(o.partial[i])))
		}
		o.partial[i] = o.partial[i][:0]
		o.cut[i] = false
		p = p[nl+1:]
	}
}

// airlockMark starts Airlock's own lines in a run's log (note).
const airlockMark = "[airlock]"

// runLine is a line of the run's output as the log keeps it: one that
// would read as Airlock's own is marked as the run's (found by a new-user
// test: a run printing "[airlock] ended: completed" spoke in Airlock's
// voice, in the UI and in get_execution_log).
func runLine(s string) string {
	if strings.HasPrefix(strings.TrimLeft(s, " \t"), airlockMark) {
		return "(run) " + s
	}
	return s
}

// note writes a line of Airlock's own into the run's log.
func (o *output) note(format string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.closed {
		// One line, as in the file: a line's index is its place there.
		text := strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(fmt.Sprintf(format, args...))
		o.lineLocked(airlockMark + " " + text)
	}
}

func (o *output) lineLocked(text string) {
	text = strings.ToValidUTF8(strings.TrimSuffix(text, "\r"), "\uFFFD")
	stamp := "[" + o.now().UTC().Format(time.RFC3339) + "] "
	line := stamp + text
	if !o.full && o.written+int64(len(line))+1 > MaxLogBytes {
		o.full = true
		// The file's last line, counted and sent like the others: the
		// lines of the file keep their indexes.
		o.keepLocked(fmt.Sprintf("%s[airlock] the log reached %d bytes: further output is not kept", stamp, MaxLogBytes), true)
	}
	o.keepLocked(line, !o.full)
}

// keepLocked writes line to the file (toFile) and queues it for the next
// event.
func (o *output) keepLocked(line string, toFile bool) {
	if toFile {
		n, _ := io.WriteString(o.f, line+"\n")
		o.written += int64(n)
	}
	o.lines++
	if len(o.pending) >= maxPendingLines {
		o.pending = o.pending[1:]
		o.dropped++
	}
	o.pending = append(o.pending, line)
	if o.timer == nil {
		o.timer = time.AfterFunc(o.every, o.flush)
	}
}

// flush sends what is pending as one event.
func (o *output) flush() {
	o.emitMu.Lock()
	defer o.emitMu.Unlock()
	o.mu.Lock()
	b := batch{lines: o.pending, first: o.lines - len(o.pending), dropped: o.dropped}
	o.pending, o.dropped, o.timer = nil, 0, nil
	o.mu.Unlock()
	if len(b.lines) > 0 || b.dropped > 0 {
		o.emit(b)
	}
}

// endStreams ends the unfinished lines of the streams (the process has
// exited: nothing more comes).
func (o *output) endStreams() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.endStreamsLocked()
}

func (o *output) endStreamsLocked() {
	for i := range o.partial {
		if len(o.partial[i]) > 0 && !o.cut[i] && !o.closed {
			o.lineLocked(string(o.partial[i]))
		}
		o.partial[i], o.cut[i] = nil, false
	}
}

// close ends the unfinished lines, sends the last batch and closes the
// file. Nothing is written afterwards.
func (o *output) close() {
	o.mu.Lock()
	o.endStreamsLocked()
	o.closed = true
	if o.timer != nil {
		o.timer.Stop()
	}
	o.mu.Unlock()
	o.flush()
	o.f.Sync()
	o.f.Close()
}
