package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The stdio transport's reader finds each message's end itself instead of
// with a json.Decoder (see PATCHES.md in third_party/go-sdk). These tests
// read the same streams through mcp.IOTransport and through upstream's way
// (json.Decoder, the trailing-data check, then the same decoding) and
// compare what comes out: the messages, and whether the stream ends
// cleanly or with an error, and after how many messages.

// oneByte hands out its data one byte per Read.
type oneByte struct{ r io.Reader }

func (o oneByte) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.r.Read(p)
}

// streamOutcome is the messages read (re-encoded) and how the stream ended.
type streamOutcome struct {
	Msgs []string
	End  string // "EOF" or "error"
}

func endOf(err error) string {
	if errors.Is(err, io.EOF) {
		return "EOF"
	}
	return "error"
}

func encodeMsg(t *testing.T, m jsonrpc.Message) string {
	data, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// viaTransport reads r through the SDK's (patched) IOTransport.
func viaTransport(t *testing.T, r io.Reader) streamOutcome {
	conn, err := (&mcp.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{}}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var out streamOutcome
	for {
		m, err := conn.Read(context.Background())
		if err != nil {
			out.End = endOf(err)
			return out
		}
		out.Msgs = append(out.Msgs, encodeMsg(t, m))
	}
}

// upstreamFrames reads r as SDK v1.8.0's stdio reader did.
func upstreamFrames(t *testing.T, r io.Reader) streamOutcome {
	var out streamOutcome
	dec := json.NewDecoder(r)
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == nil {
			var tr [1]byte
			if n, _ := dec.Buffered().Read(tr[:]); n > 0 && tr[0] != '\n' && tr[0] != '\r' {
				err = fmt.Errorf("invalid trailing data at the end of stream")
			}
		}
		if err != nil {
			out.End = endOf(err)
			return out
		}
		msgs, err := upstreamBatch(raw)
		for _, m := range msgs {
			out.Msgs = append(out.Msgs, encodeMsg(t, m))
		}
		if err != nil {
			out.End = "error"
			return out
		}
	}
}

// upstreamBatch is readBatch: an array is a batch of messages.
func upstreamBatch(raw []byte) ([]jsonrpc.Message, error) {
	if trimmed := bytes.TrimLeft(raw, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '[' {
		m, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return nil, err
		}
		return []jsonrpc.Message{m}, nil
	}
	var batch []json.RawMessage
	if err := json.Unmarshal(raw, &batch); err != nil {
		_, err := jsonrpc.DecodeMessage(raw)
		return nil, err
	}
	if len(batch) == 0 {
		return nil, errors.New("empty batch")
	}
	var out []jsonrpc.Message
	for _, b := range batch {
		m, err := jsonrpc.DecodeMessage(b)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

type nopWriteCloser struct{}

func (nopWriteCloser) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriteCloser) Close() error                { return nil }

// compareFraming reads data both ways, all at once and a byte at a time,
// and returns what came out when it was read all at once. (Upstream's
// trailing-data check looks only at bytes that have arrived, so a message
// followed by junk on its line is refused when both arrive together and
// read when they arrive one by one: both ways.)
func compareFraming(t *testing.T, data string) (streamOutcome, bool) {
	t.Helper()
	var whole streamOutcome
	for _, mode := range []string{"whole", "byte by byte"} {
		reader := func() io.Reader {
			if mode == "whole" {
				return strings.NewReader(data)
			}
			return oneByte{strings.NewReader(data)}
		}
		want := upstreamFrames(t, reader())
		got := viaTransport(t, reader())
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s, %q:\n got %v\nwant %v", mode, data, got, want)
			return got, false
		}
		if mode == "whole" {
			whole = got
		}
	}
	return whole, true
}

