package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/activity"
	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/gateway"
	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	testToken  = "alk_test-token-0123456789abcdef"
	otherToken = "alk_other-token-0123456789abcdef"
)

// identities is the tests' Identifier: testToken is the agent "tester",
// otherToken the agent "other", no token is nobody. Resolve can be steered
// per session, as authenticate would.
type identities struct {
	mu        sync.Mutex
	as        map[string]core.Caller // session id → the caller it has become
	suspended map[string]bool        // agents whose requests are refused
	ended     []string
}

func (ids *identities) Identify(r *http.Request) (gateway.Connection, error) {
	switch r.Header.Get("Authorization") {
	case "":
		return gateway.Connection{}, nil
	case "Bearer " + testToken:
		return gateway.Connection{Key: "k-tester", Ref: "tester"}, nil
	case "Bearer " + otherToken:
		return gateway.Connection{Key: "k-other", Ref: "other"}, nil
	}
	return gateway.Connection{}, core.Errorf(core.EUnauthorized, "missing or invalid agent token")
}

func (ids *identities) Resolve(sid string, conn gateway.Connection, _ string) (core.Caller, error) {
	ids.mu.Lock()
	defer ids.mu.Unlock()
	if c, ok := ids.as[sid]; ok {
		return c, nil
	}
	if name, _ := conn.Ref.(string); name != "" {
		c := core.Caller{AgentID: name, AgentName: name, Purpose: core.PurposeTask}
		if ids.suspended[name] {
			return c, core.Errorf(core.EForbidden, "agent %s is suspended", name)
		}
		return c, nil
	}
	return core.Caller{}, nil
}

func (ids *identities) Ended(sid string) {
	ids.mu.Lock()
	ids.ended = append(ids.ended, sid)
	ids.mu.Unlock()
}

func (ids *identities) Binding(string) string       { return "" }
func (ids *identities) Restore(string, string) bool { return true }

func (ids *identities) Peek(sid string, conn gateway.Connection) (core.Caller, error) {
	return ids.Resolve(sid, conn, "")
}

func (ids *identities) suspend(name string) {
	ids.mu.Lock()
	if ids.suspended == nil {
		ids.suspended = map[string]bool{}
	}
	ids.suspended[name] = true
	ids.mu.Unlock()
}

func (ids *identities) become(sid string, c core.Caller) {
	ids.mu.Lock()
	if ids.as == nil {
		ids.as = map[string]core.Caller{}
	}
	ids.as[sid] = c
	ids.mu.Unlock()
}

// access is the tests' authorization: identified agents may use everything
// but the hidden targets; in a chat session, tools of the server "work" are
// off limits.
type access struct {
	mu     sync.Mutex
	hidden map[string]bool // exposed-ish "server/name"
}

func (a *access) Check(c *core.Caller, t core.Target) error {
	if !c.Authenticated() {
		return (&core.Error{Code: core.EUnauthorized, Message: "this request needs an agent identity"}).WithHint("connect with a token")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.hidden[t.Server+"/"+t.Name] {
		return (&core.Error{Code: "not_subscribed", Message: fmt.Sprintf("%s may not use %s", c.AgentID, t.Name)}).WithHint("grant it on the Agents screen")
	}
	if c.Purpose == core.PurposeChat && t.Server == "work" {
		return (&core.Error{Code: "chat_only", Message: "not in a chat session"}).WithHint("use your task session")
	}
	return nil
}

func (a *access) Authorize(_ context.Context, r *core.Request) error {
	return a.Check(&r.Caller, r.Target())
}

func (a *access) hide(server, name string) {
	a.mu.Lock()
	if a.hidden == nil {
		a.hidden = map[string]bool{}
	}
	a.hidden[server+"/"+name] = true
	a.mu.Unlock()
}

// allowAll is the tests' rules: every call runs without asking.
type allowAll struct{}

func (allowAll) Decide(*core.Request) core.Verdict {
	return core.Verdict{Outcome: core.Allow, By: "test", Reason: "tests allow everything"}
}

// env is a running gateway over real sources.
type env struct {
	cat    *catalog.Catalog
	gw     *gateway.Gateway
	audit  *store.AuditLog
	http   *httptest.Server
	rec    *testutil.Recorder
	ids    *identities
	access *access
	test   *testutil.TestServer // served in-process as "test"
	// newGateway makes another gateway over the same catalog and pipeline,
	// with opts (Version and Audit filled in), served at the URL it returns.
	newGateway func(opts gateway.Options) string
}

func newEnv(t *testing.T, opts catalog.Options, servers ...core.ServerConfig) *env {
	t.Helper()
	return newEnvWith(t, allowAll{}, nil, opts, servers...)
}

// newEnvWith is newEnv with the rules and the approver given.
func newEnvWith(t *testing.T, rules pipeline.Decider, approver pipeline.Approver, opts catalog.Options, servers ...core.ServerConfig) *env {
	t.Helper()
	db := testutil.MustOpenDB(t)
	audit, err := store.OpenAuditLog(db, filepath.Join(t.TempDir(), store.JournalFileName), nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{audit: audit, rec: &testutil.Recorder{}, ids: &identities{}, access: &access{}, test: testutil.NewTestServer()}
	recorder := activity.New(audit, e.rec, nil)
	e.cat = catalog.New("test", opts)
	pipe, err := pipeline.New(pipeline.Stages{Route: e.cat, Gate: e.access, Decider: rules, Approver: approver, Dispatch: e.cat, Audit: recorder})
	if err != nil {
		t.Fatal(err)
	}
	e.cat.SetRelayer(pipe.Run)
	e.gw = gateway.New(e.cat, pipe, e.ids, e.access, gateway.Options{Version: "test", Audit: recorder})
	e.newGateway = func(opts gateway.Options) string {
		opts.Version, opts.Audit = "test", recorder
		gw := gateway.New(e.cat, pipe, e.ids, e.access, opts)
		hs := httptest.NewServer(gw.StreamableHandler())
		t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
		return hs.URL
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", e.gw.StreamableHandler())
	mux.Handle("/sse", e.gw.SSEHandler())
	e.http = httptest.NewServer(mux)
	t.Cleanup(func() { e.http.Close(); e.cat.Close(); recorder.Close(); audit.Close() })
	e.cat.AddInProcess("test", e.test.Server, false)
	e.cat.Apply(servers)
	e.waitRunning(t, "test")
	for _, s := range servers {
		e.waitRunning(t, s.ID)
	}
	return e
}

// waitRunning waits until server id runs and its lists are in the
// catalog's snapshot, which is rebuilt a moment after the state turns
// running (a request in between finds no such prompt; agents then hear
// list_changed).
func (e *env) waitRunning(t *testing.T, id string) {
	t.Helper()
	testutil.Eventually(t, 60*time.Second, func() bool {
		st, ok := e.cat.ServerStatus(id)
		if !ok || st.State != core.StateRunning {
			return false
		}
		if len(st.Tools) == 0 || len(st.Warnings) > 0 { // its tools may all be hidden by others'
			return true
		}
		for _, ti := range e.cat.Snapshot().Tools {
			if ti.ServerID == id {
				return true
			}
		}
		return false
	}, "server %s never became running: %+v", id, e.cat.Status())
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.base.RoundTrip(r)
}

func (e *env) connect(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return e.connectAs(t, testToken, opts)
}

func (e *env) connectAs(t *testing.T, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, opts)
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: e.http.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect to gateway: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	// A server's result from the catalog comes as it was sent.
	if err := res.DecodeVerbatim(); err != nil {
		t.Fatalf("the result cannot be read: %v", err)
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func toolNames(t *testing.T, sess *mcp.ClientSession) []string {
	t.Helper()
	tools, err := sess.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// errorCode is the reason code of an Airlock tool error.
func errorCode(res *mcp.CallToolResult) string {
	e, ok := res.Meta["airlock/error"].(map[string]any)
	if !ok {
		return ""
	}
	code, _ := e["code"].(string)
	return code
}

// A real third-party server (server-everything from npm, over stdio)
// through the gateway: tools, images, structured content, and one audit
// record per call with the caller and client apart and secrets redacted.
func TestEverythingThroughGateway(t *testing.T) {
	e := newEnv(t, catalog.Options{}, testutil.EverythingServer(t, "everything"))
	sess := e.connect(t, nil)
	ctx := context.Background()

	tools, err := sess.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		// The tool's execution properties as the server lists them (found
		// by an interop test: they were dropped).
		if tl.Name == "everything__simulate-research-query" && string(tl.Execution) != `{"taskSupport":"required"}` {
			t.Errorf("%s has execution %s, want the server's {\"taskSupport\":\"required\"}", tl.Name, tl.Execution)
		}
	}
	for _, want := range []string{"everything__echo", "everything__get-sum", "everything__get-tiny-image", "everything__simulate-research-query", "test__echo"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s; got %v", want, names)
		}
	}
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "hello airlock", "api_key": "sk-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); !strings.Contains(got, "hello airlock") || res.IsError {
		t.Fatalf("echo through gateway = %q (isError %v), want the message echoed", got, res.IsError)
	}
	res, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "everything__get-tiny-image"})
	if err != nil {
		t.Fatal(err)
	}
	var sawImage bool
	for _, c := range res.Content {
		if img, ok := c.(*mcp.ImageContent); ok && len(img.Data) > 0 && img.MIMEType == "image/png" {
			sawImage = true
		}
	}
	if !sawImage {
		t.Errorf("get-tiny-image through gateway has no PNG image content: %+v", res.Content)
	}
	res, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "everything__get-structured-content", Arguments: map[string]any{"location": "New York"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.StructuredContent == nil {
		t.Errorf("get-structured-content lost its structured content: %+v", res)
	}

	recs, err := e.audit.List(core.ActivityFilter{Tool: "echo", Server: "everything"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("audit has %d echo records, want 1", len(recs))
	}
	r := recs[0]
	want := core.AuditRecord{Kind: core.KindToolCall, Agent: "tester", AgentID: "tester", Client: "test-agent", ClientVersion: "1",
		Purpose: core.PurposeTask, Server: "everything", Tool: "echo", Decision: core.DecisionAllow, Status: core.StatusOK}
	got := core.AuditRecord{Kind: r.Kind, Agent: r.Agent, AgentID: r.AgentID, Client: r.Client, ClientVersion: r.ClientVersion,
		Purpose: r.Purpose, Server: r.Server, Tool: r.Tool, Decision: r.Decision, Status: r.Status}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit record (-want +got):\n%s", diff)
	}
	if strings.Contains(r.Arguments, "sk-secret") || !strings.Contains(r.Arguments, "hello airlock") {
		t.Errorf("audit arguments = %s, want the message kept and the api_key redacted", r.Arguments)
	}
	if r.Session == "" || r.ArgsDigest == "" {
		t.Errorf("audit record lacks session or digest: %+v", r)
	}
	if len(e.rec.Events(core.EventActivity)) == 0 {
		t.Error("no activity event emitted for the UI")
	}
}

// An in-process server (the SDK's in-memory transports) is served through
// the same pipeline as a downstream one: tools with images and structured
// content, prompts, resources and templates, logs — each request audited
// with its kind — and it learns who is calling from _meta.
func TestInProcessServerThroughPipeline(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	logs := make(chan *mcp.LoggingMessageParams, 10)
	sess := e.connect(t, &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
		select {
		case logs <- req.Params:
		default:
		}
	}})
	ctx := context.Background()
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError {
			t.Fatalf("%s: tool error %s", name, text(t, res))
		}
		return res
	}
	if got := text(t, call("test__echo", map[string]any{"message": "hi"})); got != "Echo: hi" {
		t.Errorf("echo = %q", got)
	}
	if res := call("test__structured", map[string]any{"city": "Oslo"}); res.StructuredContent == nil {
		t.Errorf("structured content lost: %+v", res)
	}
	if res := call("test__image", nil); len(res.Content) != 1 {
		t.Errorf("image content = %+v", res.Content)
	} else if img, ok := res.Content[0].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" {
		t.Errorf("image content = %+v", res.Content[0])
	}
	if got := text(t, call("test__whoami", nil)); !strings.HasPrefix(got, "caller: tester session ") {
		t.Errorf("whoami = %q, want the caller Airlock resolved", got)
	}

	pr, err := sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test__greeting", Arguments: map[string]string{"name": "Ada"}})
	if err != nil || len(pr.Messages) != 1 || pr.Messages[0].Content.(*mcp.TextContent).Text != "Hello, Ada" {
		t.Fatalf("prompts/get = %+v, %v", pr, err)
	}
	rr, err := sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://doc/readme"})
	if err != nil || rr.Contents[0].Text != "read me" {
		t.Fatalf("resources/read = %+v, %v", rr, err)
	}
	rr, err = sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://item/42"})
	if err != nil || rr.Contents[0].Text != "item test://item/42" {
		t.Fatalf("resources/read through a template = %+v, %v", rr, err)
	}
	var rerr *jsonrpc.Error
	if _, err := sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://nowhere"}); err == nil || !strings.Contains(err.Error(), catalog.EUnknownResource) ||
		!errors.As(err, &rerr) || rerr.Code != pipeline.CodeResourceNotFound {
		t.Errorf("an unknown resource: %v, want %s with MCP's code %d (found by an interop test)", err, catalog.EUnknownResource, pipeline.CodeResourceNotFound)
	}
	// An unknown prompt, and a logging level MCP does not define, get
	// Invalid params, as a server answers them (found by an interop test:
	// -32001, and {}).
	if _, err := sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test__nope"}); !errors.As(err, &rerr) || rerr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), catalog.EUnknownPrompt) {
		t.Errorf("an unknown prompt: %v, want %s with code %d", err, catalog.EUnknownPrompt, jsonrpc.CodeInvalidParams)
	}
	if err := sess.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "bogus"}); !errors.As(err, &rerr) || rerr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("logging/setLevel bogus: %v, want code %d", err, jsonrpc.CodeInvalidParams)
	}

	if err := sess.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	call("test__log", map[string]any{"message": "note this"})
	select {
	case l := <-logs:
		if l.Logger != "test/test" {
			t.Errorf("log from logger %q, want it to name the server", l.Logger)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no log message reached the session")
	}

	// Every request kind is in the audit log.
	for _, tt := range []struct{ kind, tool string }{
		{core.KindPromptGet, "greeting"}, {core.KindResourceRead, "test://doc/readme"}, {core.KindResourceRead, "test://item/42"}, {core.KindToolCall, "whoami"},
	} {
		recs, err := e.audit.List(core.ActivityFilter{Kind: tt.kind, Tool: tt.tool})
		if err != nil || len(recs) != 1 || recs[0].Server != "test" || recs[0].Status != core.StatusOK {
			t.Errorf("audit of %s %s = %+v, %v; want one ok record", tt.kind, tt.tool, recs, err)
		}
	}
	recs, _ := e.audit.List(core.ActivityFilter{Kind: core.KindResourceRead, Tool: "test://nowhere"})
	if len(recs) != 1 || recs[0].ErrorCode != catalog.EUnknownResource {
		t.Errorf("audit of the unknown resource = %+v", recs)
	}
}

