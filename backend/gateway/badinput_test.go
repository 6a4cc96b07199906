package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/gateway"
	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// post sends one raw JSON-RPC message to /mcp with token (none when empty)
// and headers, and returns the status and the JSON-RPC messages of the
// answer (a JSON body or the data of an event stream).
func (e *env) post(t *testing.T, token string, headers map[string]string, body string) (int, []map[string]any) {
	t.Helper()
	resp, raw := e.postHTTP(t, token, headers, body)
	var msgs []map[string]any
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		var m map[string]any
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &m) == nil {
			msgs = append(msgs, m)
		}
	}
	return resp.StatusCode, msgs
}

// postHTTP is post's request: it returns the response (its body closed)
// and the body.
func (e *env) postHTTP(t *testing.T, token string, headers map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.http.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, raw
}

// newRevisionHeaders are the headers of a 2026-07-28 request for method
// on name.
func newRevisionHeaders(method, name string) map[string]string {
	h := map[string]string{"Mcp-Protocol-Version": newRevision, "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

// newRevisionMeta is the _meta a 2026-07-28 request carries.
const newRevisionMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{}}}`

// rpcError is the error of the JSON-RPC answer in msgs: its code and the
// reason code in its data.
func rpcError(msgs []map[string]any) (code float64, reason string) {
	for _, m := range msgs {
		if e, ok := m["error"].(map[string]any); ok {
			code, _ = e["code"].(float64)
			if d, ok := e["data"].(map[string]any); ok {
				reason, _ = d["code"].(string)
			}
			return code, reason
		}
	}
	return 0, ""
}

// relayRecorder is an agent's client that records the sampling and
// elicitation requests that reach it.
type relayRecorder struct {
	mu  sync.Mutex
	got []string
}

func (r *relayRecorder) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			r.mu.Lock()
			r.got = append(r.got, "sampling")
			r.mu.Unlock()
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "ok"}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			r.mu.Lock()
			r.got = append(r.got, "elicitation")
			r.mu.Unlock()
			return &mcp.ElicitResult{Action: "cancel"}, nil
		},
	}
}

func (r *relayRecorder) reached() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// A downstream server that sends garbage sampling or elicitation requests
// during an agent's call gets a clear error back, with a reason code when
// Airlock's relay saw the request (and an audit record); nothing reaches
// the agent's client, for agents of either revision, and the server, the
// call and everyone else carry on.
func TestGarbageRelayRequests(t *testing.T) {
	garbage := []struct {
		tool, method, params string
		// wantCode is the JSON-RPC code the server gets; wantReason the
		// reason code in its data ("" when the SDK refused it before
		// Airlock saw it, as with params that do not decode).
		wantCode   float64
		wantReason string
	}{
		{"undecodable", "sampling/createMessage", `{"messages":"not a list","maxTokens":10}`, -32602, ""},
		{"no_messages", "sampling/createMessage", `{"messages":[],"maxTokens":10}`, pipeline.CodeRefused, catalog.ERelayMalformed},
		{"no_tokens", "sampling/createMessage", `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`, pipeline.CodeRefused, catalog.ERelayMalformed},
		{"bad_role", "sampling/createMessage", `{"messages":[{"role":"system","content":{"type":"text","text":"hi"}}],"maxTokens":5}`, pipeline.CodeRefused, catalog.ERelayMalformed},
		{"no_message", "elicitation/create", `{"message":"","requestedSchema":{"type":"object","properties":{}}}`, pipeline.CodeRefused, catalog.ERelayMalformed},
		{"url_without_id", "elicitation/create", `{"mode":"url","message":"open this","url":"https://example.com/x"}`, pipeline.CodeRefused, catalog.ERelayMalformed},
		// The SDK's client checks these itself, before Airlock sees them.
		{"bad_mode", "elicitation/create", `{"mode":"telepathy","message":"hi"}`, -32602, ""},
		{"url_without_url", "elicitation/create", `{"mode":"url","message":"open this","elicitationId":"e1"}`, -32602, ""},
		{"schema_not_object", "elicitation/create", `{"message":"hi","requestedSchema":{"type":"string"}}`, -32602, ""},
	}
	// The server answers a call of tool X by sending X.json (a request to
	// Airlock's client) and returning Airlock's answer as its structured
	// content.
	dir := t.TempDir()
	var tools []string
	for _, g := range garbage {
		req := `{"jsonrpc":"2.0","id":"relay-` + g.tool + `","method":"` + g.method + `","params":` + g.params + "}\n"
		if err := os.WriteFile(filepath.Join(dir, g.tool+".json"), []byte(req), 0o644); err != nil {
			t.Fatal(err)
		}
		tools = append(tools, `{"name":"`+g.tool+`","inputSchema":{"type":"object"}}`)
	}
	script := reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"garbage","version":"1"}}`) +
		"read -r initialized\n" + reply(`{"tools":[`+strings.Join(tools, ",")+`]}`) + `
while read -r line; do
  case "$line" in *'"method":"tools/call"'*)
    id=$(echo "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
    name=$(echo "$line" | sed -n 's/.*"name":"\([a-z_]*\)".*/\1/p')
    cat "` + dir + `/$name.json"
    read -r answer
    printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"relayed"}],"structuredContent":%s}}\n' "$id" "$answer"
  esac
done
`
	e := newEnv(t, catalog.Options{}, core.ServerConfig{ID: "garbage", Command: writeScript(t, script)})
	bystander := e.connect(t, nil)
	agents := map[string]func(*testing.T, *relayRecorder) *mcp.ClientSession{
		"2025-11-25": func(t *testing.T, r *relayRecorder) *mcp.ClientSession { return e.connect(t, r.options()) },
		newRevision: func(t *testing.T, r *relayRecorder) *mcp.ClientSession {
			return e.connectNew(t, testToken, r.options())
		},
	}
	for revision, connect := range agents {
		for _, g := range garbage {
			t.Run(revision+"/"+g.tool, func(t *testing.T) {
				client := &relayRecorder{}
				sess := connect(t, client)
				res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "garbage__" + g.tool})
				if err != nil || res.IsError {
					t.Fatalf("the call = %v %+v, want the server's own result", err, res)
				}
				answer, _ := json.Marshal(res.StructuredContent)
				var msg map[string]any
				json.Unmarshal(answer, &msg)
				code, reason := rpcError([]map[string]any{msg})
				if code != g.wantCode || reason != g.wantReason {
					t.Errorf("the server got %s, want JSON-RPC error %v with reason %q", answer, g.wantCode, g.wantReason)
				}
				if got := client.reached(); len(got) > 0 {
					t.Errorf("garbage reached the agent's client: %v", got)
				}
				res, err = bystander.CallTool(context.Background(), &mcp.CallToolParams{Name: "test__echo", Arguments: map[string]any{"message": "fine"}})
				if err != nil || text(t, res) != "Echo: fine" {
					t.Errorf("another session after the garbage: %v %+v", err, res)
				}
			})
		}
	}
	for _, kind := range []string{core.KindSampling, core.KindElicitation} {
		recs, _ := e.audit.List(core.ActivityFilter{Kind: kind})
		for _, r := range recs {
			if r.ErrorCode != catalog.ERelayMalformed || r.Decision != core.DecisionError || r.Server != "garbage" {
				t.Errorf("audit of a malformed %s = %+v, want refused with %s", kind, r, catalog.ERelayMalformed)
			}
		}
		// Both revisions' agents, for each malformed request the relay saw.
		if want := map[string]int{core.KindSampling: 2 * 3, core.KindElicitation: 2 * 2}[kind]; len(recs) != want {
			t.Errorf("%d %s records, want %d", len(recs), kind, want)
		}
	}
	if st, _ := e.cat.ServerStatus("garbage"); st.State != core.StateRunning || st.Restarts != 0 {
		t.Errorf("the garbage server = %s after %d restarts, want running all along", st.State, st.Restarts)
	}
}