var frameCases = []struct {
	name, data string
	msgs       int
	end        string
}{
	{"one per line", `{"jsonrpc":"2.0","id":1,"method":"a"}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{"s":"}]\"{["}}` + "\n", 2, "EOF"},
	{"CRLF and blank lines", "\r\n" + `{"jsonrpc":"2.0","id":1,"method":"a"}` + "\r\n\r\n" + `{"jsonrpc":"2.0","method":"n"}` + "\r\n", 2, "EOF"},
	{"spread over lines", "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"method\": \"a\"\n}\n", 1, "EOF"},
	{"escaped backslash before a closing quote", `{"jsonrpc":"2.0","id":1,"result":{"p":"C:\\dir\\"}}` + "\n", 1, "EOF"},
	{"escaped quotes and brackets in strings", `{"jsonrpc":"2.0","id":1,"result":{"t":"\\\"}\"{[\\\\"}}` + "\n", 1, "EOF"},
	{"batch", `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"}]` + "\n", 2, "EOF"},
	{"batch of notifications", `[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]` + "\n", 2, "EOF"},
	{"no newline at the end", `{"jsonrpc":"2.0","id":1,"method":"a"}`, 1, "EOF"},
	{"cut off inside a message", `{"jsonrpc":"2.0","id":1,"method":"a"}` + "\n" + `{"jsonrpc":"2.0","id":2,`, 1, "error"},
	{"trailing data after a message", `{"jsonrpc":"2.0","id":1,"method":"a"} x` + "\n", 0, "error"},
	{"two on one line", `{"jsonrpc":"2.0","id":1,"method":"a"}{"jsonrpc":"2.0","id":2,"method":"b"}` + "\n", 0, "error"},
	{"log line on stdout", "Server started\n" + `{"jsonrpc":"2.0","id":1,"method":"a"}` + "\n", 0, "error"},
	{"a number", "42\n", 0, "error"},
	{"a string", `"{\"jsonrpc\":\"2.0\"}"` + "\n", 0, "error"},
	{"invalid JSON inside", `{"jsonrpc":"2.0","id":1,"method":"a",}` + "\n", 0, "error"},
	{"mismatched brackets", `{"jsonrpc":"2.0","id":1,"method":"a","params":[}]` + "\n", 0, "error"},
	{"empty", "", 0, "EOF"},
	{"only whitespace", " \n\r\n\t", 0, "EOF"},
}

func TestStdioFramingAsUpstream(t *testing.T) {
	for _, tc := range frameCases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := compareFraming(t, tc.data)
			if ok && (len(got.Msgs) != tc.msgs || got.End != tc.end) {
				t.Errorf("%d messages, then %s; the case expects %d, then %s", len(got.Msgs), got.End, tc.msgs, tc.end)
			}
		})
	}
}

// A message larger than the transport's limit is skipped, not read (it
// would take the whole limit again in memory) and not the end of the
// connection, as it was upstream: every other call in flight on the same
// server failed with it (found by an interop test). An answer to a call is
// replaced by an error answer to that call; anything else is dropped, and
// the next message is read. Within the limit a message is read.
func TestStdioFrameLimit(t *testing.T) {
	big := strings.Repeat("x", 1000)
	next := `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"
	for _, tc := range []struct {
		name, data string
		limit      int
		wantID     any // the id of the error answer; nil: none, the next message comes first
		wantErr    string
	}{
		{"within the limit", `{"jsonrpc":"2.0","id":1,"result":{"t":"` + big + `"}}` + "\n" + next, 2000, nil, ""},
		{"no limit", `{"jsonrpc":"2.0","id":1,"result":{"t":"` + big + `"}}` + "\n" + next, -1, nil, ""},
		{"answer, id first", `{"jsonrpc":"2.0","id":1,"result":{"t":"` + big + `"}}` + "\n" + next, 500, int64(1), ""},
		{"answer, string id last, ids and escapes inside", `{"result":{"id":99,"t":"\\\"id\\\":5,` + big + `","a":[{"id":3}]},"jsonrpc":"2.0","id" : "call-7" }` + "\n" + next, 500, "call-7", ""},
		{"error answer", `{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"` + big + `"}}` + "\n" + next, 500, int64(4), ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + big + `"}}` + "\n" + next, 500, nil, ""},
		{"request of the server", `{"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{"t":"` + big + `"}}` + "\n" + next, 500, nil, ""},
		{"object as id", `{"jsonrpc":"2.0","id":{"a":1},"result":{"t":"` + big + `"}}` + "\n" + next, 500, nil, ""},
		{"batch of answers", `[{"jsonrpc":"2.0","id":1,"result":{"t":"` + big + `"}}]` + "\n" + next, 500, nil, "maximum line length"},
		{"cut off", `{"jsonrpc":"2.0","id":1,"result":{"t":"` + big, 500, nil, "unexpected EOF"},
		// As for a message within the limit: what follows it on its line,
		// when it has arrived with it, is not the next message (found in a
		// review). (Byte by byte it has not, and upstream's check does not
		// wait for it either: see TestStdioFramingAsUpstream.)
		{"another message on its line", `{"jsonrpc":"2.0","id":1,"result":{"t":"` + big + `"}}` + next, 500, nil, "invalid trailing data"},
	} {
		for _, mode := range []string{"whole", "byte by byte"} {
			if mode != "whole" && tc.wantErr == "invalid trailing data" {
				continue
			}
			t.Run(tc.name+", "+mode, func(t *testing.T) {
				var r io.Reader = strings.NewReader(tc.data)
				if mode != "whole" {
					r = oneByte{r}
				}
				conn, err := (&mcp.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{}, MaxLineLength: tc.limit}).Connect(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				msg, err := conn.Read(context.Background())
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Fatalf("read %v, %v; want the error %q", msg, err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				resp, _ := msg.(*jsonrpc.Response)
				if tc.wantID != nil {
					var wire *jsonrpc.Error
					if resp == nil || resp.ID.Raw() != tc.wantID || !errors.As(resp.Error, &wire) || wire.Code != mcp.CodeMessageTooLarge ||
						!strings.Contains(wire.Message, fmt.Sprintf("more than the %d this connection reads", tc.limit)) {
						t.Fatalf("read %#v, want an error answer (code %d) to %v", msg, mcp.CodeMessageTooLarge, tc.wantID)
					}
					if msg, err = conn.Read(context.Background()); err != nil {
						t.Fatalf("the next message: %v", err)
					}
					resp, _ = msg.(*jsonrpc.Response)
				} else if tc.limit > 0 && tc.limit < 1000 {
					if resp == nil || resp.ID.Raw() != int64(2) {
						t.Fatalf("read %#v, want the next message (id 2): the large one dropped", msg)
					}
					return
				}
				if resp == nil || resp.Error != nil {
					t.Fatalf("read %#v, want an answer", msg)
				}
			})
		}
	}
}