func TestProgressPassesThrough(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	var mu sync.Mutex
	var progress []float64
	sess := e.connect(t, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, req.Params.Progress)
		mu.Unlock()
	}})
	// No pause between the steps: the last notification leaves right
	// before the reply. The SDK's connections read both in order but hand a
	// reply over at once while notifications wait for the handler; Airlock's
	// SDK patch makes a call that asked for progress return only after the
	// progress sent before its reply was handled, at both hops (Airlock's
	// client of the source, and this agent's). Without it, 1 run in 150
	// under load lost a step.
	params := &mcp.CallToolParams{Name: "test__slow", Arguments: map[string]any{"steps": 5, "step_ms": 0}}
	params.SetProgressToken("my-token")
	res, err := sess.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("slow: %v %+v", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []float64{1, 2, 3, 4, 5}; !slices.Equal(progress, want) {
		t.Errorf("progress when the call returned = %v, want %v: every step the source sent before its reply, in order", progress, want)
	}
}

// A server that sends progress is working on the call: each notification
// starts the call timeout again. One that says nothing for as long is cut.
func TestCallTimeoutRestartsOnProgress(t *testing.T) {
	e := newEnv(t, catalog.Options{CallTimeout: 1500 * time.Millisecond})
	var steps atomic.Int32
	sess := e.connect(t, &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { steps.Add(1) }})
	// 12 steps of 250 ms: 3 s in all, twice the timeout, never 1.5 s quiet.
	args := map[string]any{"steps": 12, "step_ms": 250}
	params := &mcp.CallToolParams{Name: "test__slow", Arguments: args}
	params.SetProgressToken("p")
	res, err := sess.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("a call that reports progress all along = %v %q; want its answer", err, text(t, res))
	}
	if n := steps.Load(); n != 12 {
		t.Errorf("progress notifications = %d, want 12", n)
	}
	// The same work without a progress token: the server cannot report,
	// so Airlock cannot tell it from a hung one.
	res, err = sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "test__slow", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); !res.IsError || !strings.Contains(got, "within 1.5s [timeout]") {
		t.Errorf("a call without progress past the timeout = %q, want a timeout error", got)
	}
}

// A bad credential is refused at once; no credential connects, but sees
// nothing and every call is refused with a reason code.
func TestCredentials(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	for _, auth := range []string{"Bearer wrong", "Basic abc"} {
		req, _ := http.NewRequest("POST", e.http.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body core.Error
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || body.Code != core.EUnauthorized {
			t.Errorf("Authorization %q: status %d code %q, want 401 %q", auth, resp.StatusCode, body.Code, core.EUnauthorized)
		}
	}
	anon := e.connectAs(t, "", nil)
	if names := toolNames(t, anon); len(names) != 0 {
		t.Errorf("an unidentified session sees %v, want nothing", names)
	}
	res, err := anon.CallTool(context.Background(), &mcp.CallToolParams{Name: "test__echo", Arguments: map[string]any{"message": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || errorCode(res) != core.EUnauthorized || !strings.Contains(text(t, res), "Hint:") {
		t.Errorf("an unidentified call = %q (code %q), want refused with %s and a hint", text(t, res), errorCode(res), core.EUnauthorized)
	}
	if len(e.test.Started()) != 0 {
		t.Errorf("the refused call reached the server: %v", e.test.Started())
	}
}

// A tool the caller cannot see is still refused by the gate when called by
// name, with the reason it was hidden for; an unknown tool gets its own
// reason code; both are audited, and the session keeps working.
func TestHiddenAndUnknownTools(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	e.access.hide("test", "add")
	sess := e.connect(t, nil)
	ctx := context.Background()
	if names := toolNames(t, sess); slices.Contains(names, "test__add") || !slices.Contains(names, "test__echo") {
		t.Errorf("tools/list = %v, want test__echo without the hidden test__add", names)
	}
	for _, tt := range []struct{ name, code string }{{"test__add", "not_subscribed"}, {"test__no-such-tool", catalog.EUnknownTool}} {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: tt.name, Arguments: map[string]any{"a": 1, "b": 2}})
		if err != nil {
			t.Fatalf("%s: protocol error %v, want a tool error", tt.name, err)
		}
		if !res.IsError || errorCode(res) != tt.code || !strings.Contains(text(t, res), "Hint:") {
			t.Errorf("%s = %q (code %q), want a tool error with %s and a hint", tt.name, text(t, res), errorCode(res), tt.code)
		}
		recs, _ := e.audit.List(core.ActivityFilter{Tool: strings.TrimPrefix(tt.name, "test__")})
		if tt.code == catalog.EUnknownTool {
			recs, _ = e.audit.List(core.ActivityFilter{Tool: tt.name})
		}
		if len(recs) != 1 || recs[0].ErrorCode != tt.code {
			t.Errorf("audit of %s = %+v, want one record with %s", tt.name, recs, tt.code)
		}
	}
	if slices.Contains(e.test.Started(), "add") {
		t.Error("the hidden tool ran")
	}
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "test__echo", Arguments: map[string]any{"message": "still here"}})
	if err != nil || text(t, res) != "Echo: still here" {
		t.Fatalf("the session stopped working: %v %+v", err, res)
	}
}

