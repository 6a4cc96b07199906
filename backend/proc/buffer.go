package proc

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// Capped is an io.Writer that keeps the first Max bytes written to it and
// counts the rest. Write never fails and never blocks on anything but a
// mutex, so a chatty child can never stall on its output.
type Capped struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped int64
}

// NewCapped returns a Capped keeping at most max bytes (max < 0 counts as 0).
func NewCapped(max int) *Capped {
	if max < 0 {
		max = 0
	}
	return &Capped{max: max}
}

// Write keeps what fits under the cap and counts the rest as dropped. It
// always reports len(p) written: dropping is the point, not an error.
func (c *Capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - len(c.buf)
	if room > len(p) {
		room = len(p)
	}
	if room > 0 {
		c.buf = append(c.buf, p[:room]...)
	}
	c.dropped += int64(len(p) - room)
	return len(p), nil
}

// Bytes returns a copy of the bytes kept.
func (c *Capped) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf)
}

// Dropped returns how many bytes were written past the cap.
func (c *Capped) Dropped() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped
}

// String returns the bytes kept as text, followed by a truncation marker
// when anything was dropped. Invalid UTF-8 (a rune cut by the cap, or binary
// output) is replaced with U+FFFD so the text can travel in JSON.
func (c *Capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := strings.ToValidUTF8(string(c.buf), "\uFFFD")
	if c.dropped > 0 {
		s += TruncationMarker(c.dropped)
	}
	return s
}

// TruncationMarker is the text appended to output cut at a cap.
func TruncationMarker(dropped int64) string {
	return fmt.Sprintf("\n…[output truncated: %d more bytes]", dropped)
}

// Tail is an io.Writer that keeps the last lines written to it, for showing
// what a process said last (a crashed server's stderr). Lines longer than
// the line limit are cut with a marker; Write never blocks on anything but a
// mutex and never fails.
type Tail struct {
	mu       sync.Mutex
	lines    []string // a ring of at most maxLines entries
	next     int      // where the next line goes once the ring is full
	maxLines int
	maxLine  int
	partial  []byte // the line being written, up to maxLine bytes
	cut      int64  // bytes of the partial line beyond maxLine
}

// NewTail returns a Tail keeping the last maxLines lines of at most maxLine
// bytes each (both at least 1).
func NewTail(maxLines, maxLine int) *Tail {
	return &Tail{maxLines: max(maxLines, 1), maxLine: max(maxLine, 1)}
}

// Write splits p into lines and keeps the last ones.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		room := t.maxLine - len(t.partial)
		if room > len(chunk) {
			room = len(chunk)
		}
		if room > 0 {
			t.partial = append(t.partial, chunk[:room]...)
		}
		t.cut += int64(len(chunk) - room)
		if i < 0 {
			break
		}
		t.push()
		p = p[i+1:]
	}
	return n, nil
}

// AddLine keeps line as a whole line of its own (a note about the
// process), before the line the process is writing, which goes on
// unbroken (found by a code review: a note written into the stream was
// spliced onto half a stderr line).
func (t *Tail) AddLine(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(line) > t.maxLine {
		line = strings.ToValidUTF8(line[:t.maxLine], "\uFFFD") + fmt.Sprintf(" …[line cut: %d more bytes]", len(line)-t.maxLine)
	}
	t.keep(line)
}

// push ends the partial line.
func (t *Tail) push() {
	line := t.render()
	t.partial, t.cut = t.partial[:0], 0
	t.keep(line)
}

func (t *Tail) keep(line string) {
	if len(t.lines) < t.maxLines {
		t.lines = append(t.lines, line)
		return
	}
	t.lines[t.next] = line
	t.next = (t.next + 1) % t.maxLines
}

func (t *Tail) render() string {
	b := t.partial
	if t.cut > 0 {
		// Do not leave half a rune before the marker.
		for i := 0; i < utf8.UTFMax-1 && len(b) > 0; i++ {
			if r, size := utf8.DecodeLastRune(b); r != utf8.RuneError || size != 1 {
				break
			}
			b = b[:len(b)-1]
		}
	}
	s := strings.ToValidUTF8(strings.TrimSuffix(string(b), "\r"), "\uFFFD")
	if t.cut > 0 {
		s += fmt.Sprintf(" …[line cut: %d more bytes]", t.cut)
	}
	return s
}

// Lines returns the kept lines, oldest first, including an unfinished last
// line.
func (t *Tail) Lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.lines)+1)
	out = append(out, t.lines[t.next:]...)
	out = append(out, t.lines[:t.next]...)
	if len(t.partial) > 0 || t.cut > 0 {
		out = append(out, t.render())
	}
	if len(out) > t.maxLines {
		out = out[len(out)-t.maxLines:]
	}
	return out
}

// String returns the kept lines joined by newlines.
func (t *Tail) String() string { return strings.Join(t.Lines(), "\n") }
