package catalog

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestStdoutTapBadLine(t *testing.T) {
	valid := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"nothing read", nil, ""},
		{"only messages", []string{valid, `[` + strings.TrimSpace(valid) + `]` + "\n"}, ""},
		{"JSON-RPC that is no message", []string{valid, `{"jsonrpc":"2.0","hello":1}` + "\n"}, `{"jsonrpc":"2.0","hello":1}`},
		{"broken JSON", []string{valid, `{"jsonrpc":"2.0","id":` + "\n"}, `{"jsonrpc":"2.0","id":`},
		{"a line whose start was dropped is skipped", []string{`{"jsonrpc":"2.0","id":1,"result":{"t":"` + strings.Repeat("x", tapSize) + `"}}`, "\n{\"jsonrpc\":bad\n"}, `{"jsonrpc":bad`},
		{"a message cut off, split across reads", []string{valid + `{"jsonrpc":`, `"2.0",` + "\n" + valid}, `{"jsonrpc":"2.0",`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tap := &stdoutTap{r: io.NopCloser(strings.NewReader(strings.Join(tc.writes, "")))}
			if _, err := io.ReadAll(tap); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(tap.badLine())); diff != "" {
				t.Errorf("badLine (-want +got):\n%s", diff)
			}
		})
	}
}

// Lines that cannot be messages are skipped and reported, whatever the
// size of the reads; messages pass as they were written.
func TestStdoutTapSkipsLinesThatAreNotMessages(t *testing.T) {
	msg := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Loading model... done"}]}}` + "\n"
	batch := `[{"jsonrpc":"2.0","method":"x"}]` + "\n"
	big := `{"jsonrpc":"2.0","id":2,"result":{"text":"` + strings.Repeat("é", 40000) + `"}}` + "\n"
	data := "Loading model...\n" + msg + "\n   \r\n" + "  WARN: deprecated\r\n" + batch + big + "\x1b[32mready\x1b[0m\n" + msg + "no newline at the end"
	wantOut := msg + batch + big + msg
	wantJunk := []string{"Loading model...", "WARN: deprecated", "\x1b[32mready\x1b[0m", "no newline at the end"}
	// Lines that start like a message and are not one (found by a
	// regression test: dotenv's log line ended the connection).
	data = "[dotenv@17.2.1] injecting env (0) from .env\n{not json at all\n" + data
	wantJunk = append([]string{"[dotenv@17.2.1] injecting env (0) from .env", "{not json at all"}, wantJunk...)
	// JSON that is no JSON-RPC: a structured log line, console.log({}), an
	// empty list with words after it (regression test).
	data = `{"level":30,"time":1,"msg":"handling call"}` + "\n{}\n[] no plugins\n" + data
	wantJunk = append([]string{`{"level":30,"time":1,"msg":"handling call"}`, "{}", "[] no plugins"}, wantJunk...)
	for _, chunk := range []int{1, 2, 7, 100, 4096, 1 << 20} {
		var junk []string
		tap := &stdoutTap{r: io.NopCloser(iotest.OneByteReader(strings.NewReader(data))), onJunk: func(l []byte) { junk = append(junk, string(l)) }}
		if chunk > 1 {
			tap.r = io.NopCloser(strings.NewReader(data))
		}
		var out bytes.Buffer
		buf := make([]byte, chunk)
		for {
			n, err := tap.Read(buf)
			out.Write(buf[:n])
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if out.String() != wantOut {
			t.Errorf("chunk %d: passed on %d bytes, want the %d of the messages", chunk, out.Len(), len(wantOut))
		}
		if diff := cmp.Diff(wantJunk, junk); diff != "" {
			t.Errorf("chunk %d: skipped lines (-want +got):\n%s", chunk, diff)
		}
	}
}

func TestBadOutputErrorQuote(t *testing.T) {
	sdk := errors.New("invalid character 'x' looking for beginning of value")
	tests := []struct {
		name string
		line string
		want string
	}{
		{"no line found", "", "wrote something on stdout that is not MCP (JSON-RPC): invalid character 'x' looking for beginning of value"},
		{"short", "hello", `wrote a line on stdout that is not MCP (JSON-RPC): "hello"`},
		{"cut", strings.Repeat("a", 100), `wrote a line on stdout that is not MCP (JSON-RPC): "` + strings.Repeat("a", quoteMax) + `"…`},
		{"cut inside a rune", strings.Repeat("a", quoteMax-1) + "é", `wrote a line on stdout that is not MCP (JSON-RPC): "` + strings.Repeat("a", quoteMax-1) + `"…`},
	}
	// An answer over the SDK's line limit is valid MCP, only too large
	// (found by an interop test: it was called not MCP).
	tooLong := &badOutputError{line: []byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"aaaa`),
		err: errors.New("inbound JSON-RPC frame exceeded the configured maximum line length")}
	if msg := tooLong.Error(); !strings.Contains(msg, "larger than 16 MiB") || strings.Contains(msg, "not MCP") {
		t.Errorf("an over-long answer: %q", msg)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := &badOutputError{line: []byte(tc.line), err: sdk}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("Error (-want +got):\n%s", diff)
			}
			if !errors.Is(err, sdk) {
				t.Error("the SDK's error is not in the chain")
			}
		})
	}
}

