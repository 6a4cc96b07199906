package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// badOutputHint says what a server that wrote something else than JSON-RPC
// on stdout should do instead.
const badOutputHint = "a stdio server must write only JSON-RPC messages on stdout, and its logs on stderr"

// badOutputError is what a process source wrote on stdout that is not a
// JSON-RPC message. The SDK ends the connection on it, and Airlock then
// stops the process: its exit status (killed by SIGTERM) says nothing of
// why, so this error is reported instead.
type badOutputError struct {
	line []byte // the offending line, when it was found among the last bytes read
	err  error  // what the SDK said
}

// quoteMax is how much of an offending line an error quotes.
const quoteMax = 80

func (e *badOutputError) Error() string {
	if strings.Contains(e.err.Error(), "exceeded the configured maximum line length") {
		// Valid MCP, only too large (found by an interop test: it was
		// called not MCP).
		return fmt.Sprintf("sent a message larger than %d MiB, the most Airlock reads in one message from a stdio server (MCP clients have such limits too: 10 MiB in the TypeScript SDK), and it could not be skipped; its connection was reset", mcp.DefaultMaxLineLength>>20)
	}
	if len(e.line) == 0 {
		return "wrote something on stdout that is not MCP (JSON-RPC): " + e.err.Error()
	}
	line, more := e.line, ""
	if len(line) > quoteMax {
		line, more = line[:quoteMax], "…"
		// Do not cut a rune in two: drop the start of one at the end (at
		// most UTFMax-1 bytes; invalid bytes elsewhere are shown as U+FFFD).
		for i := 0; i < utf8.UTFMax-1 && len(line) > 0 && !utf8.Valid(line[max(0, len(line)-utf8.UTFMax):]); i++ {
			line = line[:len(line)-1]
		}
	}
	return fmt.Sprintf("wrote a line on stdout that is not MCP (JSON-RPC): %q%s", strings.ToValidUTF8(string(line), "\uFFFD"), more)
}

func (e *badOutputError) Unwrap() error { return e.err }

// stdioTransport is the SDK's transport over a process's stdin and stdout,
// which turns the SDK's failure to read what the process wrote into a
// *badOutputError quoting the offending line.
type stdioTransport struct {
	tap   *stdoutTap
	w     io.WriteCloser
	stuck time.Duration // see stdioConn.stuck
}

// newStdioTransport returns the transport over a process's stdout and
// stdin; onJunk hears of each line on stdout that is not MCP, skipped.
func newStdioTransport(stdout io.ReadCloser, stdin io.WriteCloser, onJunk func(line []byte), stuck time.Duration) *stdioTransport {
	return &stdioTransport{tap: &stdoutTap{r: stdout, onJunk: onJunk}, w: stdin, stuck: stuck}
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	// The process's stdout is a pipe from os.Pipe; on Unix closing it
	// wakes a blocked read, so the SDK may read on its connection's own
	// reader goroutine (one hand-off between goroutines less per answer).
	c, err := (&mcp.IOTransport{Reader: t.tap, Writer: t.w, ReadInline: runtime.GOOS != "windows"}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &stdioConn{Connection: c, tap: t.tap, stdin: t.w, stuck: max(t.stuck, minStuck)}, nil
}

type stdioConn struct {
	mcp.Connection
	tap   *stdoutTap
	stdin io.Closer
	hung  atomic.Bool
	// stuck is how long a write to the server's stdin may go on after the
	// request it carries has ended (cancelled, or past its call timeout)
	// before the server is taken as hung: it stopped reading its input,
	// the pipe is full, and every request behind that write waits for it.
	// It is the server's call timeout: a server busy with a long call that
	// reads its input again within that time is left alone (found in a
	// review: one second restarted it, and lost that call).
	stuck time.Duration
}

// minStuck is the shortest stuck time. A write takes microseconds when the
// server reads.
const minStuck = time.Second

// Write writes msg to the server's stdin. The SDK's write takes no notice
// of ctx once it is under way, so a server that stopped reading held the
// call past its timeout, every call behind it, and Airlock's stop (found by
// an interop test). When ctx has ended and the write is still going on
// c.stuck later, stdin is closed: the write fails, the connection ends
// with errHungStdin, and the server is stopped and started again.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	var done atomic.Bool
	stop := context.AfterFunc(ctx, func() {
		time.AfterFunc(c.stuck, func() {
			if !done.Load() && c.hung.CompareAndSwap(false, true) {
				c.stdin.Close()
			}
		})
	})
	err := c.Connection.Write(ctx, msg)
	done.Store(true)
	stop()
	if err != nil && c.hung.Load() {
		return fmt.Errorf("%w (%v)", errHungStdin, err)
	}
	return err
}