// An agent's client that answers a relayed request with garbage (another
// kind of result, an unknown elicitation action, answers that do not
// decode) gives the server a clear error with a reason code, never the
// garbage; the call ends with the server's own error, and others carry on.
func TestGarbageRelayAnswers(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	bystander := e.connect(t, nil)
	ctx := context.Background()
	check := func(t *testing.T, res *mcp.CallToolResult, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("the call: %v", err)
		}
		if !res.IsError || !strings.Contains(text(t, res), "["+catalog.ERelayBadAnswer+"]") {
			t.Errorf("the call = %v %q, want the server's error carrying %s", err, text(t, res), catalog.ERelayBadAnswer)
		}
		res, err = bystander.CallTool(ctx, &mcp.CallToolParams{Name: "test__echo", Arguments: map[string]any{"message": "fine"}})
		if err != nil || text(t, res) != "Echo: fine" {
			t.Errorf("another session after the garbage: %v %+v", err, res)
		}
	}

	t.Run("2025-11-25", func(t *testing.T) {
		c := mcp.NewClient(&mcp.Implementation{Name: "liar", Version: "1"}, &mcp.ClientOptions{
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "never sent"}}, nil
			},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "maybe"}, nil
			},
		})
		// An elicitation result where a sampling result belongs.
		c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "sampling/createMessage" {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "x"}}, nil
				}
				return next(ctx, method, req)
			}
		})
		sess, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.http.URL + "/mcp",
			HTTPClient: &http.Client{Transport: bearer{testToken, http.DefaultTransport}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		for _, tool := range []string{"test__ask_model", "test__ask_user"} {
			res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"question": "?"}})
			check(t, res, err)
		}
	})

	t.Run(newRevision, func(t *testing.T) {
		sess := e.connectNew(t, testToken, &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
			ElicitationHandler:   func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil },
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) { return nil, nil },
		})
		call := func(tool, state string, answers mcp.InputResponseMap) (*mcp.CallToolResult, error) {
			return sess.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"question": "?"},
				InputResponses: answers, RequestState: state})
		}
		for _, c := range []struct {
			tool   string
			answer mcp.InputResponse
		}{
			{"test__ask_model", &mcp.ElicitResult{Action: "accept"}},
			{"test__ask_model", &mcp.CreateMessageWithToolsResult{Model: "m", Role: "assistant",
				Content: []mcp.Content{&mcp.TextContent{Text: "one"}, &mcp.TextContent{Text: "two"}}}},
			{"test__ask_user", &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "?"}}},
			{"test__ask_user", &mcp.ElicitResult{Action: "maybe"}},
		} {
			first, err := call(c.tool, "", nil)
			if err != nil || !first.NeedsInput() {
				t.Fatalf("%s = %v %+v, want input_required", c.tool, err, first)
			}
			for id := range first.InputRequests {
				res, err := call(c.tool, first.RequestState, mcp.InputResponseMap{id: c.answer})
				check(t, res, err)
			}
		}

		// Answers that do not decode are refused by the SDK before Airlock
		// sees them; the call still waits for its owner's real answer.
		first, err := call("test__ask_user", "", nil)
		if err != nil || !first.NeedsInput() {
			t.Fatalf("ask_user = %v %+v, want input_required", err, first)
		}
		var id string
		for id = range first.InputRequests {
		}
		status, msgs := e.post(t, testToken, newRevisionHeaders("tools/call", "test__ask_user"),
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test__ask_user","arguments":{"question":"?"},"inputResponses":{"`+id+`":{"bogus":true}},"requestState":"`+first.RequestState+`",`+newRevisionMeta+`}}`)
		if code, _ := rpcError(msgs); status != http.StatusBadRequest || code == 0 {
			t.Errorf("undecodable answers: status %d, %v; want 400 with the SDK's JSON-RPC error", status, msgs)
		}
		res, err := call("test__ask_user", first.RequestState, mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}})
		if err != nil || text(t, res) != "the user answered accept: Ada" {
			t.Errorf("the real answer after garbage = %v %+v", err, res)
		}
	})

	for _, kind := range []string{core.KindSampling, core.KindElicitation} {
		recs, _ := e.audit.List(core.ActivityFilter{Kind: kind})
		bad := 0
		for _, r := range recs {
			if r.ErrorCode == catalog.ERelayBadAnswer {
				bad++
			}
		}
		if want := 3; bad != want {
			t.Errorf("%d %s records with %s, want %d: %+v", bad, kind, catalog.ERelayBadAnswer, want, recs)
		}
	}
}

// notes is a downstream server with one subscribable resource, mem://note.
type notes struct {
	*mcp.Server
	mu     sync.Mutex
	events []string
}

func newNotes() *notes {
	n := &notes{}
	n.Server = mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
			n.record("subscribe " + req.Params.URI)
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error {
			n.record("unsubscribe " + req.Params.URI)
			return nil
		},
	})
	n.AddResource(&mcp.Resource{Name: "note", URI: "mem://note"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "note"}}}, nil
	})
	return n
}

func (n *notes) record(ev string) {
	n.mu.Lock()
	n.events = append(n.events, ev)
	n.mu.Unlock()
}

func (n *notes) seen() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.events)
}

// A subscription to a resource no server offers (it was removed) is
// refused with unknown_resource, for agents of either revision. Sessions
// subscribed before the resource went away can still unsubscribe, are not
// disturbed, and hear of it again when it comes back.
func TestSubscriptionToRemovedResource(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	ctx := context.Background()
	first := newNotes()
	e.cat.AddInProcess("notes", first.Server, false)
	e.waitRunning(t, "notes")
	updated := make(chan string, 10)
	acked := make(chan string, 10)
	keeper := e.connect(t, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		updated <- "keeper " + req.Params.URI
	}})
	leaver := e.connect(t, nil)
	listener := e.connectNew(t, testToken, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		updated <- "listener " + req.Params.URI
	}}, ackTo(acked))
	for _, s := range []*mcp.ClientSession{keeper, leaver} {
		if err := s.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://note"}); err != nil {
			t.Fatal(err)
		}
	}
	listener.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://note"})
	receive(t, acked, "acknowledgement of the subscription")

	e.cat.RemoveInProcess("notes")
	testutil.Eventually(t, 10*time.Second, func() bool {
		_, ok := e.cat.Snapshot().ResourceServer("mem://note")
		return !ok
	}, "the resource is still offered")

	// 2025-11-25: resources/subscribe is refused with the reason.
	late := e.connect(t, nil)
	err := late.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://note"})
	if err == nil || !strings.Contains(err.Error(), "["+catalog.EUnknownResource+"]") {
		t.Errorf("subscribing to a removed resource: %v, want a refusal with %s", err, catalog.EUnknownResource)
	}
	// 2026-07-28: the subscriptions/listen stream is refused with it. (The
	// SDK's client does not wait for the answer of that request, so this
	// is read off the wire.)
	_, msgs := e.post(t, testToken, newRevisionHeaders("subscriptions/listen", ""),
		`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["mem://note"]},`+newRevisionMeta+`}}`)
	if code, reason := rpcError(msgs); code != pipeline.CodeResourceNotFound || reason != catalog.EUnknownResource {
		t.Errorf("subscriptions/listen for a removed resource = %v, want JSON-RPC error %d with reason %s", msgs, pipeline.CodeResourceNotFound, catalog.EUnknownResource)
	}
	// Both refusals are in Activity, with the reason.
	e.audited(t, core.ActivityFilter{Kind: gateway.KindSubscribe}, func(r []core.AuditRecord) bool {
		return len(r) == 2 && r[0].Tool == "mem://note" && r[0].Decision == core.DecisionDenied && r[0].ErrorCode == catalog.EUnknownResource &&
			r[1].ErrorCode == catalog.EUnknownResource
	}, "the refused subscriptions recorded")
	// A session subscribed before can unsubscribe.
	if err := leaver.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "mem://note"}); err != nil {
		t.Errorf("unsubscribing from a removed resource: %v", err)
	}
	res, err := late.CallTool(ctx, &mcp.CallToolParams{Name: "test__echo", Arguments: map[string]any{"message": "fine"}})
	if err != nil || text(t, res) != "Echo: fine" {
		t.Errorf("another call after the refusals: %v %+v", err, res)
	}

	// The resource comes back: the sessions still subscribed hear of it.
	second := newNotes()
	e.cat.AddInProcess("notes", second.Server, false)
	e.waitRunning(t, "notes")
	testutil.Eventually(t, 10*time.Second, func() bool { return slices.Contains(second.seen(), "subscribe mem://note") },
		"the returning server was not subscribed again: %v", second.seen())
	second.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "mem://note"})
	got := map[string]bool{receive(t, updated, "resources/updated"): true, receive(t, updated, "resources/updated"): true}
	if want := map[string]bool{"keeper mem://note": true, "listener mem://note": true}; !cmp.Equal(want, got) {
		t.Errorf("resources/updated reached %v, want %v", got, want)
	}
	keeper.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "mem://note"})
	listener.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "mem://note"})
	testutil.Eventually(t, 10*time.Second, func() bool { return slices.Contains(second.seen(), "unsubscribe mem://note") },
		"the server is still subscribed after everyone left: %v", second.seen())
}