// The caller is resolved for every request: when a session becomes another
// agent or purpose (authenticate, logout), its list changes at once (with
// list_changed) and its calls are made as the new caller.
func TestCallerResolvedPerRequest(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	work := testutil.NewTestServer()
	e.cat.AddInProcess("work", work.Server, false)
	e.waitRunning(t, "work")
	changed := make(chan struct{}, 10)
	sess := e.connect(t, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	// The server's tools reach the sessions a moment after it runs (and
	// list_changed says so): wait for them, then forget that notice.
	testutil.Eventually(t, 10*time.Second, func() bool { return slices.Contains(toolNames(t, sess), "work__echo") },
		"a task session does not see work__echo: %v", toolNames(t, sess))
	for len(changed) > 0 {
		<-changed
	}
	e.ids.become(sess.ID(), core.Caller{AgentID: "chatter", Purpose: core.PurposeChat})
	e.gw.Sync()
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no list_changed after the session's purpose changed")
	}
	if names := toolNames(t, sess); slices.Contains(names, "work__echo") || !slices.Contains(names, "test__echo") {
		t.Errorf("a chat session sees %v, want test__echo but not work__echo", names)
	}
	res, _ := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "work__echo", Arguments: map[string]any{"message": "x"}})
	if errorCode(res) != "chat_only" {
		t.Errorf("work__echo in a chat session: %q, want chat_only", text(t, res))
	}
	res, _ = sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "test__whoami"})
	if got := text(t, res); !strings.HasPrefix(got, "caller: chatter ") {
		t.Errorf("whoami after the change = %q, want chatter", got)
	}
}

// An MCP session belongs to the credential that opened it: another
// credential (or none) cannot call tools in it, open its stream or delete
// it; the attempt is refused and audited, and the owner is unaffected.
func TestSessionBelongsToOpener(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	owner := e.connect(t, nil)
	sid := owner.ID()
	for _, token := range []string{otherToken, ""} {
		for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			var body *strings.Reader
			if method == http.MethodPost {
				body = strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"test__echo","arguments":{"message":"hijack"}}}`)
			} else {
				body = strings.NewReader("")
			}
			req, _ := http.NewRequest(method, e.http.URL+"/mcp", body)
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s on another's session with token %q: status %d, want 403", method, token, resp.StatusCode)
			}
		}
	}
	if slices.Contains(e.test.Started(), "echo") {
		t.Error("a hijacked call ran")
	}
	res, err := owner.CallTool(context.Background(), &mcp.CallToolParams{Name: "test__echo", Arguments: map[string]any{"message": "mine"}})
	if err != nil || text(t, res) != "Echo: mine" {
		t.Fatalf("the owner's session was affected: %v %+v", err, res)
	}
	recs, _ := e.audit.List(core.ActivityFilter{Kind: "session"})
	if len(recs) != 6 || recs[0].ErrorCode != core.EForbidden || recs[0].Session != sid {
		t.Errorf("audit of the attempts = %d records (%+v), want 6 refusals on session %s", len(recs), recs, sid)
	}
}

// A client that hangs up ends its calls: the call's context is cancelled,
// the source sees the cancellation, and Activity says so.
func TestCancellationReachesSource(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	sess := e.connect(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "test__hang"})
		errc <- err
	}()
	testutil.Eventually(t, 10*time.Second, func() bool { return slices.Contains(e.test.Started(), "hang") },
		"the call never reached the server")
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("a cancelled call returned no error")
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		recs, _ := e.audit.List(core.ActivityFilter{Tool: "hang"})
		return len(recs) == 1 && recs[0].ErrorCode == pipeline.ECancelled
	}, "the cancelled call was not recorded as cancelled")
}

// openRawSession opens a 2025-11-25 session with raw HTTP and returns its
// id.
func (e *env) openRawSession(t *testing.T) string {
	t.Helper()
	resp, _ := e.postHTTP(t, testToken, nil,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: no session id (status %d)", resp.StatusCode)
	}
	e.postHTTP(t, testToken, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"},
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}

// deleteSession ends session sid as its client would (DELETE) and returns
// the HTTP status, or -1 when the request failed.
func (e *env) deleteSession(sid string) int {
	req, _ := http.NewRequest(http.MethodDelete, e.http.URL+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1
	}
	resp.Body.Close()
	return resp.StatusCode
}

// rawHang starts a call of test__hang with id on session sid and returns
// the body of its POST's answer when it ends.
func (e *env) rawHang(t *testing.T, sid string, id int) <-chan string {
	body := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, e.http.URL+"/mcp", strings.NewReader(
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test__hang","arguments":{}}}`, id)))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"Authorization": "Bearer " + testToken, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"} {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			body <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body <- string(b)
	}()
	testutil.Eventually(t, 10*time.Second, func() bool { return slices.Contains(e.test.Started(), "hang") },
		"the call never reached the server")
	return body
}