func FuzzStdioFraming(f *testing.F) {
	for _, tc := range frameCases {
		f.Add(tc.data)
	}
	f.Fuzz(func(t *testing.T, data string) {
		compareFraming(t, data)
	})
}

// On a stream that stays open, a server that writes something other than a
// well-formed message gets its error as soon as upstream's decoder gave it
// (at the latest at the end of that line), never by waiting for a bracket
// that may not come: the reader must not hold the stream.
func TestStdioBrokenMessageOnOpenStream(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"log line", "[INFO server started\n", "invalid character 'I'"},
		{"message broken off, then the next", `{"jsonrpc":"2.0","id":1,"result":{"content":[]}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n", "invalid character '{'"},
		{"raw newline in a string", `{"jsonrpc":"2.0","id":1,"result":{"t":"a` + "\n" + `b"}}` + "\n", "invalid character '\\n' in string literal"},
		{"unterminated string, then the next", `{"jsonrpc":"2.0","id":1,"result":{"t":"a}}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n", "invalid character '\\n' in string literal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pw.Close()
			conn, err := (&mcp.IOTransport{Reader: pr, Writer: nopWriteCloser{}}).Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			go io.WriteString(pw, tc.data) // and nothing more: the stream stays open
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := conn.Read(ctx); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("read: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// The frame limit counts a message's bytes: one of exactly the limit is
// read, one byte more is not, arriving at once or a byte at a time, on the
// fast path (it becomes an error answer to its call) and the decoder's (a
// message over lines: the connection's error, as upstream); no limit
// (negative) and the largest limit read it.
func TestStdioFrameLimitExact(t *testing.T) {
	const limit = 100
	line := func(n int, pretty bool) string {
		head, tail := `{"jsonrpc":"2.0","id":1,"result":{"t":"`, `"}}`
		if pretty {
			head = "{\n" + head[1:]
		}
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail + "\n"
	}
	for _, pretty := range []bool{false, true} {
		for _, tc := range []struct {
			size, limit int
			ok          bool
		}{{limit, limit, true}, {limit + 1, limit, false}, {limit + 1, -1, true}, {limit + 1, math.MaxInt, true}} {
			for _, bytewise := range []bool{false, true} {
				var r io.Reader = strings.NewReader(line(tc.size, pretty))
				if bytewise {
					r = oneByte{r}
				}
				conn, err := (&mcp.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{}, MaxLineLength: tc.limit}).Connect(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				msg, err := conn.Read(ctx)
				cancel()
				conn.Close()
				if resp, ok := msg.(*jsonrpc.Response); ok && !tc.ok && !pretty {
					var wire *jsonrpc.Error
					if !errors.As(resp.Error, &wire) || wire.Code != mcp.CodeMessageTooLarge || resp.ID.Raw() != int64(1) {
						t.Errorf("%d-byte message, limit %d, a byte at a time: %v: read %#v, want an error answer to call 1", tc.size, tc.limit, bytewise, msg)
					}
					continue
				}
				if (err == nil) != tc.ok || (!tc.ok && !strings.Contains(err.Error(), "maximum line length")) {
					t.Errorf("%d-byte message (over lines: %v, a byte at a time: %v), limit %d: %v, want success %v",
						tc.size, pretty, bytewise, tc.limit, err, tc.ok)
				}
			}
		}
	}
}

// A message over the limit whose line ends before the message does (cut
// off, a raw newline in a string; stdoutTap marks a cut-off line so) is
// broken: the connection ends on it, as upstream ended it on every message
// over the limit. Skipping on past the line's end would read the next
// messages as part of the broken one, and their calls would never be
// answered while the stream stays open.
func TestStdioTooLargeBrokenLine(t *testing.T) {
	big := strings.Repeat("x", 1000)
	next := `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"
	for _, tc := range []struct{ name, data string }{
		{"unterminated string, then the next", `{"jsonrpc":"2.0","id":1,"result":{"t":"` + big + `}}` + "\n" + next},
		{"message broken off, then the next", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"t":"` + big + `"}]}` + "\n" + next},
		{"cut off as stdoutTap marks it, then the next", `{"jsonrpc":"2.0","id":1,"result":{"t":"` + big + "\x00\n" + next},
		{"raw newline in a string", `{"jsonrpc":"2.0","id":1,"result":{"t":"` + big + "\n" + `"}}` + "\n" + next},
	} {
		for _, mode := range []string{"whole", "byte by byte"} {
			t.Run(tc.name+", "+mode, func(t *testing.T) {
				pr, pw := io.Pipe()
				defer pw.Close()
				conn, err := (&mcp.IOTransport{Reader: pr, Writer: nopWriteCloser{}, MaxLineLength: 500}).Connect(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				go func() {
					if mode == "whole" {
						io.WriteString(pw, tc.data)
						return
					}
					for i := range len(tc.data) {
						if _, err := io.WriteString(pw, tc.data[i:i+1]); err != nil {
							return
						}
					}
				}() // and nothing more: the stream stays open
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				for {
					msg, err := conn.Read(ctx)
					if err != nil {
						if ctx.Err() != nil {
							t.Fatalf("no error and no next message: the broken message holds the stream")
						}
						if !strings.Contains(err.Error(), "maximum line length") {
							t.Errorf("read: %v, want the frame limit's error", err)
						}
						return
					}
					if resp, _ := msg.(*jsonrpc.Response); resp != nil && resp.ID.Raw() == int64(2) {
						t.Fatalf("the next message was read after a broken one (upstream ended the connection)")
					}
				}
			})
		}
	}
}

// FuzzStdioTooLargeID checks the id that a message over the limit is
// answered for against a full decoding of the message: a server's answer
// is replaced by an error answer to the same call, anything else is
// dropped; either may instead end the connection (as upstream did), but
// never answer another call or swallow the next message.
func FuzzStdioTooLargeID(f *testing.F) {
	for _, tc := range frameCases {
		f.Add(strings.TrimRight(tc.data, "\n"))
	}
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"t":"xxxxxxxxxx"}}`,
		`{"result":{"id":99,"t":"\\\"id\\\":5,xx","a":[{"id":3}]},"jsonrpc":"2.0","id" : "call-7" }`,
		`{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"xxxxxxxxxxx"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"xxxxxx"}}`,
		`{"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{"t":"xxxxx"}}`,
		`{"jsonrpc":"2.0","id":{"a":1},"result":{"t":"xxxxxxxxx"}}`,
		`{"jsonrpc":"2.0","\u0069d":5,"result":{"t":"xxxxxxxxxxx"}}`,
		`{"jsonrpc":"2.0","id":"a\"b\\","result":{}}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"result":{}}`,
		`{"jsonrpc":"2.0","id":1.0,"result":{}}`,
		`{"jsonrpc":"2.0","id":-7,"result":{"x":[1,{"id":8}]}}`,
	} {
		f.Add(s)
	}
	const next = `{"jsonrpc":"2.0","id":"next","result":{}}`
	f.Fuzz(func(t *testing.T, data string) {
		if len(data) < 2 || strings.ContainsAny(data, "\r\n") {
			return
		}
		want, err := jsonrpc.DecodeMessage([]byte(data))
		if err != nil {
			return // upstream ended the connection on it
		}
		conn, err := (&mcp.IOTransport{Reader: io.NopCloser(strings.NewReader(data + "\n" + next + "\n")), Writer: nopWriteCloser{}, MaxLineLength: len(data) - 1}).Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		msg, err := conn.Read(context.Background())
		if err != nil {
			return // the connection ends on it
		}
		resp, _ := msg.(*jsonrpc.Response)
		if wantResp, ok := want.(*jsonrpc.Response); ok {
			var wire *jsonrpc.Error
			if resp == nil || !errors.As(resp.Error, &wire) || wire.Code != mcp.CodeMessageTooLarge || resp.ID != wantResp.ID {
				t.Fatalf("%s over the limit: read %#v, want an error answer to %v", data, msg, wantResp.ID.Raw())
			}
			if msg, err = conn.Read(context.Background()); err != nil {
				return
			}
			resp, _ = msg.(*jsonrpc.Response)
		}
		if resp == nil || resp.ID.Raw() != "next" {
			t.Fatalf("%s over the limit: then read %#v, want the next message", data, msg)
		}
	})
}