// noPrefixServer is a stdio server (a downstream as servers.json or
// 'airlock servers add --no-prefix' configures it) whose tool is named
// tool and answers with the server's id.
func noPrefixServer(t *testing.T, id, tool string) core.ServerConfig {
	script := reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"`+id+`","version":"1"}}`) +
		"read -r initialized\n" + reply(`{"tools":[{"name":"`+tool+`","inputSchema":{"type":"object"}}]}`) + `
while read -r line; do
  case "$line" in *'"method":"tools/call"'*)
    id=$(echo "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
    echo '{"jsonrpc":"2.0","id":'$id',"result":{"content":[{"type":"text","text":"` + id + `"}]}}'
  esac
done
`
	return core.ServerConfig{ID: id, Command: writeScript(t, script), NoPrefix: true}
}

// A --no-prefix server whose tool name another server already uses does
// not get that name: the first server (Airlock's own and built-in ones
// first, then by id) keeps it, the other's tool is refused exposure with
// a warning naming the owner on its status (the Servers screen and
// 'airlock servers list' show it), and its would-be prefixed name is an
// unknown tool. Nothing else changes; when the owner goes, the name is
// free.
func TestNoPrefixCollision(t *testing.T) {
	alpha, beta := noPrefixServer(t, "alpha", "echo"), noPrefixServer(t, "beta", "echo")
	gamma := noPrefixServer(t, "gamma", "test__echo") // the exposed name of the test server's echo
	e := newEnv(t, catalog.Options{}, alpha, beta, gamma)
	sess := e.connect(t, nil)
	ctx := context.Background()
	names := toolNames(t, sess)
	if count(names, "echo") != 1 || count(names, "test__echo") != 1 || slices.Contains(names, "beta__echo") {
		t.Errorf("tools/list = %v, want echo and test__echo once each", names)
	}
	for _, c := range []struct{ tool, want string }{
		{"echo", "alpha"},
		{"test__echo", "Echo: x"},
		{"beta__echo", "Airlock: no server offers a tool named \"beta__echo\" [unknown_tool]\nHint: call tools/list (or help) for the tools you can use; names are <server>__<tool>"},
	} {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{"message": "x"}})
		if err != nil || text(t, res) != c.want {
			t.Errorf("%s = %v %q, want %q", c.tool, err, text(t, res), c.want)
		}
	}
	for id, want := range map[string][]string{
		"alpha": nil,
		"beta":  {`tool "echo" is hidden: server alpha already exposes that name`},
		"gamma": {`tool "test__echo" is hidden: names that start with test__ are server test's`},
	} {
		st, _ := e.cat.ServerStatus(id)
		if diff := cmp.Diff(want, st.Warnings); diff != "" || st.State != core.StateRunning {
			t.Errorf("%s: state %s, warnings (-want +got):\n%s", id, st.State, diff)
		}
	}
	e.cat.Apply([]core.ServerConfig{beta, gamma})
	testutil.Eventually(t, 10*time.Second, func() bool {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
		return err == nil && text(t, res) == "beta"
	}, "echo never went to beta after alpha was removed")
	if st, _ := e.cat.ServerStatus("beta"); len(st.Warnings) != 0 {
		t.Errorf("beta still warns: %v", st.Warnings)
	}
	// A server added later does not take the name, even with an id that
	// sorts first (found by a new-user test: "a0" took echo from beta).
	early := noPrefixServer(t, "a0", "echo")
	e.cat.Apply([]core.ServerConfig{beta, gamma, early})
	testutil.Eventually(t, 10*time.Second, func() bool {
		st, _ := e.cat.ServerStatus("a0")
		return st.State == core.StateRunning && len(st.Warnings) == 1
	}, "a0 never said its echo is hidden")
	if st, _ := e.cat.ServerStatus("a0"); st.Warnings[0] != `tool "echo" is hidden: server beta already exposes that name` {
		t.Errorf("a0 warns %v", st.Warnings)
	}
	if res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "echo"}); err != nil || text(t, res) != "beta" {
		t.Errorf("echo after a0 was added went to %q (%v), want beta", text(t, res), err)
	}
}

