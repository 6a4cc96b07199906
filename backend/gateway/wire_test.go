package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// framing records how the answers to tools/call POSTs were framed.
type framing struct {
	base http.RoundTripper

	mu  sync.Mutex
	got []string // per tools/call answer: "length" or "chunked"
}

func (f *framing) RoundTrip(r *http.Request) (*http.Response, error) {
	var isCall bool
	if r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		isCall = strings.Contains(string(body), `"method":"tools/call"`)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := f.base.RoundTrip(r)
	if err == nil && isCall {
		how := "chunked"
		if resp.ContentLength > 0 && len(resp.TransferEncoding) == 0 {
			how = "length"
		}
		f.mu.Lock()
		f.got = append(f.got, how)
		f.mu.Unlock()
	}
	return resp, err
}

// An answer that is the only event of its POST goes out with a
// Content-Length (one write; the client can reuse its connection at once);
// an answer after a relayed request is still streamed. See PATCHES.md in
// third_party/go-sdk.
func TestAnswerFraming(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	f := &framing{base: http.DefaultTransport}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "42"}}, nil
		},
	})
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.http.URL + "/mcp", HTTPClient: &http.Client{Transport: f}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	ctx := context.Background()
	for _, call := range []*mcp.CallToolParams{
		{Name: "test__echo", Arguments: map[string]any{"message": "one event"}},
		{Name: "test__ask_model", Arguments: map[string]any{"question": "a relayed request first"}},
		{Name: "test__echo", Arguments: map[string]any{"message": "one event again"}},
	} {
		res, err := sess.CallTool(ctx, call)
		if err != nil || res.IsError {
			t.Fatalf("%s: %+v, %v", call.Name, res, err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if diff := cmp.Diff([]string{"length", "chunked", "length"}, f.got); diff != "" {
		t.Errorf("framing of the tools/call answers (-want +got):\n%s", diff)
	}
}

// A successful answer's envelope is written around the result as it was
// marshalled (see PATCHES.md in third_party/go-sdk): what the agent reads
// is still compact JSON with the envelope's fields in encoding/json's order,
// for integer and string ids alike.
func TestAnswerEnvelope(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	var sid string
	post := func(msg string) string { return e.rawPost(t, &sid, msg) }
	for _, tc := range []struct {
		msg, prefix string
	}{
		{`{"jsonrpc":"2.0","id":"init-1","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			`{"jsonrpc":"2.0","id":"init-1","result":{`},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":7,"result":{`},
		{`{"jsonrpc":"2.0","id":"<&>","method":"ping"}`, `{"jsonrpc":"2.0","id":"<&>","result":{}}`},
	} {
		data := post(tc.msg)
		if tc.prefix == `{"jsonrpc":"2.0","id":"init-1","result":{` {
			post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(data)); err != nil || compact.String() != data {
			t.Errorf("answer to %s is not compact JSON (%v): %.200s", tc.msg, err, data)
		}
		if !strings.HasPrefix(data, tc.prefix) {
			t.Errorf("answer to %s = %.200s, want it to start %s", tc.msg, data, tc.prefix)
		}
	}
}

// A large result's JSON is taken as its MarshalJSON wrote it instead of
// being compacted again (see PATCHES.md in third_party/go-sdk). What the
// client reads must be what upstream sent: the result marshalled by an
// encoding/json Encoder without HTML escaping (the SDK's jsonMarshal), for
// text with HTML characters, line separators, escapes and non-ASCII, in
// content and in structured content, for tools, resources and prompts.
func TestResultBytesAsUpstream(t *testing.T) {
	text := "<a href=\"x&y\">\u2028\u2029\t\\ é 😀</a>\n"
	toolResult := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}, &mcp.ImageContent{Data: []byte{0, 1, '<'}, MIMEType: "image/png"}},
		StructuredContent: map[string]any{"text": text, "n": 1.5},
	}
	resourceResult := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///a<b>", MIMEType: "text/plain", Text: text}}}
	resourceBefore20260728, err := json.Marshal(struct {
		Contents []*mcp.ResourceContents `json:"contents"`
	}{resourceResult.Contents})
	if err != nil {
		t.Fatal(err)
	}
	promptResult := &mcp.GetPromptResult{Description: text, Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}

	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return toolResult, nil
	})
	s.AddResource(&mcp.Resource{URI: "file:///a<b>", Name: "a"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return resourceResult, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "p"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return promptResult, nil
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ss, err := s.Connect(ctx, &mcp.IOTransport{Reader: inR, Writer: outW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	lines := bufio.NewReader(outR)
	call := func(msg string) string {
		t.Helper()
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var env struct{ Result json.RawMessage }
		if err := json.Unmarshal([]byte(line), &env); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		return string(env.Result)
	}
	call(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	upstream := func(v any) string {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return strings.TrimRight(buf.String(), "\n")
	}
	for _, tc := range []struct {
		msg  string
		want any
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}`, toolResult},
		// Without ttlMs and cacheScope on this 2025-11-25 session (see
		// TestNewerRevisionFieldsOnlyOnNewerSessions), marshalled by
		// json.Marshal as ReadResourceResult.MarshalJSON is.
		{`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///a<b>"}}`, json.RawMessage(resourceBefore20260728)},
		{`{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"p"}}`, promptResult},
	} {
		if got, want := call(tc.msg), upstream(tc.want); got != want {
			t.Errorf("answer to %s:\n got %s\nwant %s", tc.msg, got, want)
		}
	}
}

// rawPost POSTs one message on the session *sid (none yet: "", set from
// the answer) with plain HTTP and returns the data of the answer's first
// SSE event, or the body when it has none.
func (e *env) rawPost(t *testing.T, sid *string, msg string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.http.URL+"/mcp", strings.NewReader(msg))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if *sid != "" {
		req.Header.Set("Mcp-Session-Id", *sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		*sid = id
	}
	for _, line := range strings.Split(string(body), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			return data
		}
	}
	return string(body)
}

// rawSession opens a 2025-11-25 session with plain HTTP and returns how to
// send it one request and get the result of its answer as sent.
func (e *env) rawSession(t *testing.T) func(method, params string) json.RawMessage {
	t.Helper()
	var sid string
	id := 0
	post := func(msg string) json.RawMessage {
		t.Helper()
		data := e.rawPost(t, &sid, msg)
		if data == "" || !strings.HasPrefix(data, "{") {
			return nil // a notification's 202
		}
		var env struct {
			Result json.RawMessage
			Error  json.RawMessage
		}
		if err := json.Unmarshal([]byte(data), &env); err != nil || env.Error != nil {
			t.Fatalf("answer to %s: %s (%v)", msg, data, err)
		}
		return env.Result
	}
	post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return func(method, params string) json.RawMessage {
		t.Helper()
		id++
		return post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	}
}

// A 2025-11-25 session gets no fields of the 2026-07-28 revision (ttlMs and
// cacheScope of SEP-2549), as a server of its revision answers (found by
// an interop test: every list and read through Airlock had them); a
// 2026-07-28 agent still gets them. See PATCHES.md in third_party/go-sdk.
func TestNewerRevisionFieldsOnlyOnNewerSessions(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	call := e.rawSession(t)
	for _, req := range [][2]string{
		{"tools/list", `{}`},
		{"prompts/list", `{}`},
		{"resources/list", `{}`},
		{"resources/templates/list", `{}`},
		{"resources/read", `{"uri":"test://doc/readme"}`},
	} {
		res := call(req[0], req[1])
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(res, &fields); err != nil || len(fields) == 0 {
			t.Fatalf("%s answered %s (%v)", req[0], res, err)
		}
		for _, newer := range []string{"ttlMs", "cacheScope", "resultType"} {
			if _, ok := fields[newer]; ok {
				t.Errorf("%s on a 2025-11-25 session has %s: %.300s", req[0], newer, res)
			}
		}
	}

	sess := e.connectNew(t, testToken, nil)
	tools, err := sess.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tools.CacheScope != "private" {
		t.Errorf("tools/list cacheScope for a %s agent = %q, want private (each caller sees its own list)", newRevision, tools.CacheScope)
	}
}

// A 2026-07-28 agent gets every result with the resultType its revision
// requires, and a resources/read with a valid cacheScope (found by the MCP
// conformance suite 0.2.0-alpha.12, whose wire-schema check failed through
// Airlock only): the SDK sets resultType only on the results of its own
// handlers, and the results of tools/call, prompts/get and resources/read
// are Airlock's (a server's, relayed, or Airlock's own refusal), which had
// none; and resources/read went out with cacheScope "", which is not one of
// the two values. A 2025-11-25 session gets neither field
// (TestNewerRevisionFieldsOnlyOnNewerSessions).
func TestNewRevisionResultsCarryResultType(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	for _, tc := range []struct {
		method, name, params string
		cacheable            bool
	}{
		{"tools/call", "test__echo", `{"name":"test__echo","arguments":{"message":"hi"},` + newRevisionMeta + `}`, false},
		// Airlock's own answer: a refusal as a tool error.
		{"tools/call", "no_such_tool", `{"name":"no_such_tool","arguments":{},` + newRevisionMeta + `}`, false},
		{"prompts/get", "test__greeting", `{"name":"test__greeting","arguments":{"name":"Ada"},` + newRevisionMeta + `}`, false},
		{"resources/read", "test://doc/readme", `{"uri":"test://doc/readme",` + newRevisionMeta + `}`, true},
	} {
		status, msgs := e.post(t, testToken, newRevisionHeaders(tc.method, tc.name),
			fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, tc.method, tc.params))
		var res map[string]any
		for _, m := range msgs {
			if r, ok := m["result"].(map[string]any); ok {
				res = r
			}
		}
		if status != http.StatusOK || res == nil {
			t.Errorf("%s %s: status %d, answer %v", tc.method, tc.name, status, msgs)
			continue
		}
		if got := res["resultType"]; got != "complete" {
			t.Errorf("%s %s: resultType %v, want complete: %v", tc.method, tc.name, got, res)
		}
		if !tc.cacheable {
			continue
		}
		// Per caller, like the lists: what it may read depends on its rules.
		if got := res["cacheScope"]; got != "private" {
			t.Errorf("%s %s: cacheScope %v, want private", tc.method, tc.name, got)
		}
		if ttl, ok := res["ttlMs"].(float64); !ok || ttl != 0 {
			t.Errorf("%s %s: ttlMs %v, want 0", tc.method, tc.name, res["ttlMs"])
		}
	}
}

// A server's tool result reaches the agent as the server sent it, byte for
// byte: fields Airlock does not know, number and escape spellings, the
// order of keys (the catalog's client keeps it undecoded; see
// VerbatimToolResults in third_party/go-sdk/PATCHES.md). Before, it was
// decoded into the SDK's types and encoded again, which dropped what those
// types lack. An error result is still recorded with its text, and a
// 2026-07-28 agent gets the resultType its revision has.
func TestToolResultAsTheServerSent(t *testing.T) {
	const ok = `{"x-first":true,"content":[{"type":"text","text":"a<b>\u00e9","x-extra":{"k":[1,2.50]}}],"structuredContent":{ "n" : 1.50 }}`
	const failed = `{"content":[{"type":"text","text":"disk on fire"}],"isError":true}`
	script := reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`) +
		"read initialized\n" +
		reply(`{"tools":[{"name":"ok","inputSchema":{"type":"object"}},{"name":"fail","inputSchema":{"type":"object"}}]}`) +
		`while read req; do
id=$(echo "$req" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
case "$req" in
*'"fail"'*) echo '{"jsonrpc":"2.0","id":'$id',"result":` + failed + `}' ;;
*) echo '{"jsonrpc":"2.0","id":'$id',"result":` + ok + `}' ;;
esac
done
`
	e := newEnv(t, catalog.Options{}, core.ServerConfig{ID: "raw", Command: writeScript(t, script)})
	e.waitRunning(t, "raw")
	call := e.rawSession(t)
	if got := string(call("tools/call", `{"name":"raw__ok","arguments":{}}`)); got != ok {
		t.Errorf("result through Airlock:\n got %s\nwant %s (as the server sent it)", got, ok)
	}
	if got := string(call("tools/call", `{"name":"raw__fail","arguments":{}}`)); got != failed {
		t.Errorf("error result through Airlock:\n got %s\nwant %s", got, failed)
	}
	e.audited(t, core.ActivityFilter{Tool: "fail"}, func(recs []core.AuditRecord) bool {
		return len(recs) == 1 && recs[0].Status == core.StatusToolError && recs[0].Error == "disk on fire"
	}, "the failed call recorded as a tool error with its text")

	// A 2026-07-28 agent: the result is the server's, with its revision's
	// resultType (decoded and encoded for it).
	sess := e.connectNew(t, testToken, nil)
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "raw__ok", Arguments: map[string]any{}})
	if err != nil || res.NeedsInput() || len(res.Content) != 1 {
		t.Fatalf("2026-07-28 agent: %+v, %v", res, err)
	}
	if tc, _ := res.Content[0].(*mcp.TextContent); tc == nil || tc.Text != "a<b>é" {
		t.Errorf("2026-07-28 agent got %+v", res.Content[0])
	}
}

// sseEventData splits an SSE body into its events' data as the SSE spec
// reads it: a line ends at CR, LF or CRLF, a blank line ends an event, and
// an event's data lines are joined with LF.
func sseEventData(body string) []string {
	body = strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\r", "\n")
	var events, data []string
	for _, line := range strings.Split(body, "\n") {
		if line == "" {
			if data != nil {
				events = append(events, strings.Join(data, "\n"))
			}
			data = nil
			continue
		}
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			data = append(data, strings.TrimPrefix(d, " "))
		}
	}
	if data != nil {
		events = append(events, strings.Join(data, "\n"))
	}
	return events
}

// A server's tool result handed on as it came (VerbatimToolResults) must
// still make one well-formed answer for the agent: a result that is JSON
// but has a CR or LF between its tokens would split the SSE event the
// answer goes in (a CR ends an SSE line), and a null result is no tool
// result. Upstream decoded and encoded every result, which made it one
// compact object.
func TestVerbatimToolResultStaysOneObject(t *testing.T) {
	script := reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"odd","version":"1"}}`) +
		"read initialized\n" +
		reply(`{"tools":[{"name":"cr","inputSchema":{"type":"object"}},{"name":"null","inputSchema":{"type":"object"}}]}`) +
		`while read req; do
id=$(echo "$req" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
case "$req" in
*'"null"'*) echo '{"jsonrpc":"2.0","id":'$id',"result":null}' ;;
*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"one"}],\r"isError":false}}\n' "$id" ;;
esac
done
`
	e := newEnv(t, catalog.Options{}, core.ServerConfig{ID: "odd", Command: writeScript(t, script)})
	e.waitRunning(t, "odd")
	var sid string
	e.rawPost(t, &sid, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	e.rawPost(t, &sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, tool := range []string{"odd__cr", "odd__null"} {
		req, _ := http.NewRequest(http.MethodPost, e.http.URL+"/mcp", strings.NewReader(
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, i+1, tool)))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answer := string(body)
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			events := sseEventData(answer)
			if len(events) == 0 {
				t.Fatalf("%s: no event in %q", tool, body)
			}
			answer = events[len(events)-1]
		}
		var env struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(answer), &env); err != nil {
			t.Errorf("%s: the agent's answer is not JSON (%v): %q (body %q)", tool, err, answer, body)
			continue
		}
		if r := bytes.TrimSpace(env.Result); len(r) == 0 || r[0] != '{' {
			t.Errorf("%s: the agent's result is %s, want a tool result object", tool, env.Result)
		}
	}
}