// A call the agent cancels with notifications/cancelled gets no answer, as
// MCP asks of the receiver of a cancellation; its POST's stream ends, the
// server hears the agent's own reason, and Activity says cancelled with it
// (found by an interop test: the agent got an answer with code internal,
// "context canceled", which the TypeScript SDK reports as a response to an
// unknown request, and the server got "context canceled" as the reason).
func TestCancelledCallGetsNoAnswer(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	sid := e.openRawSession(t)
	body := e.rawHang(t, sid, 7)
	status, _ := e.post(t, testToken, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"},
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user pressed stop"}}`)
	if status != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: status %d, want 202", status)
	}
	select {
	case got := <-body:
		if strings.Contains(got, `"id":7`) {
			t.Errorf("the cancelled call was answered: %s", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the stream of the cancelled call never ended")
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return slices.Contains(e.test.Cancelled(), "user pressed stop") },
		"the server did not hear the agent's reason: %v", e.test.Cancelled())
	rec := e.audited(t, core.ActivityFilter{Tool: "hang"}, func(r []core.AuditRecord) bool { return len(r) == 1 && r[0].Status != core.StatusRunning }, "the cancelled call")[0]
	if rec.ErrorCode != pipeline.ECancelled || !strings.Contains(rec.Error, "user pressed stop") {
		t.Errorf("record: %s %q, want cancelled with the agent's reason", rec.ErrorCode, rec.Error)
	}
	// The session goes on.
	_, msgs := e.post(t, testToken, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"},
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"test__echo","arguments":{"message":"after"}}}`)
	if len(msgs) != 1 || !strings.Contains(fmt.Sprint(msgs[0]), "Echo: after") {
		t.Errorf("a call after the cancelled one: %v", msgs)
	}
}

// A client that ends its session (DELETE) while a call runs: the call is
// cancelled at the server, answered as cancelled because the session ended,
// and the DELETE returns at once (found by an interop test: the DELETE
// waited for the call to end by itself, the server was never told, and the
// client's call never settled).
func TestSessionEndCancelsItsCalls(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	sid := e.openRawSession(t)
	body := e.rawHang(t, sid, 9)
	deleted := make(chan int, 1)
	go func() { deleted <- e.deleteSession(sid) }()
	select {
	case code := <-deleted:
		if code != http.StatusNoContent {
			t.Errorf("DELETE: status %d, want 204", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the DELETE waits for the running call, which only ends when cancelled")
	}
	select {
	case got := <-body:
		if !strings.Contains(got, `"id":9`) || !strings.Contains(got, pipeline.ECancelled) || !strings.Contains(got, "ended its session") {
			t.Errorf("the call's answer: %s, want it cancelled because the session ended", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call of the ended session never ended")
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		c := e.test.Cancelled()
		return len(c) == 1 && strings.Contains(c[0], "ended the session")
	}, "the server was not told that the session ended: %v", e.test.Cancelled())
}

// A session that closes is forgotten at once (its memory freed, the
// identifier told), without waiting for another session to open.
func TestClosedSessionsAreForgotten(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	sess := e.connect(t, nil)
	sid := sess.ID()
	if n := e.gw.Sessions(); n != 1 {
		t.Fatalf("%d sessions open, want 1", n)
	}
	sess.Close()
	testutil.Eventually(t, 10*time.Second, func() bool {
		e.ids.mu.Lock()
		defer e.ids.mu.Unlock()
		return e.gw.Sessions() == 0 && slices.Contains(e.ids.ended, sid)
	}, "the closed session is still held: %d sessions", e.gw.Sessions())
}

func TestListChangedReachesSessions(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	changed := make(chan struct{}, 10)
	sess := e.connect(t, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	e.cat.AddInProcess("second", testutil.NewTestServer().Server, false)
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no notifications/tools/list_changed after a server was added")
	}
	if names := toolNames(t, sess); !slices.Contains(names, "second__echo") {
		t.Errorf("second__echo missing from tools/list: %v", names)
	}
}

// A server that hangs at start is a failed start, retried with a growing
// backoff and marked failed, not retried for ever.
func TestHangingStartIsAFailedStart(t *testing.T) {
	opts := catalog.Options{ConnectTimeout: 200 * time.Millisecond, BackoffMin: 10 * time.Millisecond, BackoffMax: 40 * time.Millisecond, MaxCrashes: 3, StopGrace: 50 * time.Millisecond}
	e := newEnv(t, opts)
	e.cat.Apply([]core.ServerConfig{{ID: "sleeper", Command: "sleep", Args: []string{"1000"}}})
	testutil.Eventually(t, 30*time.Second, func() bool {
		st, _ := e.cat.ServerStatus("sleeper")
		return st.State == core.StateFailed
	}, "a hanging server was never marked failed: %+v", e.cat.Status())
	st, _ := e.cat.ServerStatus("sleeper")
	if !strings.Contains(st.LastError, "failed starts") || !strings.Contains(st.LastError, "did not become ready") {
		t.Errorf("last error = %q, want it to say it never became ready and gave up after failed starts", st.LastError)
	}
}

// hangScript is a server that completes the handshake, lists one tool
// ("hang") and never answers a call.
const hangScript = `read init
id=$(echo "$init" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
echo '{"jsonrpc":"2.0","id":'$id',"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"slow","version":"1"}}}'
read initialized
read list
id=$(echo "$list" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
echo '{"jsonrpc":"2.0","id":'$id',"result":{"tools":[{"name":"hang","inputSchema":{"type":"object"}}]}}'
while read line; do :; done
`

// A change of a server's timeouts alone applies without a restart: the
// call running goes on (found by a regression test: raising the call
// timeout, as its error advises, killed the call). Any other change
// restarts the server, and a call still running ends at once, saying so,
// not at its timeout.
func TestServerEntryChangedDuringACall(t *testing.T) {
	cfg := core.ServerConfig{ID: "slow", Command: writeScript(t, hangScript), CallTimeout: 3600}
	e := newEnv(t, catalog.Options{}, cfg)
	sess := e.connect(t, nil)
	pid := e.cat.PID("slow")
	done := make(chan *mcp.CallToolResult, 1)
	// hang calls slow__hang in the background, the nth call, and waits
	// until it runs.
	hang := func(n int) {
		t.Helper()
		go func() {
			res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow__hang"})
			if err != nil {
				res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
			}
			done <- res
		}()
		testutil.Eventually(t, 10*time.Second, func() bool {
			recs, _ := e.audit.List(core.ActivityFilter{Server: "slow"})
			return len(recs) == n
		}, "call %d never started", n)
	}
	hang(1)
	cfg.CallTimeout, cfg.StartTimeout = 7200, 60
	e.cat.Apply([]core.ServerConfig{cfg})
	if got := e.cat.PID("slow"); got != pid {
		t.Fatalf("a change of the timeouts restarted the server (pid %d → %d)", pid, got)
	}
	select {
	case res := <-done:
		t.Fatalf("the call ended with a change of the timeouts: %q", text(t, res))
	default:
	}
	cfg.Env = map[string]string{"X": "1"}
	e.cat.Apply([]core.ServerConfig{cfg})
	select {
	case res := <-done:
		if got := text(t, res); !res.IsError || !strings.Contains(got, "was stopped or restarted") || !strings.Contains(got, "[unavailable]") {
			t.Errorf("the call cut by a restart = %q, want it to say the server restarted", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call cut by a restart did not end")
	}

	// Removed while a call runs: the call says so, and not to call again
	// (found by a new-user test: it said the server was starting anew).
	e.waitRunning(t, "slow")
	hang(2)
	e.cat.Apply(nil)
	select {
	case res := <-done:
		want := `Airlock: server "slow" was removed while hang ran: the call was ended unfinished and may have had effects [unavailable]` +
			"\nHint: check what it did; the server's tools are gone until it is added again"
		if got := text(t, res); !res.IsError || got != want {
			t.Errorf("the call cut by a removal = %q, want %q", got, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call cut by a removal did not end")
	}
}

// A call to a server that is starting for the first time waits for it,
// rather than being refused as "starting": right after Airlock starts,
// agents that carried their sessions on call the tools they knew (found by
// a regression test). The server here starts when the test lets it.
func TestCallWaitsForAServersFirstStart(t *testing.T) {
	release := filepath.Join(t.TempDir(), "go")
	ev := testutil.EverythingServer(t, "late")
	script := fmt.Sprintf("while [ ! -e %q ]; do sleep 0.05; done\nexec %q %q %q\n", release, ev.Command, ev.Args[0], ev.Args[1])
	e := newEnv(t, catalog.Options{})
	e.cat.Apply([]core.ServerConfig{{ID: "late", Command: writeScript(t, script)}})
	sess := e.connect(t, nil)
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "late__echo", Arguments: map[string]any{"message": "waited"}})
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
		}
		done <- res
	}()
	// A read of a resource the server lists once up waits too (found by a
	// regression test: it was refused as unknown_resource).
	read := make(chan error, 1)
	go func() {
		res, err := sess.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "demo://resource/static/document/architecture.md"})
		if err == nil && (len(res.Contents) == 0 || res.Contents[0].Text == "") {
			err = fmt.Errorf("empty contents: %+v", res)
		}
		read <- err
	}()
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		if got := text(t, res); res.IsError || !strings.Contains(got, "waited") {
			t.Errorf("a call made while its server started the first time = %q, want its answer", got)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the call never returned")
	}
	select {
	case err := <-read:
		if err != nil {
			t.Errorf("a read made while its server started the first time: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the read never returned")
	}
}

// A server's own start timeout (servers.json "startTimeout", seconds)
// takes the place of Airlock's, and the error says how to give it longer.
func TestServerStartTimeout(t *testing.T) {
	opts := catalog.Options{ConnectTimeout: time.Hour, MaxCrashes: 1, StopGrace: 50 * time.Millisecond}
	e := newEnv(t, opts)
	e.cat.Apply([]core.ServerConfig{{ID: "sleeper", Command: "sleep", Args: []string{"1000"}, StartTimeout: 1}})
	testutil.Eventually(t, 30*time.Second, func() bool {
		st, _ := e.cat.ServerStatus("sleeper")
		return st.State == core.StateFailed
	}, "a server past its own start timeout was never marked failed: %+v", e.cat.Status())
	st, _ := e.cat.ServerStatus("sleeper")
	if !strings.Contains(st.LastError, "did not become ready within 1s") || !strings.Contains(st.LastError, `"startTimeout"`) {
		t.Errorf("last error = %q, want it to say it was not ready within its 1s, and how to give it longer", st.LastError)
	}
	// Given longer, as the error advises, it tries again with it; and a
	// Restart keeps it (found by a regression test: it stayed failed, and
	// Restart used the old timeout).
	failedWithin := func(d string) {
		t.Helper()
		testutil.Eventually(t, 30*time.Second, func() bool {
			st, _ := e.cat.ServerStatus("sleeper")
			return st.State == core.StateFailed && strings.Contains(st.LastError, "within "+d)
		}, "the server did not try again with its %s start timeout: %+v", d, e.cat.Status())
	}
	e.cat.Apply([]core.ServerConfig{{ID: "sleeper", Command: "sleep", Args: []string{"1000"}, StartTimeout: 2}})
	failedWithin("2s")
	if err := e.cat.Restart("sleeper"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, func() bool {
		st, _ := e.cat.ServerStatus("sleeper")
		return st.State != core.StateFailed
	}, "Restart did not start it")
	failedWithin("2s")
}

func TestHTTPAndSSEDownstreams(t *testing.T) {
	remote := core.ServerConfig{ID: "remote", URL: testutil.EverythingHTTP(t, "streamableHttp") + "/mcp"}
	legacy := core.ServerConfig{ID: "legacy", URL: testutil.EverythingHTTP(t, "sse") + "/sse", Type: "sse"}
	e := newEnv(t, catalog.Options{}, remote, legacy)
	sess := e.connect(t, nil)
	for _, name := range []string{"remote__echo", "legacy__echo"} {
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"message": "over " + name}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := text(t, res); !strings.Contains(got, "over "+name) {
			t.Errorf("%s = %q", name, got)
		}
	}
	for _, id := range []string{"remote", "legacy"} {
		if st, _ := e.cat.ServerStatus(id); st.Transport != map[string]string{"remote": "http", "legacy": "sse"}[id] {
			t.Errorf("%s transport = %q", id, st.Transport)
		}
	}
}

// A remote server that goes away gives a clear "unavailable" tool error at
// once, and calls work again once it is back.
func TestHTTPDownstreamGoesAwayAndComesBack(t *testing.T) {
	base, proc := testutil.EverythingHTTPProcess(t, "streamableHttp", 0)
	e := newEnv(t, catalog.Options{BackoffMax: 500 * time.Millisecond}, core.ServerConfig{ID: "remote", URL: base + "/mcp"})
	sess := e.connect(t, nil)
	proc.Kill()
	proc.Wait()
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "remote__echo", Arguments: map[string]any{"message": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(text(t, res), "["+core.EUnavailable+"]") {
		t.Errorf("call to a vanished server = %q, want an %s tool error", text(t, res), core.EUnavailable)
	}
	u, _ := url.Parse(base)
	port, _ := strconv.Atoi(u.Port())
	testutil.EverythingHTTPProcess(t, "streamableHttp", port)
	testutil.Eventually(t, 60*time.Second, func() bool {
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "remote__echo", Arguments: map[string]any{"message": "back"}})
		return err == nil && strings.Contains(text(t, res), "Echo: back")
	}, "calls never worked again after the server came back: %+v", e.cat.Status())
}

// A remote server that is not up yet when Airlock starts (a container or a
// dev server started after it at login) is tried again until it is, not
// given up after a few tries as a crashing process is (found by a new-user
// test: it stayed failed, with a hint that it had crashed).
func TestHTTPDownstreamUpAfterAirlock(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	opts := catalog.Options{BackoffMin: 20 * time.Millisecond, BackoffMax: 100 * time.Millisecond, MaxCrashes: 2}
	e := newEnv(t, opts)
	e.cat.Apply([]core.ServerConfig{{ID: "later", URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}})
	testutil.Eventually(t, 30*time.Second, func() bool {
		st, _ := e.cat.ServerStatus("later")
		return st.Restarts > 2*opts.MaxCrashes
	}, "the server that is not up was not tried again: %+v", e.cat.Status())
	if st, _ := e.cat.ServerStatus("later"); st.State == core.StateFailed {
		t.Fatalf("a remote server not up yet was given up: %+v", st)
	}
	testutil.EverythingHTTPProcess(t, "streamableHttp", port)
	e.waitRunning(t, "later")
	sess := e.connect(t, nil)
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "later__echo", Arguments: map[string]any{"message": "up"}})
	if err != nil || !strings.Contains(text(t, res), "Echo: up") {
		t.Errorf("call once it is up = %v %+v", err, res)
	}
}

func TestPromptsResourcesAndLogsPassThrough(t *testing.T) {
	e := newEnv(t, catalog.Options{}, testutil.EverythingServer(t, "everything"))
	logs := make(chan *mcp.LoggingMessageParams, 100)
	sess := e.connect(t, &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
		select {
		case logs <- req.Params:
		default:
		}
	}})
	ctx := context.Background()

	prompts, err := sess.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range prompts.Prompts {
		names = append(names, p.Name)
	}
	if !slices.Contains(names, "everything__simple-prompt") {
		t.Fatalf("prompts/list = %v, want everything__simple-prompt", names)
	}
	got, err := sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: "everything__simple-prompt"})
	if err != nil || len(got.Messages) == 0 {
		t.Fatalf("prompts/get through the gateway: %v, %+v", err, got)
	}

	res, err := sess.ListResources(ctx, nil)
	if err != nil || len(res.Resources) == 0 {
		t.Fatalf("resources/list: %v, %d resources", err, len(res.Resources))
	}
	i := slices.IndexFunc(res.Resources, func(r *mcp.Resource) bool { return strings.HasPrefix(r.URI, "demo://") })
	if i < 0 {
		t.Fatalf("no resource of server-everything listed: %+v", res.Resources)
	}
	r := res.Resources[i]
	if !strings.HasPrefix(r.Name, "everything__") {
		t.Errorf("resource name %q is not namespaced", r.Name)
	}
	read, err := sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
	if err != nil || len(read.Contents) == 0 || read.Contents[0].URI != r.URI {
		t.Fatalf("resources/read %s: %v, %+v", r.URI, err, read)
	}

	// Logging: the downstream's messages reach the session, named by server.
	if err := sess.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "everything__toggle-simulated-logging"}); err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-logs:
		if !strings.HasPrefix(l.Logger, "everything") {
			t.Errorf("log message from logger %q, want it to name the server", l.Logger)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no downstream log message reached the session")
	}
}

func TestBadDownstreamDefinitionsAreSkipped(t *testing.T) {
	script := `head -c 300000 /dev/zero | tr '\0' 'x' >&2; echo >&2; echo "after the long line" >&2
` + reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{}},"serverInfo":{"name":"odd","version":"1"}}`) +
		"read initialized\n" +
		reply(`{"tools":[{"name":"ok","inputSchema":{"type":"object"}},{"name":"bad-schema","inputSchema":{"type":"string"}}]}`) +
		reply(`{"resources":[{"uri":"file:///%zz","name":"broken"},{"uri":"file:///fine.txt","name":"fine"}]}`) +
		reply(`{"resourceTemplates":[{"uriTemplate":"{{{","name":"broken-template"}]}`) +
		"while read line; do :; done\n"
	odd := core.ServerConfig{ID: "odd", Command: writeScript(t, script)}
	e := newEnv(t, catalog.Options{}, odd)
	sess := e.connect(t, nil)
	ctx := context.Background()
	tools, err := sess.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "odd__ok") || !slices.Contains(names, "odd__bad-schema") {
		t.Errorf("tools = %v, want odd__ok and odd__bad-schema (its schema replaced by an empty object)", names)
	}
	res, err := sess.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	if !slices.Contains(uris, "file:///fine.txt") {
		t.Errorf("resources = %v, want the fine one", uris)
	}

	st, _ := e.cat.ServerStatus("odd")
	tail := strings.Join(st.StderrTail, "\n")
	if st.State != core.StateRunning || !strings.Contains(tail, "after the long line") || !strings.Contains(tail, "line cut") {
		t.Errorf("odd server: state %s, stderr tail %.200q; want running, the long line cut and the next one kept", st.State, tail)
	}
}