// A --no-prefix server cannot pass for another server: a name of the form
// zeta__… stays server zeta's whatever was added first, and which of two
// --no-prefix servers has a name they share does not change when Airlock
// restarts (found by a new-user test: after a restart a --no-prefix server
// took everything__echo from server everything, and a shared name went to
// the server added later, whose id sorted first).
func TestNoPrefixCannotPassForAnotherServer(t *testing.T) {
	impostor := noPrefixServer(t, "aaa", "zeta__echo")
	zeta := noPrefixServer(t, "zeta", "echo")
	zeta.NoPrefix = false
	beta, early := noPrefixServer(t, "beta", "echo"), noPrefixServer(t, "a0", "echo")
	kept := map[string]uint64{}
	var mu sync.Mutex
	// The order servers were added in, kept as Airlock keeps it.
	order := func(ids []string) map[string]uint64 {
		mu.Lock()
		defer mu.Unlock()
		var last uint64
		for _, n := range kept {
			last = max(last, n)
		}
		out := map[string]uint64{}
		for _, id := range ids {
			if n, ok := kept[id]; ok {
				out[id] = n
			} else {
				last++
				out[id] = last
			}
		}
		kept = out
		return maps.Clone(out)
	}
	e := newEnv(t, catalog.Options{Order: order}, impostor, beta)
	e.cat.Apply([]core.ServerConfig{impostor, beta, zeta, early})
	e.waitRunning(t, "zeta")
	e.waitRunning(t, "a0")
	check := func(e *env, when string) {
		t.Helper()
		sess := e.connect(t, nil)
		for tool, want := range map[string]string{"zeta__echo": "zeta", "echo": "beta"} {
			res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: tool})
			if err != nil || text(t, res) != want {
				t.Errorf("%s: %s went to %q (%v), want %s", when, tool, text(t, res), err, want)
			}
		}
		if st, _ := e.cat.ServerStatus("aaa"); !slices.Equal(st.Warnings, []string{`tool "zeta__echo" is hidden: names that start with zeta__ are server zeta's`}) {
			t.Errorf("%s: aaa warns %v", when, st.Warnings)
		}
		if st, _ := e.cat.ServerStatus("a0"); !slices.Equal(st.Warnings, []string{`tool "echo" is hidden: server beta already exposes that name`}) {
			t.Errorf("%s: a0 warns %v", when, st.Warnings)
		}
	}
	check(e, "added while running")
	// Airlock restarts: every server starts at once.
	e2 := newEnv(t, catalog.Options{Order: order}, impostor, beta, zeta, early)
	check(e2, "after a restart")

	// zeta disabled: its names are still its own, and Airlock's built-in
	// servers' are theirs while they are off (found by a regression test:
	// the impostor answered for both).
	offZeta := zeta
	offZeta.Disabled = true
	builtinImpostor := noPrefixServer(t, "bbb", "file-read__file_read")
	e3 := newEnv(t, catalog.Options{Order: order, Reserved: []string{"file-read"}}, impostor, beta, early, builtinImpostor)
	e3.cat.Apply([]core.ServerConfig{impostor, beta, offZeta, early, builtinImpostor})
	testutil.Eventually(t, 10*time.Second, func() bool {
		st, _ := e3.cat.ServerStatus("aaa")
		return len(st.Warnings) == 1
	}, "aaa never said zeta__echo is zeta's while zeta is disabled")
	sess := e3.connect(t, nil)
	for _, tool := range []string{"zeta__echo", "file-read__file_read"} {
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: tool})
		if err != nil || !res.IsError || !strings.Contains(text(t, res), "[unknown_tool]") {
			t.Errorf("%s with its server off = %v %q, want unknown_tool", tool, err, text(t, res))
		}
	}
	if st, _ := e3.cat.ServerStatus("bbb"); !slices.Equal(st.Warnings, []string{`tool "file-read__file_read" is hidden: names that start with file-read__ are server file-read's`}) {
		t.Errorf("bbb warns %v", st.Warnings)
	}
}

