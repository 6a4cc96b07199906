package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Past the log's size cap the file ends with a note, which is counted and
// sent like any line: the file's lines keep the indexes the batches give
// them, and the lines after it are sent with the indexes that follow.
func TestOutputCountsTheCapNoteAsALine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var sent []string
	o := newOutput(f, time.Now, time.Hour, func(b batch) {
		mu.Lock()
		defer mu.Unlock()
		if b.first != len(sent)+b.dropped {
			t.Errorf("a batch starts at %d after %d lines and %d dropped", b.first, len(sent), b.dropped)
		}
		for range b.dropped {
			sent = append(sent, "")
		}
		sent = append(sent, b.lines...)
	})
	line := append(bytes.Repeat([]byte("x"), MaxLogLine-100), '\n')
	for range MaxLogBytes/len(line) + 3 {
		o.stream(0).Write(line)
		o.flush() // no line dropped from the events: every index is checked
	}
	o.note("ended")
	o.close()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	file := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	last := file[len(file)-1]
	if !strings.HasSuffix(last, "[airlock] the log reached 67108864 bytes: further output is not kept") {
		t.Fatalf("the file ends with %.80q, want the note that it is full", last)
	}
	if len(sent) <= len(file) || sent[len(file)-1] != last {
		t.Fatalf("%d lines sent, the file has %d: the note is not sent as line %d", len(sent), len(file), len(file)-1)
	}
	for i := range file {
		if sent[i] != file[i] {
			t.Fatalf("line %d sent is not line %d of the file", i, i)
		}
	}
	if !strings.HasSuffix(sent[len(sent)-1], "[airlock] ended") {
		t.Errorf("the last line sent is %.80q, want the note after the cap", sent[len(sent)-1])
	}
}