// errHungStdin is why the connection to a server that stopped reading its
// stdin was ended.
var errHungStdin = errors.New("the server stopped reading its input (stdin) and held a request past its end by its call timeout; it is restarted")

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil && c.hung.Load() {
		return nil, errHungStdin
	}
	if err == nil || !unreadable(err) {
		return msg, err
	}
	return nil, &badOutputError{line: c.tap.badLine(), err: err}
}

// unreadable reports whether a read error of the SDK's stdio connection
// means that what the process wrote could not be read as JSON-RPC, rather
// than that its stdout ended or was closed, or that the read was cancelled.
func unreadable(err error) bool {
	var pathErr *fs.PathError // the pipe itself failed (Airlock closed it)
	return !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) &&
		!errors.As(err, &pathErr)
}

// tapSize is how many of the last bytes read stdoutTap keeps.
const tapSize = 4096

// stdoutTap reads a process's stdout for the SDK. A line that cannot be a
// JSON-RPC message (its first byte other than blank is not { or [, or the
// one after that cannot follow it in a message: "[dotenv@17] …") is
// skipped and reported to onJunk, as MCP clients do (Claude Code and the
// TypeScript SDK log it and read on; found by a new-user test: one
// "Loading model..." line on stdout broke a server that works with them).
// A message cut off at its line's end is followed by a byte the SDK's
// decoder refuses, so that the connection ends on it, quoted, instead of
// the decoder reading the next message into it (found by a regression
// test: the call waited, and the next one got the error). It keeps the
// last bytes it passed on, so that a line the SDK could not read can be
// quoted.
type stdoutTap struct {
	r      io.ReadCloser
	onJunk func(line []byte)

	in     []byte // read from r and not yet filtered
	inBuf  []byte
	rerr   error  // r's error, returned once in is drained
	state  int    // where in a line the filter is (lineStart, …)
	held   []byte // the opener of a line and the blanks after it, until the next byte decides
	junk   []byte // the start of the line being skipped, at most tapSize bytes
	inject []byte // bytes to pass on before the rest (after a message cut off)
	outBuf []byte // reused for inject, which is passed on before the next line
	line   []byte // a message line held until its end, up to lineHold bytes
	stream bool   // the message line is longer: it passes as it comes
	depth  int    // nesting of the message line passed on
	inStr  bool   // in a string of it
	esc    bool   // after a backslash in that string

	mu  sync.Mutex
	buf []byte // the last bytes passed on, at most tapSize
	cut bool   // bytes before buf were dropped
}

const (
	lineStart   = iota // before a line's first byte other than blank
	linePeek           // after its { or [, until the next byte other than blank
	lineMessage        // in a line passed on
	lineJunk           // in a line skipped
)

// cutOff follows a message line that ended unfinished: no JSON value can
// go on with a NUL byte, so the decoder fails there.
var cutOff = []byte("\x00\n")

// lineHold is how long a message line may be to be held until its end and
// checked whole: a JSON log line ({"level":30,"msg":…}, {}) is no message
// and is skipped (found by a regression test: pino's log lines took a
// server down). A longer line passes as it comes.
const lineHold = 64 << 10

func (t *stdoutTap) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if len(t.in) == 0 && len(t.inject) == 0 {
			if t.rerr != nil {
				if t.state == lineJunk || t.state == linePeek {
					t.junk = append(t.junk, t.held...)
					t.skipped() // its last line, without a newline
				}
				return 0, t.rerr
			}
			if t.inBuf == nil {
				t.inBuf = make([]byte, 32<<10)
			}
			n, err := t.r.Read(t.inBuf)
			t.in, t.rerr = t.inBuf[:n], err
			continue
		}
		if n := t.filter(p); n > 0 {
			t.keep(p[:n])
			return n, nil
		}
	}
}