// A request in a protocol revision Airlock does not speak is refused with
// HTTP 400 and the JSON-RPC error SEP-2575 defines for it, its data listing
// the revisions Airlock speaks and the reason code; a known credential's
// attempt is audited. A client can retry with one of them (the Go SDK's
// does), and other sessions are unaffected. An initialize asking for an
// unknown revision is answered with Airlock's own, as MCP requires.
func TestUnknownProtocolVersion(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	bystander := e.connect(t, nil)
	ctx := context.Background()
	for _, v := range []string{"2099-01-01", "bogus", "2024-01-01"} {
		status, msgs := e.post(t, testToken, map[string]string{"Mcp-Protocol-Version": v},
			`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`)
		code, reason := rpcError(msgs)
		if status != http.StatusBadRequest || code != mcp.CodeUnsupportedProtocolVersion || reason != gateway.EProtocolVersion {
			t.Errorf("version %q: status %d, %v; want 400 with JSON-RPC error %d and reason %s", v, status, msgs, mcp.CodeUnsupportedProtocolVersion, gateway.EProtocolVersion)
			continue
		}
		data := msgs[0]["error"].(map[string]any)["data"].(map[string]any)
		if data["requested"] != v || !slices.Contains(data["supported"].([]any), any(newRevision)) || msgs[0]["id"] != float64(3) {
			t.Errorf("version %q: answer %v, want it to name the version asked for and list %s, for request 3", v, msgs[0], newRevision)
		}
	}
	recs := e.audited(t, core.ActivityFilter{Kind: "session"}, func(r []core.AuditRecord) bool { return len(r) == 3 }, "the refused versions")
	if recs[0].ErrorCode != gateway.EProtocolVersion || recs[0].Decision != core.DecisionDenied {
		t.Errorf("audit of a refused version = %+v", recs[0])
	}

	// The SDK's client asking for a revision from the future settles on
	// one Airlock speaks.
	c := mcp.NewClient(&mcp.Implementation{Name: "future", Version: "1"}, nil)
	sess, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.http.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{testToken, http.DefaultTransport}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2099-01-01"})
	if err != nil {
		t.Fatalf("a client asking for 2099-01-01: %v", err)
	}
	defer sess.Close()
	if v := sess.InitializeResult().ProtocolVersion; v != newRevision {
		t.Errorf("a client asking for 2099-01-01 settled on %q, want %s", v, newRevision)
	}

	_, msgs := e.post(t, testToken, nil,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`)
	if len(msgs) != 1 || msgs[0]["result"].(map[string]any)["protocolVersion"] != "2025-11-25" {
		t.Errorf("initialize for 1999-01-01 = %v, want Airlock's newest session revision, 2025-11-25", msgs)
	}
	res, err := bystander.CallTool(ctx, &mcp.CallToolParams{Name: "test__echo", Arguments: map[string]any{"message": "fine"}})
	if err != nil || text(t, res) != "Echo: fine" {
		t.Errorf("another session after the refusals: %v %+v", err, res)
	}
}

// A request out of the session's order (a call before initialize, a second
// initialize) is refused as an Invalid Request (-32600), not with the SDK's
// bare error code 0 (found by an interop test); without a session, with
// HTTP 400.
func TestRequestsOutOfOrder(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	// Without a session: HTTP 400, as MCP's Streamable HTTP asks (the SDK
	// opened a session for it and said it was not initialized).
	status, msgs := e.post(t, testToken, nil, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if code, reason := rpcError(msgs); status != http.StatusBadRequest || code != -32600 || reason != core.EInvalid || !strings.Contains(fmt.Sprint(msgs), "Mcp-Session-Id") {
		t.Errorf("tools/list without a session: HTTP %d %v, want 400 with JSON-RPC error -32600 saying it needs a session", status, msgs)
	}
	n := e.gw.Sessions()
	if status, _ := e.post(t, testToken, nil, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusBadRequest || e.gw.Sessions() != n {
		t.Errorf("a notification without a session: HTTP %d, %d sessions (were %d); want 400 and no session opened", status, e.gw.Sessions(), n)
	}

	sid := e.openRawSession(t)
	_, msgs = e.post(t, testToken, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"},
		`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if code, _ := rpcError(msgs); code != -32600 || !strings.Contains(fmt.Sprint(msgs), "duplicate") {
		t.Errorf("a second initialize: %v, want JSON-RPC error -32600 saying it is a duplicate", msgs)
	}
}

// What the SDK refuses at the HTTP level itself (a body that is not JSON, a
// wrong Content-Type, an unknown session) is answered as Airlock's own
// refusals are: JSON with a reason code and a hint, and a JSON-RPC error
// (-32700 for a body that is not JSON), with the same HTTP status (found
// by an interop test: a line of plain text).
func TestSDKRefusalsCarryAReason(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	sid := e.openRawSession(t)
	session := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	for _, tc := range []struct {
		name    string
		headers map[string]string
		body    string
		status  int
		code    float64
		reason  string
	}{
		{"not JSON", session, `{"jsonrpc":"2.0","id":1,`, http.StatusBadRequest, jsonrpc.CodeParseError, core.EInvalid},
		{"wrong Content-Type", map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25", "Content-Type": "text/plain"},
			`{"jsonrpc":"2.0","id":1,"method":"ping"}`, http.StatusUnsupportedMediaType, jsonrpc.CodeInvalidRequest, core.EInvalid},
		{"unknown session", map[string]string{"Mcp-Session-Id": "NOSUCHSESSION", "Mcp-Protocol-Version": "2025-11-25"},
			`{"jsonrpc":"2.0","id":1,"method":"ping"}`, http.StatusNotFound, jsonrpc.CodeInvalidRequest, core.ENotFound},
	} {
		resp, raw := e.postHTTP(t, testToken, tc.headers, tc.body)
		var got struct {
			Code  string `json:"code"`
			Hint  string `json:"hint"`
			Error struct {
				Code float64 `json:"code"`
			} `json:"error"`
		}
		if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" || json.Unmarshal(raw, &got) != nil ||
			got.Code != tc.reason || got.Error.Code != tc.code || got.Hint == "" {
			t.Errorf("%s: HTTP %d %s %s, want %d, JSON with reason %s, a hint and JSON-RPC code %v", tc.name, resp.StatusCode, resp.Header.Get("Content-Type"), raw, tc.status, tc.reason, tc.code)
		}
	}
	// The session is not harmed.
	if _, msgs := e.post(t, testToken, session, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); len(msgs) != 1 || msgs[0]["result"] == nil {
		t.Errorf("a ping after the refusals: %v", msgs)
	}
}

// A server's instructions reach the agents that may use it, under its
// name, after Airlock's own; a server the agent may use nothing of keeps
// its instructions to itself (found by an interop test: server-everything's
// guidance never reached the agent).
func TestServerInstructionsReachTheAgent(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	for id, text := range map[string]string{"guide": "Call guide__lookup before anything else.", "secret": "The secret server's own notes."} {
		srv := mcp.NewServer(&mcp.Implementation{Name: id, Version: "1"}, &mcp.ServerOptions{Instructions: text})
		mcp.AddTool(srv, &mcp.Tool{Name: "lookup"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found"}}}, nil, nil
		})
		e.cat.AddInProcess(id, srv, false)
		e.waitRunning(t, id)
	}
	e.access.hide("secret", "lookup")
	check := func(who, got string) {
		t.Helper()
		if !strings.HasPrefix(got, "Airlock gateway:") || !strings.Contains(got, "## Server guide\n\n> Call guide__lookup before anything else.") {
			t.Errorf("%s: instructions %q, want Airlock's, then the guide server's under its name", who, got)
		}
		if strings.Contains(got, "secret") {
			t.Errorf("%s: instructions %q name a server the agent may use nothing of", who, got)
		}
	}
	check("a 2025-11-25 session", e.connect(t, nil).InitializeResult().Instructions)
	_, msgs := e.post(t, testToken, newRevisionHeaders("server/discover", ""),
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+newRevisionMeta+`}}`)
	if len(msgs) != 1 {
		t.Fatalf("server/discover: %v", msgs)
	}
	res, _ := msgs[0]["result"].(map[string]any)
	got, _ := res["instructions"].(string)
	check("a 2026-07-28 agent", got)
	// Made for this caller: "private", as every per-caller answer (found in
	// a review: the SDK's default, "public", lets any client or
	// intermediary cache and serve it).
	if res["cacheScope"] != "private" {
		t.Errorf("server/discover with the caller's own instructions: cacheScope %v, want private", res["cacheScope"])
	}
}

// TestLargeRequests: a request up to gateway.MaxRequestBytes reaches the
// server (file_write may carry up to builtin.MaxWriteCapBytes of content,
// which JSON escaping can double); a larger one is refused with 413 before
// it is parsed, and the session stays usable. Found by a new-user test: a
// 4.5 MiB write, within the write cap, was refused at the door.
func TestLargeRequests(t *testing.T) {
	e := newEnv(t, catalog.Options{}, testutil.EverythingServer(t, "everything"))
	sess := e.connect(t, nil)
	ctx := context.Background()
	msg := strings.Repeat("x", 6<<20)
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": msg}})
	if err != nil || res.IsError || len(res.Content) == 0 || !strings.HasSuffix(res.Content[0].(*mcp.TextContent).Text, msg[:1000]) {
		t.Fatalf("a 6 MiB echo: %v", err)
	}
	status, _ := e.post(t, testToken, nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"everything__echo","arguments":{"message":"`+strings.Repeat("x", gateway.MaxRequestBytes)+`"}}}`)
	if status != http.StatusRequestEntityTooLarge {
		t.Errorf("a request over %d bytes: HTTP %d, want 413", gateway.MaxRequestBytes, status)
	}
	// Through an MCP client, the refusal says why (the SDK's own 413 was
	// "Request Entity Too Large" and nothing more).
	_, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": strings.Repeat("y", gateway.MaxRequestBytes)}})
	if err == nil || !strings.Contains(err.Error(), "["+gateway.ERequestTooLarge+"]") {
		t.Errorf("an over-large call through the client: %v, want %s", err, gateway.ERequestTooLarge)
	}
	if _, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "still here"}}); err != nil {
		t.Errorf("the session after a refused request: %v", err)
	}

	// A body without a length (chunked) is taken up to the same limit and
	// refused beyond it the same way (found by an interop test: its
	// refusal was the SDK's plain text).
	chunked := func(body string) (int, string) {
		t.Helper()
		// A reader whose length net/http cannot know: the body goes chunked.
		req, _ := http.NewRequest(http.MethodPost, e.http.URL+"/mcp", io.MultiReader(strings.NewReader(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Mcp-Session-Id", sess.ID())
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if req.ContentLength != 0 { // 0 with a body: unknown, sent chunked
			t.Fatalf("the request was not sent chunked (length %d)", req.ContentLength)
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := chunked(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"everything__echo","arguments":{"message":"chunked"}}}`); status != http.StatusOK || !strings.Contains(body, "Echo: chunked") {
		t.Errorf("a chunked call: HTTP %d %s, want its answer", status, body)
	}
	if status, body := chunked(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"everything__echo","arguments":{"message":"` + strings.Repeat("z", gateway.MaxRequestBytes) + `"}}}`); status != http.StatusRequestEntityTooLarge || !strings.Contains(body, gateway.ERequestTooLarge) {
		t.Errorf("a chunked request over %d bytes: HTTP %d %.300s, want 413 with %s", gateway.MaxRequestBytes, status, body, gateway.ERequestTooLarge)
	}
}

// A downstream's log message goes to the agent whose request it handled
// when it logged, never to another agent (it may carry that agent's data;
// found by a new-user test: one agent read another's log lines). With
// requests of two agents in flight nobody can tell whose it is, and it
// goes to nobody. A message logged while idle is the server's own and
// goes to everyone who sees the server.
func TestLogsReachOnlyTheirAgent(t *testing.T) {
	// Lines logged after a call ended are that call's for a while
	// (TestLogsAfterACallStayItsAgents); here the server's idle lines
	// are told apart at once.
	e := newEnv(t, catalog.Options{LogWindow: time.Nanosecond})
	releases := make(chan chan struct{}, 4)
	srv := mcp.NewServer(&mcp.Implementation{Name: "whisper", Version: "1"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}})
	mcp.AddTool(srv, &mcp.Tool{Name: "whisper"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct {
		Say string `json:"say"`
	}) (*mcp.CallToolResult, any, error) {
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: in.Say})
		// After the log line, in the same order: when the agent has its
		// progress, the gateway has handled the line.
		if tok := req.Params.GetProgressToken(); tok != nil {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1})
		}
		release := make(chan struct{})
		releases <- release
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	e.cat.AddInProcess("whisper", srv, false)
	e.waitRunning(t, "whisper")
	heard := map[string]chan string{"tester": make(chan string, 20), "other": make(chan string, 20)}
	progress := make(chan struct{}, 4)
	sessions := map[string]*mcp.ClientSession{}
	for who, token := range map[string]string{"tester": testToken, "other": otherToken} {
		sessions[who] = e.connectAs(t, token, &mcp.ClientOptions{
			LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
				heard[who] <- fmt.Sprint(req.Params.Data)
			},
			ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress <- struct{}{} },
		})
		if err := sessions[who].SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, 10*time.Second, func() bool { return slices.Contains(toolNames(t, sessions[who]), "whisper__whisper") },
			"%s never saw whisper__whisper", who)
	}
	start := func(who, say string, withProgress bool) chan error {
		done := make(chan error, 1)
		params := &mcp.CallToolParams{Name: "whisper__whisper", Arguments: map[string]any{"say": say}}
		if withProgress {
			params.SetProgressToken(say)
		}
		go func() {
			_, err := sessions[who].CallTool(context.Background(), params)
			done <- err
		}()
		return done
	}
	// The server logs while idle: a marker both hear; what either heard
	// before it has arrived.
	marker := func(text string) {
		for ss := range srv.Sessions() {
			ss.Log(context.Background(), &mcp.LoggingMessageParams{Level: "info", Data: text})
		}
	}
	expect := func(who string, want ...string) {
		t.Helper()
		for _, w := range want {
			if got := receive(t, heard[who], "a log message for "+who); got != w {
				t.Errorf("%s heard %q, want %q", who, got, w)
			}
		}
	}

	// One agent's request at a time: only that agent hears its lines.
	for _, who := range []string{"tester", "other"} {
		done := start(who, who+"'s secret", false)
		expect(who, who+"'s secret")
		close(receive(t, releases, who+"'s call"))
		receive(t, done, who+"'s call's end")
	}
	marker("idle 1")
	expect("tester", "idle 1")
	expect("other", "idle 1")

	// Both agents' requests in flight: a line logged then goes to nobody.
	first := start("tester", "first", false)
	expect("tester", "first")
	r1 := receive(t, releases, "tester's call")
	second := start("other", "ambiguous", true)
	receive(t, progress, "other's progress, after its log line")
	close(r1)
	close(receive(t, releases, "other's call"))
	receive(t, first, "tester's call's end")
	receive(t, second, "other's call's end")
	marker("idle 2")
	expect("tester", "idle 2")
	expect("other", "idle 2")
}

// A subscription does not outlive the access it was made with: once the
// agent may no longer read the resource (a grant revoked), its updates
// stop (found by a new-user test: they kept coming).
func TestSubscriptionEndsWithAccess(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	updated := make(chan string, 10)
	sess := e.connect(t, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		updated <- req.Params.URI
	}})
	ctx := context.Background()
	for _, uri := range []string{"test://doc/readme", "test://item/7"} {
		if err := sess.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	touch := func(uri string) {
		if _, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "test__touch", Arguments: map[string]any{"uri": uri}}); err != nil {
			t.Fatal(err)
		}
	}
	touch("test://doc/readme")
	if got := receive(t, updated, "resources/updated"); got != "test://doc/readme" {
		t.Fatalf("updated %s, want test://doc/readme", got)
	}
	e.access.hide("test", "test://doc/readme")
	touch("test://doc/readme")
	touch("test://item/7") // still readable: its update comes after the other's would have
	if got := receive(t, updated, "resources/updated"); got != "test://item/7" {
		t.Errorf("after the grant was taken away the agent heard of %s", got)
	}
}

// Roots are not relayed (README): Airlock tells its servers it has none,
// a server asking anyway is refused with the reason rather than given an
// empty list it may read as "no folders" (found by a new-user test), and
// the agent's roots never reach it.
func TestRootsAreNotRelayed(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "rooted", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "error: " + err.Error()}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d roots", len(res.Roots))}}}, nil, nil
	})
	e.cat.AddInProcess("rooted", srv, false)
	e.waitRunning(t, "rooted")
	c := mcp.NewClient(&mcp.Implementation{Name: "rooty", Version: "1"}, nil)
	c.AddRoots(&mcp.Root{URI: "file:///home/me/secret-project"})
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: e.http.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{testToken, http.DefaultTransport}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "rooted__roots"})
	if err != nil || !strings.Contains(text(t, res), "does not relay roots") {
		t.Errorf("roots/list from a server = %v %q, want the refusal with its reason", err, text(t, res))
	}
	for ss := range srv.Sessions() {
		if caps := ss.InitializeParams().Capabilities; caps != nil && caps.RootsV2 != nil {
			t.Errorf("Airlock told its server it has roots: %+v", caps.RootsV2)
		}
	}
}

// A --no-prefix server's prompts and resources keep their own names even
// where a tool's could not (found by a new-user test: code.review and
// architecture.md were renamed); the prompt is fetched by that name.
func TestNoPrefixKeepsPromptAndResourceNames(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	srv.AddPrompt(&mcp.Prompt{Name: "code.review"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "review this"}}}}, nil
	})
	srv.AddResource(&mcp.Resource{Name: "architecture.md", URI: "docs://architecture.md"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "docs://architecture.md", Text: "boxes"}}}, nil
	})
	e.cat.AddInProcess("docs", srv, true)
	e.waitRunning(t, "docs")
	sess := e.connect(t, nil)
	ctx := context.Background()
	prompts, err := sess.ListPrompts(ctx, nil)
	if err != nil || !slices.ContainsFunc(prompts.Prompts, func(p *mcp.Prompt) bool { return p.Name == "code.review" }) {
		t.Fatalf("prompts/list = %v %+v, want code.review", err, prompts)
	}
	if p, err := sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: "code.review"}); err != nil || len(p.Messages) != 1 {
		t.Errorf("prompts/get code.review = %v %+v", err, p)
	}
	res, err := sess.ListResources(ctx, nil)
	if err != nil || !slices.ContainsFunc(res.Resources, func(r *mcp.Resource) bool { return r.Name == "architecture.md" }) {
		t.Errorf("resources/list = %v %+v, want architecture.md by its name", err, res)
	}
	// With a prefix, a resource's name is the server's under the prefix,
	// as it is: a resource is found by its URI, so its name need not be
	// a tool name (found by an interop test: architecture_md_1c33c24f).
	e.cat.RemoveInProcess("docs")
	e.cat.AddInProcess("docs", srv, false)
	testutil.Eventually(t, 10*time.Second, func() bool {
		res, err = sess.ListResources(ctx, nil)
		return err == nil && slices.ContainsFunc(res.Resources, func(r *mcp.Resource) bool { return r.URI == "docs://architecture.md" && r.Name != "architecture.md" })
	}, "the resource was not listed again with a prefix: %+v", res)
	if !slices.ContainsFunc(res.Resources, func(r *mcp.Resource) bool { return r.Name == "docs__architecture.md" }) {
		t.Errorf("resources/list = %+v, want docs__architecture.md", res.Resources)
	}
}

// A legacy SSE session belongs to the credential that opened its stream,
// as a Streamable HTTP session does: a POST to its endpoint with another
// token is refused and audited, and nothing runs (found in a review: it
// ran as the session's agent). Its calls are recorded with its id.
func TestSSESessionBelongsToOpener(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	// open starts an SSE stream with token at path and returns the endpoint
	// its first event names.
	open := func(token, path string) string {
		req, _ := http.NewRequest("GET", e.http.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				return strings.TrimSpace(data)
			}
		}
		return ""
	}
	post := func(endpoint, token, body string) int {
		r, _ := http.NewRequest("POST", e.http.URL+endpoint, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+token)
		r.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sse","version":"1"}}}`
	endpoint := open(testToken, "/sse")
	_, sid, _ := strings.Cut(endpoint, "sessionid=")
	if sid == "" {
		t.Fatalf("no session id in the endpoint event %q", endpoint)
	}
	// A GET naming a session id opens a new session of its own, owned by
	// its credential (found in a security review: one with no owner).
	otherEndpoint := open(otherToken, "/sse?sessionid=whatever")
	if otherEndpoint == "" || strings.Contains(otherEndpoint, "whatever") || strings.Contains(otherEndpoint, sid) {
		t.Errorf("a GET with a session id got the endpoint %q", otherEndpoint)
	}
	if code := post(otherEndpoint, testToken, initialize); code != http.StatusForbidden {
		t.Errorf("a POST with another token to the session that GET opened: HTTP %d, want 403", code)
	}
	post(endpoint, testToken, initialize)
	post(endpoint, testToken, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if code := post(endpoint, otherToken, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test__echo","arguments":{"message":"hijack"}}}`); code != http.StatusForbidden {
		t.Errorf("another token's POST to the session: HTTP %d, want 403", code)
	}
	// The owner's own call runs, and is recorded with the session's id;
	// the hijack attempt never ran.
	if code := post(endpoint, testToken, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test__whoami"}}`); code != http.StatusAccepted {
		t.Errorf("the owner's POST: HTTP %d", code)
	}
	e.audited(t, core.ActivityFilter{Tool: "whoami"}, func(r []core.AuditRecord) bool { return len(r) == 1 && r[0].Session == sid },
		"the SSE session's call recorded with its id")
	if slices.Contains(e.test.Started(), "echo") {
		t.Error("the other token's call ran in the session")
	}
	e.audited(t, core.ActivityFilter{Kind: "session"}, func(r []core.AuditRecord) bool {
		return len(r) == 2 && slices.ContainsFunc(r, func(rec core.AuditRecord) bool { return rec.ErrorCode == core.EForbidden && rec.Session == sid })
	}, "the attempts audited")
}