// Downstream servers reached over Streamable HTTP and over legacy SSE work
// like stdio ones.
func TestDownstreamTimeout(t *testing.T) {
	// The server's own call timeout (servers.json "callTimeout", seconds)
	// takes the place of Airlock's.
	slow := core.ServerConfig{ID: "slow", Command: writeScript(t, hangScript), CallTimeout: 1}
	e := newEnv(t, catalog.Options{CallTimeout: time.Hour}, slow)
	sess := e.connect(t, nil)
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow__hang"})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); !res.IsError || !strings.Contains(got, "did not answer hang within 1s [timeout]") || !strings.Contains(got, `"callTimeout"`) {
		t.Errorf("call to a hanging server = %q (isError %v), want a timeout tool error after its own 1s, saying how to give it longer", got, res.IsError)
	}
	res, err = sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "test__echo", Arguments: map[string]any{"message": "ok"}})
	if err != nil || res.IsError {
		t.Errorf("other server stopped working after a timeout: %v", err)
	}
}

func TestDownstreamCrashRestartAndFail(t *testing.T) {
	opts := catalog.Options{BackoffMin: 50 * time.Millisecond, BackoffMax: 200 * time.Millisecond, MaxCrashes: 3, StableAfter: time.Hour}
	crasher := core.ServerConfig{ID: "crasher", Command: writeScript(t, "echo 'boom: cannot start' >&2\nexit 3\n")}
	e := newEnv(t, opts, testutil.EverythingServer(t, "everything"))
	e.cat.Apply([]core.ServerConfig{testutil.EverythingServer(t, "everything"), crasher})
	sess := e.connect(t, nil)
	ctx := context.Background()

	// A server that keeps crashing is marked failed, with its stderr kept.
	testutil.Eventually(t, 30*time.Second, func() bool {
		st, _ := e.cat.ServerStatus("crasher")
		return st.State == core.StateFailed
	}, "crasher never marked failed: %+v", e.cat.Status())
	st, _ := e.cat.ServerStatus("crasher")
	if len(st.StderrTail) == 0 || !strings.Contains(strings.Join(st.StderrTail, "\n"), "boom") {
		t.Errorf("failed server's stderr tail = %q, want the crash message", st.StderrTail)
	}
	// Its note says how it ended, not only that the handshake saw EOF.
	if want := "process exited (exit status 3) before it answered initialize; stderr: boom: cannot start (gave up after 3"; !strings.HasPrefix(st.LastError, want) {
		t.Errorf("failed server's error = %q, want it to start %q", st.LastError, want)
	}

	// Kill the everything server mid-session: it is restarted and later calls succeed.
	pid := e.cat.PID("everything")
	if pid == 0 {
		t.Fatal("no pid for everything")
	}
	syscall.Kill(pid, syscall.SIGKILL)
	testutil.Eventually(t, 30*time.Second, func() bool {
		st, _ := e.cat.ServerStatus("everything")
		return st.State == core.StateRunning && st.Restarts >= 1 && st.PID != pid
	}, "everything not restarted after kill: %+v", e.cat.Status())

	// Meanwhile the other server was unaffected.
	if st, _ := e.cat.ServerStatus("test"); st.State != core.StateRunning || st.Restarts != 0 {
		t.Errorf("other server affected by a neighbour's crash: %+v", st)
	}
	var res *mcp.CallToolResult
	testutil.Eventually(t, 30*time.Second, func() bool {
		var err error
		res, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "after restart"}})
		return err == nil && !res.IsError
	}, "calls never succeeded again after the restart")
	if !strings.Contains(text(t, res), "after restart") {
		t.Errorf("echo after restart = %q", text(t, res))
	}

	// A call to a failed server is a clear tool error.
	_, err := e.cat.Dispatch(ctx, &core.Request{Kind: core.KindToolCall, Server: "crasher", Name: "x"})
	if core.ErrorCode(err) != core.EUnavailable {
		t.Errorf("call to failed server: %v, want code %s", err, core.EUnavailable)
	}
	// So is an agent's call of one of its tools, although no list shows
	// them now (found by a new-user test: "no server offers a tool").
	res, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "crasher__anything"})
	if err != nil || !res.IsError || !strings.Contains(text(t, res), `server "crasher" is failed`) || !strings.Contains(text(t, res), "["+core.EUnavailable+"]") {
		t.Errorf("an agent's call to a failed server's tool = %v %q, want %s saying the server failed", err, text(t, res), core.EUnavailable)
	}
}