// Whatever a server writes on stdout, the tap and the error quoting it
// neither panic nor quote an empty or invalid line when there was one.
func FuzzStdoutTap(f *testing.F) {
	f.Add([]byte("starting up\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"), 7)
	f.Add([]byte("\xff\xfe binary junk that goes on and on and on and on and on and on and on and on and on\n"), 3)
	f.Add([]byte(strings.Repeat("é", 60)+"\n"), 50)
	f.Fuzz(func(t *testing.T, data []byte, chunk int) {
		if chunk <= 0 || chunk > 9000 {
			chunk = 1 + len(data)%4096
		}
		tap := &stdoutTap{r: io.NopCloser(strings.NewReader(string(data)))}
		buf := make([]byte, chunk)
		for {
			if _, err := tap.Read(buf); err != nil {
				break
			}
		}
		line := tap.badLine()
		if strings.ContainsAny(string(line), "\n") {
			t.Fatalf("badLine %q holds a newline", line)
		}
		msg := (&badOutputError{line: line, err: errors.New("bad")}).Error()
		if !utf8.ValidString(msg) {
			t.Fatalf("error %q is not valid UTF-8", msg)
		}
		if len(bytes.TrimSpace(line)) > 0 && strings.Contains(msg, `: ""`) {
			t.Fatalf("error %q quotes nothing of the line %q", msg, line)
		}
	})
}

// The stderr line a status quotes says why the process ended: not the
// version Node.js prints after a stack trace, a stack frame, or a line of
// stdout Airlock skipped.
func TestLastInformativeStderrLine(t *testing.T) {
	crash := []string{"file:///srv/index.js:12", "    throw new Error('no API key');", "    ^", "", "Error: no API key",
		"    at file:///srv/index.js:12:11", "    at ModuleJob.run (node:internal/modules/esm/module_job:234:25)", "", "Node.js v20.20.2"}
	for _, tc := range []struct {
		lines []string
		want  string
	}{
		{crash, "Error: no API key"},
		{[]string{"listening", "[stdout, not MCP, skipped] Loading model..."}, "listening"},
		{[]string{"Error: API key missing", "node:events:497", "      throw er; // Unhandled 'error' event", "Error: write EPIPE",
			"    at afterWriteDispatched (node:internal/stream_base_commons:161:15)", "  errno: -32,", "  code: 'EPIPE',", "  syscall: 'write'", "}", "", "Node.js v20.20.2"}, "Error: API key missing"},
		{[]string{"", "  "}, ""},
		{nil, ""},
	} {
		if got := lastInformative(tc.lines); got != tc.want {
			t.Errorf("lastInformative(%q) = %q, want %q", tc.lines, got, tc.want)
		}
	}
}

// A message cut off at its line's end is followed by a NUL, on which the
// SDK's decoder fails at once (it would read the next message into it).
func TestStdoutTapEndsAMessageCutOff(t *testing.T) {
	next := `{"jsonrpc":"2.0","id":2,"result":{"text":"a \"quoted\" {brace"}}` + "\n"
	for _, cut := range []string{`{"jsonrpc":"2.0","id":`, `{"jsonrpc":"2.0","result":{"s":"unterminated`, `[{"jsonrpc":"2.0"}`} {
		tap := &stdoutTap{r: io.NopCloser(strings.NewReader(cut + "\n" + next))}
		out, err := io.ReadAll(tap)
		if err != nil {
			t.Fatal(err)
		}
		if want := cut + "\n\x00\n" + next; string(out) != want {
			t.Errorf("%s: passed on %q, want %q", cut, out, want)
		}
		if got := string(tap.badLine()); got != cut {
			t.Errorf("%s: badLine %q", cut, got)
		}
	}
	// A whole message, braces in its strings included, passes as it is.
	tap := &stdoutTap{r: io.NopCloser(strings.NewReader(next + next))}
	if out, _ := io.ReadAll(tap); string(out) != next+next {
		t.Errorf("passed on %q", out)
	}
}