// Two servers listing the same resource template: the first serves its
// URIs, and the other's status says its template is hidden (as for a
// resource URI; found by a new-user test: only resources were reported).
func TestTemplateCollisionReported(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	for _, id := range []string{"first", "second"} {
		srv := mcp.NewServer(&mcp.Implementation{Name: id, Version: "1"}, nil)
		srv.AddResourceTemplate(&mcp.ResourceTemplate{Name: "item", URITemplate: "shared://item/{id}"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: id}}}, nil
		})
		e.cat.AddInProcess(id, srv, false)
		e.waitRunning(t, id)
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		st, _ := e.cat.ServerStatus("second")
		return slices.ContainsFunc(st.Warnings, func(w string) bool { return strings.Contains(w, "shared://item/{id}") && strings.Contains(w, "first") })
	}, "the second server's status does not say its template is hidden")
	sess := e.connect(t, nil)
	r, err := sess.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "shared://item/7"})
	if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != "first" {
		t.Errorf("read through the shared template = %v %+v, want the first server's", err, r)
	}
}

// A line a server logs just after an agent's call ended is that call's:
// the SDK may hand it over after the answer that followed it on the wire
// (found by an interop test: most such lines reached every agent, as the
// server's own). Only that agent hears it; another agent, seeing the
// same server, hears the next line of another server first.
func TestLogsAfterACallStayItsAgents(t *testing.T) {
	e := newEnv(t, catalog.Options{LogWindow: time.Minute})
	servers := map[string]*mcp.Server{}
	for _, name := range []string{"late", "plain"} {
		srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"},
			&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}})
		mcp.AddTool(srv, &mcp.Tool{Name: "hello"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil, nil
		})
		e.cat.AddInProcess(name, srv, false)
		e.waitRunning(t, name)
		servers[name] = srv
	}
	heard := map[string]chan string{"tester": make(chan string, 20), "other": make(chan string, 20)}
	sessions := map[string]*mcp.ClientSession{}
	for who, token := range map[string]string{"tester": testToken, "other": otherToken} {
		sessions[who] = e.connectAs(t, token, &mcp.ClientOptions{
			LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
				heard[who] <- fmt.Sprint(req.Params.Data)
			},
		})
		if err := sessions[who].SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, 10*time.Second, func() bool { return slices.Contains(toolNames(t, sessions[who]), "late__hello") },
			"%s never saw late__hello", who)
	}
	if _, err := sessions["tester"].CallTool(context.Background(), &mcp.CallToolParams{Name: "late__hello"}); err != nil {
		t.Fatal(err)
	}
	logAll := func(srv *mcp.Server, text string) {
		for ss := range srv.Sessions() {
			ss.Log(context.Background(), &mcp.LoggingMessageParams{Level: "info", Data: text})
		}
	}
	logAll(servers["late"], "tester's late line")
	if got := receive(t, heard["tester"], "tester's late line"); got != "tester's late line" {
		t.Errorf("tester heard %q first, want its late line", got)
	}
	// Lines go out one after the other, in order: had other been sent
	// tester's line, it would come before plain's, logged after it.
	logAll(servers["plain"], "plain's own")
	if got := receive(t, heard["other"], "plain's own line"); got != "plain's own" {
		t.Errorf("other heard %q, want plain's own line (and nothing of tester's call)", got)
	}
}