// A stdio server that writes a line on stdout that cannot be MCP (a log
// line, a banner) has it skipped, as Claude Code and the TypeScript SDK
// skip it, and shown with what it wrote to stderr (found by a new-user test:
// one such line broke a server that works with them). A line that looks
// like a message but is not one still ends the connection, quoted.
func TestDownstreamNotJSONOnStdout(t *testing.T) {
	const hint = "a stdio server must write only JSON-RPC messages on stdout, and its logs on stderr"
	opts := catalog.Options{BackoffMin: 50 * time.Millisecond, BackoffMax: 200 * time.Millisecond, MaxCrashes: 2, StableAfter: time.Hour,
		StopGrace: 100 * time.Millisecond}
	talker := func(before, duringCall string) string {
		return "echo '" + before + "'\n" +
			reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"junk","version":"1"}}`) +
			"read initialized\n" +
			reply(`{"tools":[{"name":"talk","inputSchema":{"type":"object"}}]}`) +
			"read req\nid=$(echo \"$req\" | sed -n 's/.*\"id\":\\([0-9]*\\).*/\\1/p')\n" +
			"echo '" + duringCall + "'\n" +
			`echo '{"jsonrpc":"2.0","id":'$id',"result":{"content":[{"type":"text","text":"said it"}]}}'` + "\nsleep 1000\n"
	}

	t.Run("log lines are skipped", func(t *testing.T) {
		long := strings.Repeat("x", 200)
		chatty := core.ServerConfig{ID: "chatty", Command: writeScript(t, talker("hello this is not json "+long, "Loading model... done"))}
		e := newEnv(t, opts, chatty)
		res, err := e.cat.Dispatch(context.Background(), &core.Request{Kind: core.KindToolCall, Server: "chatty", Name: "talk"})
		if err != nil {
			t.Fatalf("call: %v", err)
		}
		if r, _ := res.(*mcp.CallToolResult); r == nil || text(t, r) != "said it" {
			t.Errorf("call answered %+v, want the server's answer", res)
		}
		st, _ := e.cat.ServerStatus("chatty")
		want := []string{"[stdout, not MCP, skipped] hello this is not json " + long, "[stdout, not MCP, skipped] Loading model... done"}
		if st.State != core.StateRunning || !slices.Equal(st.StderrTail, want) {
			t.Errorf("status %s, stderr %q; want running, showing the lines skipped %q", st.State, st.StderrTail, want)
		}
	})

	t.Run("broken message at start", func(t *testing.T) {
		long := strings.Repeat("x", 200)
		broken := `{"jsonrpc":"2.0","id":0,"result":{"hello this is not json ` + long
		garbage := core.ServerConfig{ID: "garbage", Command: writeScript(t, "echo '"+broken+"'\nsleep 1000\n")}
		e := newEnv(t, opts)
		e.cat.Apply([]core.ServerConfig{garbage})
		testutil.Eventually(t, 30*time.Second, func() bool {
			st, _ := e.cat.ServerStatus("garbage")
			return st.State == core.StateFailed
		}, "garbage never marked failed: %+v", e.cat.Status())
		st, _ := e.cat.ServerStatus("garbage")
		// The line is quoted, cut at 80 bytes.
		quoted := fmt.Sprintf("%q…", broken[:80])
		want := "wrote a line on stdout that is not MCP (JSON-RPC): " + quoted + " before it answered initialize; " + hint + " (gave up after 2 failed starts in a row)"
		if st.LastError != want {
			t.Errorf("status error:\n got %q\nwant %q", st.LastError, want)
		}
	})

	// A message cut off at its line's end fails the call it answered at
	// once (a regression test saw that call wait, and the next one get the
	// error).
	t.Run("broken message in a call", func(t *testing.T) {
		junk := core.ServerConfig{ID: "junk", Command: writeScript(t, talker("starting", `{"jsonrpc": "2.0", "id":`))}
		// No second start: the status keeps the reason for the first.
		opts := opts
		opts.BackoffMin, opts.BackoffMax = time.Hour, time.Hour
		e := newEnv(t, opts, junk)
		_, err := e.cat.Dispatch(context.Background(), &core.Request{Kind: core.KindToolCall, Server: "junk", Name: "talk"})
		want := `unavailable: server "junk" sent an invalid answer to talk: it wrote a line on stdout that is not MCP (JSON-RPC): "{\"jsonrpc\": \"2.0\", \"id\":" (` +
			hint + "; Airlock restarts the server by itself)"
		if err == nil || err.Error() != want {
			t.Errorf("call error:\n got %v\nwant %s", err, want)
		}
		// The server is to be restarted, its status saying why.
		testutil.Eventually(t, 30*time.Second, func() bool {
			st, _ := e.cat.ServerStatus("junk")
			return st.State == core.StateRestarting
		}, "junk never restarting: %+v", e.cat.Status())
		st, _ := e.cat.ServerStatus("junk")
		if want := `wrote a line on stdout that is not MCP (JSON-RPC): "{\"jsonrpc\": \"2.0\", \"id\":"; ` + hint + " (retrying in"; !strings.HasPrefix(st.LastError, want) {
			t.Errorf("status error after the call = %q, want it to start %q", st.LastError, want)
		}
	})
}

// A stdio answer larger than Airlock reads in one message (16 MiB) fails
// its own call with the reason, and nothing else: a call in flight beside
// it and the next call are answered, and the server is not restarted (found
// by an interop test: the whole connection was reset, failing every
// agent's call in flight on that server).
func TestDownstreamAnswerTooLarge(t *testing.T) {
	getID := `sed -n 's/.*"id":\([0-9]*\).*/\1/p'`
	script := reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"big","version":"1"}}`) +
		"read initialized\n" +
		reply(`{"tools":[{"name":"talk","inputSchema":{"type":"object"}}]}`) +
		"read req1\nread req2\n" +
		"id1=$(echo \"$req1\" | " + getID + ")\nid2=$(echo \"$req2\" | " + getID + ")\n" +
		`printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"' "$id1"` + "\n" +
		fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x\n", mcp.DefaultMaxLineLength+1000) +
		`printf '"}]}}\n'` + "\n" +
		`echo '{"jsonrpc":"2.0","id":'$id2',"result":{"content":[{"type":"text","text":"said it"}]}}'` + "\n" +
		"read req3\nid3=$(echo \"$req3\" | " + getID + ")\n" +
		`echo '{"jsonrpc":"2.0","id":'$id3',"result":{"content":[{"type":"text","text":"still here"}]}}'` + "\nsleep 1000\n"
	opts := catalog.Options{BackoffMin: time.Hour, BackoffMax: time.Hour, StableAfter: time.Hour, StopGrace: 100 * time.Millisecond}
	e := newEnv(t, opts, core.ServerConfig{ID: "big", Command: writeScript(t, script)})
	type outcome struct {
		res mcp.Result
		err error
	}
	done := make(chan outcome, 2)
	for range 2 {
		go func() {
			res, err := e.cat.Dispatch(context.Background(), &core.Request{Kind: core.KindToolCall, Server: "big", Name: "talk"})
			done <- outcome{res, err}
		}()
	}
	var tooLarge, answered int
	for range 2 {
		o := <-done
		switch {
		case o.err != nil && core.ErrorCode(o.err) == core.ETooLarge && strings.Contains(o.err.Error(), "more than Airlock reads in one message from a stdio server (16 MiB)") &&
			strings.Contains(o.err.Error(), fmt.Sprintf("the answer was %d bytes", mcp.DefaultMaxLineLength+1000+len(`{"jsonrpc":"2.0","id":`)+len(`,"result":{"content":[{"type":"text","text":"`)+len(`"}]}}`)+1)):
			tooLarge++
		case o.err == nil && text(t, o.res.(*mcp.CallToolResult)) == "said it":
			answered++
		default:
			t.Errorf("a call ended with %v, %v", o.res, o.err)
		}
	}
	if tooLarge != 1 || answered != 1 {
		t.Fatalf("%d calls refused as too large, %d answered; want one of each", tooLarge, answered)
	}
	res, err := e.cat.Dispatch(context.Background(), &core.Request{Kind: core.KindToolCall, Server: "big", Name: "talk"})
	if err != nil || text(t, res.(*mcp.CallToolResult)) != "still here" {
		t.Fatalf("the next call: %v, %v; want the same server's answer", res, err)
	}
	if st, _ := e.cat.ServerStatus("big"); st.State != core.StateRunning || st.LastError != "" {
		t.Errorf("status %s (%q), want running as before", st.State, st.LastError)
	}
}