// filter moves what t.in holds of messages into p, skipping blanks between
// them and lines that are not messages, and returns how much it moved.
func (t *stdoutTap) filter(p []byte) int {
	n := 0
	for n < len(p) && (len(t.inject) > 0 || len(t.in) > 0) {
		if len(t.inject) > 0 {
			c := copy(p[n:], t.inject)
			n += c
			t.inject = t.inject[c:]
			continue
		}
		switch t.state {
		case lineMessage:
			if !t.stream {
				t.hold()
				break
			}
			end, last := len(t.in), false
			if i := bytes.IndexByte(t.in, '\n'); i >= 0 {
				end, last = i+1, true
			}
			c := copy(p[n:], t.in[:end])
			t.scan(t.in[:c])
			n += c
			t.in = t.in[c:]
			if last && c == end {
				if t.depth != 0 || t.inStr {
					t.inject = cutOff
				}
				t.state, t.stream, t.depth, t.inStr, t.esc = lineStart, false, 0, false, false
			}
		case lineJunk:
			i := bytes.IndexByte(t.in, '\n')
			end := len(t.in)
			if i >= 0 {
				end = i
			}
			if room := tapSize - len(t.junk); room > 0 {
				t.junk = append(t.junk, t.in[:min(end, room)]...)
			}
			if i < 0 {
				t.in = nil
				break
			}
			t.in = t.in[i+1:]
			t.skipped()
		case linePeek:
			b := t.in[0]
			switch {
			case b == ' ' || b == '\t' || b == '\r':
				t.held = append(t.held, b)
				t.in = t.in[1:]
				if len(t.held) > tapSize {
					t.junk, t.held, t.state = append(t.junk[:0], t.held...), t.held[:0], lineJunk
				}
			case t.held[0] == '{' && (b == '"' || b == '}'), t.held[0] == '[' && (b == '{' || b == ']'):
				// It may be a message: held until its end.
				t.line = append(t.line[:0], t.held...)
				t.held, t.state = t.held[:0], lineMessage
			default:
				t.junk, t.held, t.state = append(t.junk[:0], t.held...), t.held[:0], lineJunk
			}
		default:
			switch b := t.in[0]; b {
			case ' ', '\t', '\r', '\n':
				t.in = t.in[1:] // blank between messages: the decoder skips it anyway
			case '{', '[':
				t.held, t.state = append(t.held[:0], b), linePeek
				t.in = t.in[1:]
			default:
				t.state = lineJunk
			}
		}
	}
	return n
}

// hold takes the message line from t.in until its end and decides it
// whole: a JSON-RPC message passes; one that is not whole JSON passes with
// cutOff after it, so that the call it answered fails at once, quoted;
// whole JSON that is no JSON-RPC (a log line) is skipped. A line longer
// than lineHold passes as it comes from then on.
func (t *stdoutTap) hold() {
	i := bytes.IndexByte(t.in, '\n')
	end := len(t.in)
	if i >= 0 {
		end = i
	}
	t.line = append(t.line, t.in[:end]...)
	if i < 0 {
		t.in = nil
		if len(t.line) > lineHold {
			t.stream = true
			t.scan(t.line)
			t.outBuf = append(t.outBuf[:0], t.line...)
			t.inject, t.line = t.outBuf, t.line[:0]
		}
		return
	}
	t.in = t.in[i+1:]
	line := bytes.TrimRight(t.line, "\r")
	rpc := bytes.Contains(line, []byte(`"jsonrpc"`))
	switch {
	case rpc && json.Valid(line):
		t.outBuf = append(append(t.outBuf[:0], line...), '\n')
		t.inject = t.outBuf
	case rpc:
		t.outBuf = append(append(append(t.outBuf[:0], line...), '\n'), cutOff...)
		t.inject = t.outBuf
	default:
		t.junk = append(t.junk[:0], line[:min(len(line), tapSize)]...)
		t.skipped()
	}
	t.line, t.state = t.line[:0], lineStart
}

// scan follows the nesting of a message line through b.
func (t *stdoutTap) scan(b []byte) {
	for _, c := range b {
		switch {
		case t.esc:
			t.esc = false
		case t.inStr:
			switch c {
			case '\\':
				t.esc = true
			case '"':
				t.inStr = false
			}
		case c == '"':
			t.inStr = true
		case c == '{' || c == '[':
			t.depth++
		case c == '}' || c == ']':
			t.depth--
		}
	}
}

// skipped reports the line skipped and goes on at the start of the next.
func (t *stdoutTap) skipped() {
	if t.onJunk != nil {
		t.onJunk(bytes.TrimRight(t.junk, "\r"))
	}
	t.junk, t.state = t.junk[:0], lineStart
}

// keep remembers the last bytes passed on.
func (t *stdoutTap) keep(b []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(b) >= tapSize {
		t.buf, t.cut = append(t.buf[:0], b[len(b)-tapSize:]...), true
		return
	}
	if over := len(t.buf) + len(b) - tapSize; over > 0 {
		t.buf, t.cut = append(t.buf[:0], t.buf[over:]...), true
	}
	t.buf = append(t.buf, b...)
}

func (t *stdoutTap) Close() error { return t.r.Close() }

// badLine returns the first line kept that is not a JSON-RPC message, or
// nil when there is none.
func (t *stdoutTap) badLine() []byte {
	t.mu.Lock()
	kept, cut := bytes.Clone(t.buf), t.cut
	t.mu.Unlock()
	lines := bytes.Split(kept, []byte("\n"))
	if cut {
		lines = lines[1:] // the end of a line whose start was dropped
	}
	for _, l := range lines {
		l = bytes.TrimSpace(l)
		switch {
		case len(l) == 0, bytes.Equal(l, cutOff[:1]): // the byte after a message cut off
		case l[0] == '[' && json.Valid(l): // a batch
		default:
			if _, err := jsonrpc.DecodeMessage(l); err != nil {
				return l
			}
		}
	}
	return nil
}