// A resource a server serves but does not list can be subscribed to, as it
// can be read (found by an interop test: read through Airlock, but its
// subscription was refused as unknown): with one server of resources, that
// server is asked, and its updates reach the agent. With two, Airlock
// cannot tell which to ask, and the subscription is refused as unknown.
func TestSubscriptionToUnlistedResource(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	ctx := context.Background()
	sole := newNotes()
	servesAny(sole.Server, "mem://made/")
	e.cat.Apply([]core.ServerConfig{httpDownstream(t, "hid", sole.Server)})
	e.waitRunning(t, "hid")
	updated := make(chan string, 10)
	sess := e.connect(t, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		updated <- req.Params.URI
	}})
	if err := sess.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://made/1"}); err != nil {
		t.Fatalf("subscribing to an unlisted resource of the one server of resources: %v", err)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return slices.Contains(sole.seen(), "subscribe mem://made/1") },
		"the server was not subscribed: %v", sole.seen())
	sole.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "mem://made/1"})
	if got := receive(t, updated, "resources/updated"); got != "mem://made/1" {
		t.Errorf("resources/updated for %q, want mem://made/1", got)
	}

	e.cat.Apply([]core.ServerConfig{httpDownstream(t, "hid", sole.Server), httpDownstream(t, "other", newNotes().Server)})
	e.waitRunning(t, "other")
	// The resource it is subscribed to can still be read, at the server it
	// hears of it from (found by an interop test: its updates came, but a
	// read was refused as unknown).
	if res, err := sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mem://made/1"}); err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "served mem://made/1" {
		t.Errorf("read of the resource the session is subscribed to, with two servers of resources: %+v, %v", res, err)
	}
	err := sess.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://made/2"})
	if err == nil || !strings.Contains(err.Error(), "["+catalog.EUnknownResource+"]") {
		t.Errorf("subscribing to an unlisted resource with two servers of resources: %v, want a refusal with %s", err, catalog.EUnknownResource)
	}
	if slices.Contains(sole.seen(), "subscribe mem://made/2") {
		t.Errorf("a server was subscribed to a resource Airlock could not place: %v", sole.seen())
	}
}

// elicitingServer is a stdio server whose tool "ask" asks its client for a
// form (name, check, integer, colors, in that order; check and integer have
// defaults, colors is SEP-1330's titled multi-select) and answers with the
// answer it got, byte for byte.
func elicitingServer(t *testing.T, id string) core.ServerConfig {
	script := reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"`+id+`","version":"1"}}`) +
		"read -r initialized\n" + reply(`{"tools":[{"name":"ask","inputSchema":{"type":"object"}},{"name":"askurl","inputSchema":{"type":"object"}}]}`) + `