// A server with resources that does not know resources/templates/list has
// no templates, and runs (found by a regression test: it was restarted
// until it was failed).
func TestServerWithoutTemplatesList(t *testing.T) {
	script := reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{}},"serverInfo":{"name":"notemplates","version":"1"}}`) +
		"read initialized\n" +
		reply(`{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`) +
		reply(`{"resources":[{"uri":"mem://one","name":"one"}]}`) + `read req
id=$(echo "$req" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
echo '{"jsonrpc":"2.0","id":'$id',"error":{"code":-32601,"message":"Method not found"}}'
sleep 1000
`
	e := newEnv(t, catalog.Options{MaxCrashes: 2, BackoffMin: 10 * time.Millisecond}, core.ServerConfig{ID: "nt", Command: writeScript(t, script)})
	if _, ok := e.cat.Snapshot().ResourceServer("mem://one"); !ok {
		t.Errorf("the server's resource is not offered: %+v", e.cat.Status())
	}
}

func writeScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "server.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func reply(result string) string {
	return `read req
id=$(echo "$req" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
echo '{"jsonrpc":"2.0","id":'$id',"result":` + result + `}'
`
}

// A downstream server with a resource the SDK cannot take and a huge stderr
// line neither crashes the gateway nor blocks the server.

// completion/complete, resource subscriptions and the sampling and
// elicitation requests a server makes during an agent's call all pass
// through Airlock to the right session.
func TestCompletionSubscriptionsAndRelays(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	updated := make(chan string, 10)
	opts := &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updated <- req.Params.URI },
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "test-model", Role: "assistant", Content: &mcp.TextContent{Text: "42"}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	}
	sess := e.connect(t, opts)
	ctx := context.Background()

	comp, err := sess.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "test__greeting"},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "A"}})
	if err != nil || !slices.Equal(comp.Completion.Values, []string{"Ada", "Alan"}) {
		t.Errorf("completion/complete = %+v, %v; want Ada and Alan", comp, err)
	}
	if _, err := sess.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "nope"},
		Argument: mcp.CompleteParamsArgument{Name: "x"}}); err == nil || !strings.Contains(err.Error(), catalog.EUnknownPrompt) {
		t.Errorf("completion of an unknown prompt: %v", err)
	}

	// Two sessions subscribe; the server is subscribed once and both hear.
	other := e.connect(t, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		updated <- "other " + req.Params.URI
	}})
	for _, s := range []*mcp.ClientSession{sess, other} {
		if err := s.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://doc/readme"}); err != nil {
			t.Fatal(err)
		}
	}
	subs := 0
	for _, s := range e.test.Started() {
		if s == "subscribe test://doc/readme" {
			subs++
		}
	}
	if subs != 1 {
		t.Errorf("the server got %d subscriptions, want 1 for both sessions", subs)
	}
	if _, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "test__touch", Arguments: map[string]any{"uri": "test://doc/readme"}}); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for len(got) < 2 {
		select {
		case u := <-updated:
			got[u] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("resources/updated reached %v, want both sessions", got)
		}
	}
	if err := sess.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "test://doc/readme"}); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(e.test.Started(), "unsubscribe test://doc/readme") {
		t.Error("the server was unsubscribed while another session still listens")
	}
	if err := other.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "test://doc/readme"}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(e.test.Started(), "unsubscribe test://doc/readme") {
		t.Error("the server is still subscribed after the last session unsubscribed")
	}

	// Sampling and elicitation go to the client of the agent whose call
	// the server is handling, and are audited.
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "test__ask_model", Arguments: map[string]any{"question": "the answer?"}})
	if err != nil || text(t, res) != "the model said: 42" {
		t.Fatalf("a sampling request relayed = %v %s", err, text(t, res))
	}
	res, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "test__ask_user", Arguments: map[string]any{"question": "your name?"}})
	if err != nil || text(t, res) != "the user answered accept: Ada" {
		t.Fatalf("an elicitation relayed = %v %+v", err, res)
	}
	for _, kind := range []string{core.KindSampling, core.KindElicitation} {
		recs, _ := e.audit.List(core.ActivityFilter{Kind: kind})
		if len(recs) != 1 || recs[0].Agent != "tester" || recs[0].Server != "test" || recs[0].Status != core.StatusOK {
			t.Errorf("audit of %s = %+v, want one for tester's call", kind, recs)
		}
	}
	// A client that cannot sample gets a clear error, not a hang.
	plain := e.connect(t, nil)
	res, err = plain.CallTool(ctx, &mcp.CallToolParams{Name: "test__ask_model", Arguments: map[string]any{"question": "?"}})
	if err == nil && !res.IsError {
		t.Fatalf("sampling for a client without sampling succeeded: %+v", res)
	}
	if msg := fmt.Sprint(err) + text(t, res); !strings.Contains(msg, "does not support sampling") {
		t.Errorf("sampling for a client without it: %s", msg)
	}

	// Another call of the same session in flight at that server leaves no
	// doubt whose the request is (found by a new-user test: any second
	// request made sampling fail); one of another session does.
	hung, stopHang := context.WithCancel(ctx)
	hangDone := make(chan struct{})
	go func() { sess.CallTool(hung, &mcp.CallToolParams{Name: "test__hang"}); close(hangDone) }()
	testutil.Eventually(t, 10*time.Second, func() bool { return slices.Contains(e.test.Started(), "hang") }, "the hanging call never started")
	res, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "test__ask_model", Arguments: map[string]any{"question": "again?"}})
	if err != nil || text(t, res) != "the model said: 42" {
		t.Errorf("sampling with another call of the same session in flight = %v %s", err, text(t, res))
	}
	res, err = plain.CallTool(ctx, &mcp.CallToolParams{Name: "test__ask_model", Arguments: map[string]any{"question": "whose?"}})
	if msg := fmt.Sprint(err) + text(t, res); !strings.Contains(msg, catalog.ERelayUnattributed) {
		t.Errorf("sampling with another session's call in flight: %s, want %s", msg, catalog.ERelayUnattributed)
	}
	stopHang()
	<-hangDone
}

// A relayed request's answer is kept when the call of the session it was
// sent through ends first: Airlock cannot tell which of a session's calls
// a server asks for, and the answer comes back on a request of its own
// (found by an interop test: with calls in flight at once, answers the
// user had given were lost with "context canceled").
func TestRelayOutlivesTheCallItWentThrough(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	var endHang atomic.Value // func(): ends the other call in flight
	opts := &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			endHang.Load().(func())()
			return &mcp.CreateMessageResult{Model: "test-model", Role: "assistant", Content: &mcp.TextContent{Text: "42"}}, nil
		},
	}
	sess := e.connect(t, opts)
	ctx := context.Background()
	// The relay goes through one of the two calls, whichever the map gives
	// first: eight rounds make a pass by chance unlikely (1 in 256).
	for round := range 8 {
		hung, stopHang := context.WithCancel(ctx)
		hangDone := make(chan struct{})
		endHang.Store(func() { stopHang(); <-hangDone })
		started := len(slices.DeleteFunc(e.test.Started(), func(s string) bool { return s != "hang" }))
		go func() { sess.CallTool(hung, &mcp.CallToolParams{Name: "test__hang"}); close(hangDone) }()
		testutil.Eventually(t, 10*time.Second, func() bool {
			return len(slices.DeleteFunc(e.test.Started(), func(s string) bool { return s != "hang" })) > started
		}, "the hanging call never started")
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "test__ask_model", Arguments: map[string]any{"question": "still there?"}})
		if err != nil || text(t, res) != "the model said: 42" {
			t.Fatalf("round %d: sampling answered after the other call ended = %v %s", round, err, text(t, res))
		}
	}
}

// A tool's _meta, icons and display title reach the agent as the server
// lists them, and the _meta an agent sends with a call reaches the server
// (found by an interop test: all were dropped; MCP Apps keep their UI's
// resource in a tool's _meta).
func TestToolAndCallMetaPassThrough(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "meta", Version: "1"}, nil)
	tool := &mcp.Tool{Name: "show", Meta: mcp.Meta{"ui/resourceUri": "ui://show/app.html"},
		Icons:       []mcp.Icon{{Source: "https://example.com/i.png", MIMEType: "image/png"}},
		Annotations: &mcp.ToolAnnotations{Title: "Show it", ReadOnlyHint: true},
		Execution:   json.RawMessage(`{"taskSupport":"optional"}`)}
	mcp.AddTool(srv, tool, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		b, _ := json.Marshal(req.Params.Meta)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
	})
	e.cat.AddInProcess("meta", srv, false)
	e.waitRunning(t, "meta")
	sess := e.connect(t, nil)
	var listed *mcp.Tool
	testutil.Eventually(t, 10*time.Second, func() bool {
		res, err := sess.ListTools(context.Background(), nil)
		if err != nil {
			return false
		}
		for _, tl := range res.Tools {
			if tl.Name == "meta__show" {
				listed = tl
			}
		}
		return listed != nil
	}, "meta__show was never listed")
	if listed.Meta["ui/resourceUri"] != "ui://show/app.html" || len(listed.Icons) != 1 || listed.Icons[0].Source != "https://example.com/i.png" ||
		listed.Annotations == nil || listed.Annotations.Title != "Show it" || !listed.Annotations.ReadOnlyHint {
		t.Errorf("listed tool = %+v (annotations %+v), want its _meta, icon and display title", listed, listed.Annotations)
	}
	if string(listed.Execution) != `{"taskSupport":"optional"}` {
		t.Errorf("listed tool's execution = %s, want the server's {\"taskSupport\":\"optional\"} (found by an interop test: it was dropped)", listed.Execution)
	}
	params := &mcp.CallToolParams{Name: "meta__show", Meta: mcp.Meta{"example.com/req": 7.0, core.MetaCaller: map[string]any{"agentId": "someone-else"}}}
	params.SetProgressToken("mine")
	res, err := sess.CallTool(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	json.Unmarshal([]byte(text(t, res)), &got)
	if got["example.com/req"] != 7.0 {
		t.Errorf("the server got _meta %v, want the agent's example.com/req", got)
	}
	if c, _ := got[core.MetaCaller].(map[string]any); c["agentId"] != "tester" {
		t.Errorf("the caller the server was told = %v, want Airlock's (tester), never the agent's claim", got[core.MetaCaller])
	}
	if tok, ok := got["progressToken"]; ok && tok == "mine" {
		t.Errorf("the agent's own progress token reached the server: %v", got)
	}
}

// A resource a server makes during a call can be read at once, before
// Airlock has heard that the server's list changed (found by an interop
// test: server-everything's resource_link was unknown when read at once).
func TestResourceMadeByACallIsReadableAtOnce(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "maker", Version: "1"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{ListChanged: true}}})
	n := 0
	mcp.AddTool(srv, &mcp.Tool{Name: "make"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		n++
		uri := fmt.Sprintf("made://%d", n)
		srv.AddResource(&mcp.Resource{URI: uri, Name: fmt.Sprintf("made-%d", n)}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: "fresh"}}}, nil
		})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ResourceLink{URI: uri, Name: "made"}}}, nil, nil
	})
	e.cat.AddInProcess("maker", srv, false)
	e.waitRunning(t, "maker")
	sess := e.connect(t, nil)
	for range 3 {
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "maker__make"})
		if err != nil || len(res.Content) != 1 {
			t.Fatalf("make = %v %+v", err, res)
		}
		link, _ := res.Content[0].(*mcp.ResourceLink)
		if link == nil {
			t.Fatalf("make answered %+v, want a resource link", res.Content[0])
		}
		got, err := sess.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: link.URI})
		if err != nil || len(got.Contents) != 1 || got.Contents[0].Text != "fresh" {
			t.Errorf("reading %s at once = %v %+v", link.URI, err, got)
		}
	}
}

// compactAll puts every agent in compact mode and lets it call anything.
type compactAll struct{}

func (compactAll) Compact(*core.Caller) bool                             { return true }
func (compactAll) CheckBatch(*core.Caller, []core.Target) []authz.Denial { return nil }
func (compactAll) ModuleTools(_ *core.Caller, _ string, tools []core.Target) ([]core.Target, error) {
	return tools, nil
}

// A server's JSON-RPC error answer to tools/call reaches the agent as the
// same JSON-RPC error, code, message and data, as it would directly (found
// by an interop test: it became a tool error with text), and the audit
// records the call as an error of the server's.
func TestDownstreamToolCallErrorPassesThrough(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "strict", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "check", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "count must be a number", Data: json.RawMessage(`{"field":"count"}`)}
	})
	e.cat.AddInProcess("strict", srv, false)
	e.waitRunning(t, "strict")
	sess := e.connect(t, nil)
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "strict__check", Arguments: map[string]any{"count": "x"}})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) {
		t.Fatalf("tools/call = %+v, %v; want the server's JSON-RPC error", res, err)
	}
	want := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "count must be a number", Data: json.RawMessage(`{"field":"count"}`)}
	if diff := cmp.Diff(want, wire); diff != "" {
		t.Errorf("the error the agent got (-the server's +got):\n%s", diff)
	}
	recs, err := e.audit.List(core.ActivityFilter{Server: "strict", Tool: "check"})
	if err != nil || len(recs) != 1 {
		t.Fatalf("audit records of the call = %+v, %v; want one", recs, err)
	}
	if r := recs[0]; r.Status != core.StatusError || r.ErrorCode != catalog.EDownstream || !strings.Contains(r.Error, "count must be a number") {
		t.Errorf("audit record = status %q code %q error %q, want an error with code %s and the server's message", r.Status, r.ErrorCode, r.Error, catalog.EDownstream)
	}

	// Compact mode: call passes the error through as well; a batch, whose
	// answer is one result per call, tells it as that call's tool error.
	c := mcp.NewClient(&mcp.Implementation{Name: "compact-agent", Version: "1"}, nil)
	compact, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.newGateway(gateway.Options{Compact: compactAll{}}),
		HTTPClient: &http.Client{Transport: bearer{testToken, http.DefaultTransport}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { compact.Close() })
	_, err = compact.CallTool(context.Background(), &mcp.CallToolParams{Name: "call", Arguments: map[string]any{"module": "strict", "tool_name": "check", "params": map[string]any{}}})
	if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("compact call = %v, want the server's JSON-RPC error", err)
	}
	res, err = compact.CallTool(context.Background(), &mcp.CallToolParams{Name: "batch", Arguments: map[string]any{"calls": []any{
		map[string]any{"module": "strict", "tool_name": "check", "params": map[string]any{}},
		map[string]any{"module": "test", "tool_name": "echo", "params": map[string]any{"message": "still runs"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	var batch struct {
		Results []struct {
			Result struct {
				IsError bool `json:"isError"`
				Meta    struct {
					Error struct{ Code, Message string } `json:"airlock/error"`
				} `json:"_meta"`
			} `json:"result"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(text(t, res)), &batch); err != nil || len(batch.Results) != 2 {
		t.Fatalf("batch = %s (%v)", text(t, res), err)
	}
	if r := batch.Results[0].Result; !res.IsError || !r.IsError || r.Meta.Error.Code != catalog.EDownstream ||
		!strings.Contains(r.Meta.Error.Message, "count must be a number (code -32602)") || batch.Results[1].Result.IsError {
		t.Errorf("batch = %s, want the first call's tool error with code %s, the server's message and code, and the second call's answer", text(t, res), catalog.EDownstream)
	}
}

// servesAny makes srv answer resources/read for every URI that starts with
// prefix, listed or not, as a server that serves what it does not list
// does (a TypeScript or Python server whose template matcher is wider than
// RFC 6570, or one that reads any path it is asked for).
func servesAny(srv *mcp.Server, prefix string) {
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.ReadResourceParams); ok && method == "resources/read" && strings.HasPrefix(p.URI, prefix) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: p.URI, Text: "served " + p.URI}}}, nil
			}
			return next(ctx, method, req)
		}
	})
}