while read -r line; do
  case "$line" in *'"method":"tools/call"'*)
    id=$(echo "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
    case "$line" in
    *'"askurl"'*) echo '{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"mode":"url","message":"Sign in","url":"https://example.com/login","elicitationId":"x1"}}' ;;
    *) echo '{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"message":"Who?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"},"check":{"type":"boolean","default":true},"integer":{"type":"integer","default":3},"colors":{"type":"array","items":{"type":"string","anyOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}]}}}}}}' ;;
    esac
    read -r answer
    esc=$(printf '%s' "$answer" | sed 's/\\/\\\\/g; s/"/\\"/g')
    echo '{"jsonrpc":"2.0","id":'$id',"result":{"content":[{"type":"text","text":"'"$esc"'"}]}}'
  esac
done
`
	return core.ServerConfig{ID: id, Command: writeScript(t, script)}
}

// A relayed elicitation reaches the agent with its form's fields in the
// server's order, and the user's answer reaches the server as given: no
// schema defaults filled in on the way (found by an interop test: the
// server got check and integer the user never chose, and the client saw
// the fields in alphabetical order).
func TestElicitationRelayedAsItIs(t *testing.T) {
	e := newEnv(t, catalog.Options{}, elicitingServer(t, "asker"))
	e.waitRunning(t, "asker")
	var schema string
	sess := e.connect(t, &mcp.ClientOptions{
		// A client that sends the user's answer as given (the Go SDK's
		// fills in the schema's defaults unless told not to; the
		// TypeScript SDK's does not).
		KeepElicitationContent: true,
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			b, _ := json.Marshal(req.Params.RequestedSchema)
			schema = string(b)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "asker__ask", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("asker__ask: %v %+v", err, res)
	}
	var answer struct {
		Result struct {
			Action  string         `json:"action"`
			Content map[string]any `json:"content"`
		} `json:"result"`
	}
	if got := text(t, res); json.Unmarshal([]byte(got), &answer) != nil || answer.Result.Action != "accept" ||
		!reflect.DeepEqual(answer.Result.Content, map[string]any{"name": "Ada"}) {
		t.Errorf("the server got %s, want the user's answer as given: accept with {\"name\":\"Ada\"} alone", got)
	}
	if n, c, i, m := strings.Index(schema, `"name"`), strings.Index(schema, `"check"`), strings.Index(schema, `"integer"`), strings.Index(schema, `"colors"`); n < 0 || !(n < c && c < i && i < m) {
		t.Errorf("the agent's client got the form %s, want its fields in the server's order: name, check, integer, colors", schema)
	}
	// SEP-1330's titled multi-select keeps its "type": "string" (the Go
	// SDK refused it, and Airlock used to take the type out on the way).
	if want := `"items":{"type":"string","anyOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}]}`; !strings.Contains(schema, want) {
		t.Errorf("the agent's client got the form %s, want the titled multi-select as the server sent it: %s", schema, want)
	}

	// A URL elicitation to a client that takes forms only is refused as
	// unsupported, not blamed on the client (found by an interop test:
	// relay_bad_answer, "the agent's MCP client is at fault"); the same for
	// an agent of the 2026-07-28 revision, whose call carries the request
	// as an input request (found in a review). Its code is Airlock's
	// refusal code (it was -32001, which the TypeScript SDK names
	// RequestTimeout).
	newer := e.connectNew(t, testToken, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	for who, agent := range map[string]*mcp.ClientSession{"2025-11-25": sess, "2026-07-28": newer} {
		res, err := agent.CallTool(context.Background(), &mcp.CallToolParams{Name: "asker__askurl", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("asker__askurl from a %s agent: %v %+v", who, err, res)
		}
		if got := text(t, res); !strings.Contains(got, `"error"`) || !strings.Contains(got, "unsupported") || strings.Contains(got, catalog.ERelayBadAnswer) ||
			!strings.Contains(got, fmt.Sprintf(`"code":%d`, pipeline.CodeRefused)) {
			t.Errorf("the server got %s for a URL elicitation to a %s form-only client, want an error saying unsupported, code %d", got, who, pipeline.CodeRefused)
		}
	}
}

// A 2026-07-28 tools/call whose Mcp-Param-* header does not match its
// argument, or is malformed, is refused with HTTP 400 and HeaderMismatch
// before it reaches the server, as SEP-2243 requires of the server the
// agent talks to (found by the MCP conformance suite 0.2.0-alpha.12: the
// SDK checked the headers only against tools registered with it, and
// Airlock registers none, so every mismatch passed).
func TestNewRevisionParamHeadersChecked(t *testing.T) {
	script := reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"hdr","version":"1"}}`) +
		"read initialized\n" +
		reply(`{"tools":[{"name":"where","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}}]}`) +
		`while read req; do
id=$(echo "$req" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
echo '{"jsonrpc":"2.0","id":'$id',"result":{"content":[{"type":"text","text":"ran"}]}}'
done
`
	e := newEnv(t, catalog.Options{}, core.ServerConfig{ID: "hdr", Command: writeScript(t, script)})
	e.waitRunning(t, "hdr")
	call := func(header string) (int, []map[string]any) {
		h := newRevisionHeaders("tools/call", "hdr__where")
		if header != "" {
			h["Mcp-Param-Region"] = header
		}
		return e.post(t, testToken, h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hdr__where","arguments":{"region":"eu"},`+newRevisionMeta+`}}`)
	}
	for _, tc := range []struct {
		header string
		ok     bool
	}{
		{"eu", true},
		{"=?base64?ZXU=?=", true}, // "eu"
		{"us", false},             // another value than the argument's
		{"", false},               // the argument without its header
		{"=?base64?ZXU?=", false}, // bad padding
	} {
		status, msgs := call(tc.header)
		code, _ := rpcError(msgs)
		switch {
		case tc.ok && (status != http.StatusOK || code != 0):
			t.Errorf("Mcp-Param-Region %q: status %d, error %v; want the call to run: %v", tc.header, status, code, msgs)
		case !tc.ok && (status != http.StatusBadRequest || code != -32020):
			t.Errorf("Mcp-Param-Region %q: status %d, error %v; want 400 with -32020 (HeaderMismatch): %v", tc.header, status, code, msgs)
		}
	}
	// Refused before the pipeline: only the two good calls were recorded.
	e.audited(t, core.ActivityFilter{Tool: "where"}, func(recs []core.AuditRecord) bool { return len(recs) == 2 },
		"the two calls whose header matched, and no other")
	// A tool the caller may not see is not named by a header error: the
	// call gets the refusal any call to it gets (noted with the header check).
	e.access.hide("hdr", "where")
	status, msgs := call("us")
	if code, _ := rpcError(msgs); status != http.StatusOK || code != 0 || !strings.Contains(fmt.Sprint(msgs), "may not use where [not_subscribed]") {
		t.Errorf("a bad header for a hidden tool: status %d, error %v, %v; want the refusal of a hidden tool", status, code, msgs)
	}
}

// A subscription that names no resource is refused as invalid params
// (found by a review: resources/subscribe without a uri succeeded, with
// the one server of resources picked for it).
func TestSubscriptionWithoutAURIIsRefused(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	ctx := context.Background()
	notes := newNotes()
	e.cat.AddInProcess("notes", notes.Server, false)
	e.waitRunning(t, "notes")
	sess := e.connect(t, nil)
	var rerr *jsonrpc.Error
	if err := sess.Subscribe(ctx, &mcp.SubscribeParams{URI: ""}); !errors.As(err, &rerr) || rerr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("resources/subscribe without a uri = %v, want JSON-RPC error %d", err, jsonrpc.CodeInvalidParams)
	}
	if err := sess.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: ""}); !errors.As(err, &rerr) || rerr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("resources/unsubscribe without a uri = %v, want JSON-RPC error %d", err, jsonrpc.CodeInvalidParams)
	}
	// The session goes on: a real subscription works.
	if err := sess.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://note"}); err != nil {
		t.Errorf("a subscription after the refused ones: %v", err)
	}
}