// httpDownstream serves srv over Streamable HTTP as a downstream server id.
func httpDownstream(t *testing.T, id string, srv *mcp.Server) core.ServerConfig {
	t.Helper()
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() {
		// Before the catalog's cleanup: its event stream is still open.
		hs.CloseClientConnections()
		hs.Close()
	})
	return core.ServerConfig{ID: id, URL: hs.URL}
}

// A URI a server serves but does not list can be read through Airlock
// (found by an interop test: such reads were refused as unknown where the
// server answered them directly): one its template matches as the server
// matches it (a character RFC 6570 does not allow in the value), and, when
// one server alone offers resources, any URI, which that server answers
// itself. With two such servers Airlock cannot tell which to ask, and the
// read is refused with -32002 as before.
func TestUnlistedResourcesReachTheirServer(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	notes := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	notes.AddResourceTemplate(&mcp.ResourceTemplate{Name: "note", URITemplate: "notes://{name}"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return nil, fmt.Errorf("the middleware answers")
	})
	servesAny(notes, "notes://")
	e.cat.AddInProcess("notes", notes, false)
	e.waitRunning(t, "notes")

	resourceServer := func(id string) *mcp.Server {
		srv := mcp.NewServer(&mcp.Implementation{Name: id, Version: "1"}, nil)
		srv.AddResource(&mcp.Resource{Name: "listed", URI: id + "://listed"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: id + "://listed", Text: "listed"}}}, nil
		})
		servesAny(srv, id+"://made/")
		return srv
	}
	hid := httpDownstream(t, "hid", resourceServer("hid"))
	e.cat.Apply([]core.ServerConfig{hid})
	e.waitRunning(t, "hid")
	sess := e.connect(t, nil)
	ctx := context.Background()
	read := func(uri string) (string, error) {
		t.Helper()
		res, err := sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return "", err
		}
		if len(res.Contents) != 1 {
			t.Fatalf("read %s = %+v", uri, res)
		}
		return res.Contents[0].Text, nil
	}
	for _, uri := range []string{"notes://Café notes.md", "hid://made/42"} {
		if got, err := read(uri); err != nil || got != "served "+uri {
			t.Errorf("read %s = %q, %v; want its server's answer", uri, got, err)
		}
	}
	// The sole server answers what it does not serve itself, as it would
	// directly: its own error, not Airlock's unknown_resource.
	if _, err := read("hid://nowhere"); err == nil || strings.Contains(err.Error(), catalog.EUnknownResource) {
		t.Errorf("read hid://nowhere = %v, want the server's own error", err)
	}

	e.cat.Apply([]core.ServerConfig{hid, httpDownstream(t, "other", resourceServer("other"))})
	e.waitRunning(t, "other")
	var wire *jsonrpc.Error
	if _, err := read("hid://made/43"); !errors.As(err, &wire) || wire.Code != pipeline.CodeResourceNotFound || !strings.Contains(err.Error(), catalog.EUnknownResource) {
		t.Errorf("read hid://made/43 with two servers of resources = %v, want %s with code %d", err, catalog.EUnknownResource, pipeline.CodeResourceNotFound)
	}
	if got, err := read("other://listed"); err != nil || got != "listed" {
		t.Errorf("read other://listed = %q, %v", got, err)
	}
}

// A server that sends the code Airlock's stdio reader uses for an answer
// too large to read (-32099) as its own error gets it passed through as
// its own, not told as Airlock's size limit (found in a review).
func TestServersOwnTooLargeCodePassesThrough(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "own", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: mcp.CodeMessageTooLarge, Message: "my own limit"}
	})
	e.cat.AddInProcess("own", srv, false)
	e.waitRunning(t, "own")
	_, err := e.connect(t, nil).CallTool(context.Background(), &mcp.CallToolParams{Name: "own__big", Arguments: map[string]any{}})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != mcp.CodeMessageTooLarge || wire.Message != "my own limit" {
		t.Fatalf("tools/call: %v; want the server's own error", err)
	}
}

// A read of a URI no server lists, refused because a server is not
// running (it may be the one that serves it), says so (found by an
// interop test: the hint to list resources did not say why).
func TestUnlistedResourceWhileAServerIsDown(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "hid", Version: "1"}, nil)
	srv.AddResource(&mcp.Resource{Name: "listed", URI: "hid://listed"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "hid://listed", Text: "listed"}}}, nil
	})
	servesAny(srv, "hid://made/")
	e.cat.Apply([]core.ServerConfig{httpDownstream(t, "hid", srv), {ID: "broken", Command: "/nonexistent/airlock-test-prog"}})
	e.waitRunning(t, "hid")
	sess := e.connect(t, nil)
	_, err := sess.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "hid://made/9"})
	if err == nil || !strings.Contains(err.Error(), catalog.EUnknownResource) || !strings.Contains(err.Error(), `server "broken" is not running`) {
		t.Errorf("read of an unlisted URI while a server is down: %v, want %s naming the server that is not running", err, catalog.EUnknownResource)
	}
}

// A server that crashed and was restarted says why it restarted: after a
// kill the Servers screen showed "1 restarts", an empty "Last error" and
// only the server's own start-up banner on stderr, so the person could not
// tell a crash from a restart they asked for, nor what ended it (found by
// a new-user test). The way it ended belongs among its stderr lines (as a
// hung server's is) or in its last error, also once it runs again.
func TestDownstreamCrashSaysWhyItRestarted(t *testing.T) {
	opts := catalog.Options{BackoffMin: 50 * time.Millisecond, BackoffMax: 200 * time.Millisecond, MaxCrashes: 3, StableAfter: time.Hour}
	e := newEnv(t, opts, testutil.EverythingServer(t, "everything"))
	testutil.Eventually(t, 30*time.Second, func() bool {
		st, _ := e.cat.ServerStatus("everything")
		return st.State == core.StateRunning && e.cat.PID("everything") != 0
	}, "everything never ran: %+v", e.cat.Status())
	pid := e.cat.PID("everything")
	syscall.Kill(pid, syscall.SIGKILL)
	testutil.Eventually(t, 30*time.Second, func() bool {
		st, _ := e.cat.ServerStatus("everything")
		return st.State == core.StateRunning && st.Restarts >= 1 && st.PID != pid
	}, "everything not restarted after kill: %+v", e.cat.Status())
	st, _ := e.cat.ServerStatus("everything")
	said := strings.ToLower(st.LastError + "\n" + strings.Join(st.StderrTail, "\n"))
	if !strings.Contains(said, "killed") && !strings.Contains(said, "exited") && !strings.Contains(said, "crash") {
		t.Errorf("after a crash and restart the status says nothing of it: last error %q, stderr %q; want how the process ended (killed by a signal)", st.LastError, st.StderrTail)
	}
}
