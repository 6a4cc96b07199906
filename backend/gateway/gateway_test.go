package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/gateway"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const testToken = "alk_test-token-0123456789abcdef"

type staticAuth struct{}

func (staticAuth) Authenticate(tok string) (string, bool) {
	if tok == testToken {
		return "tester", true
	}
	return "", false
}

// env is a running gateway over real downstream servers.
type env struct {
	sup   *gateway.Supervisor
	gw    *gateway.Gateway
	pipe  *gateway.Pipeline
	audit *store.Audit
	http  *httptest.Server
	rec   *testutil.Recorder
}

func newEnv(t *testing.T, opts gateway.SupervisorOptions, servers ...core.ServerConfig) *env {
	t.Helper()
	db := testutil.MustOpenDB(t)
	e := &env{audit: store.NewAudit(db), rec: &testutil.Recorder{}}
	e.sup = gateway.NewSupervisor("test", opts)
	e.pipe = &gateway.Pipeline{Dispatch: e.sup, Audit: gateway.NewAuditWriter(e.audit, e.rec, nil)}
	e.gw = gateway.New(e.sup, e.pipe, staticAuth{}, gateway.Options{Version: "test"})
	mux := http.NewServeMux()
	mux.Handle("/mcp", e.gw.StreamableHandler())
	mux.Handle("/sse", e.gw.SSEHandler())
	e.http = httptest.NewServer(mux)
	t.Cleanup(func() { e.http.Close(); e.sup.Close() })
	e.sup.Apply(servers)
	for _, s := range servers {
		e.waitRunning(t, s.ID)
	}
	return e
}

func (e *env) waitRunning(t *testing.T, id string) {
	t.Helper()
	testutil.Eventually(t, 60*time.Second, func() bool {
		st, ok := e.sup.ServerStatus(id)
		return ok && st.State == core.StateRunning
	}, "server %s never became running: %+v", id, e.sup.Status())
}

type bearer struct{ base http.RoundTripper }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+testToken)
	return b.base.RoundTrip(r)
}

func (e *env) connect(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, opts)
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: e.http.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{http.DefaultTransport}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect to gateway: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func TestEverythingThroughGateway(t *testing.T) {
	e := newEnv(t, gateway.SupervisorOptions{}, testutil.EverythingServer(t, "everything"))
	sess := e.connect(t, nil)
	ctx := context.Background()

	tools, err := sess.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range tools.Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"everything__echo", "everything__get-sum", "everything__get-tiny-image"} {
		if !names[want] {
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

	// Images pass through unchanged.
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

	// Structured content passes through.
	res, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "everything__get-structured-content", Arguments: map[string]any{"location": "New York"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.StructuredContent == nil {
		t.Errorf("get-structured-content lost its structured content: %+v", res)
	}

	recs, err := e.audit.List(core.ActivityFilter{Tool: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("audit has %d echo records, want 1", len(recs))
	}
	r := recs[0]
	if diff := cmp.Diff(
		core.AuditRecord{Agent: "tester", Server: "everything", Tool: "echo", Decision: core.DecisionAllow, Status: core.StatusOK},
		core.AuditRecord{Agent: r.Agent, Server: r.Server, Tool: r.Tool, Decision: r.Decision, Status: r.Status}); diff != "" {
		t.Errorf("audit record (-want +got):\n%s", diff)
	}
	if strings.Contains(r.Arguments, "sk-secret") || !strings.Contains(r.Arguments, "hello airlock") {
		t.Errorf("audit arguments = %s, want the message kept and the api_key redacted", r.Arguments)
	}
	if r.Client != "test-agent 1" {
		t.Errorf("audit client = %q, want the MCP client's own name and version", r.Client)
	}
	if r.Session == "" || r.ArgsDigest == "" {
		t.Errorf("audit record lacks session or digest: %+v", r)
	}
	if len(e.rec.Events(core.EventActivity)) == 0 {
		t.Error("no activity event emitted for the UI")
	}
}

func TestProgressPassesThrough(t *testing.T) {
	e := newEnv(t, gateway.SupervisorOptions{}, testutil.EverythingServer(t, "everything"))
	var mu sync.Mutex
	var progress []float64
	sess := e.connect(t, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, req.Params.Progress)
		mu.Unlock()
	}})
	params := &mcp.CallToolParams{Name: "everything__trigger-long-running-operation", Arguments: map[string]any{"duration": 1, "steps": 3}}
	params.SetProgressToken("my-token")
	res, err := sess.CallTool(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("long running operation failed: %s", text(t, res))
	}
	// The last notification races the reply inside the downstream client, so
	// only the ones sent while the call ran are certain to arrive.
	testutil.Eventually(t, 5*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(progress) >= 2 && progress[0] < progress[1]
	}, "got progress %v, want the downstream's progress relayed in order", progress)
}

func TestUnauthenticatedIsRefused(t *testing.T) {
	e := newEnv(t, gateway.SupervisorOptions{})
	for _, auth := range []string{"", "Bearer wrong", "Basic abc"} {
		req, _ := http.NewRequest("POST", e.http.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
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
}

func TestBadInput(t *testing.T) {
	e := newEnv(t, gateway.SupervisorOptions{}, testutil.EverythingServer(t, "everything"))
	sess := e.connect(t, nil)
	ctx := context.Background()

	// Unknown tool: a clear error, recorded, and the session keeps working.
	_, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "everything__no-such-tool"})
	if err == nil || !strings.Contains(err.Error(), "no-such-tool") {
		t.Errorf("unknown tool error = %v, want it to name the tool", err)
	}
	testutil.Eventually(t, 5*time.Second, func() bool {
		recs, _ := e.audit.List(core.ActivityFilter{Decision: core.DecisionError})
		return len(recs) == 1 && recs[0].ErrorCode == "unknown_tool"
	}, "unknown tool call not in the audit log")

	post := func(body []byte) (int, string) {
		req, _ := http.NewRequest("POST", e.http.URL+"/mcp", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	// Malformed JSON-RPC.
	if code, body := post([]byte(`{"jsonrpc":"2.0","id":1,"method":`)); code < 400 || code >= 500 {
		t.Errorf("malformed JSON: status %d body %q, want a 4xx", code, body)
	}
	// Oversized request: over the documented limit.
	big := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"%s"}}`, strings.Repeat("x", gateway.MaxRequestBytes))
	if code, _ := post([]byte(big)); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized request: status %d, want 413", code)
	}

	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "still here"}})
	if err != nil || !strings.Contains(text(t, res), "still here") {
		t.Fatalf("gateway stopped serving after bad input: %v", err)
	}
}

// writeScript writes an executable shell script and returns its path.
func writeScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "server.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDownstreamCrashRestartAndFail(t *testing.T) {
	opts := gateway.SupervisorOptions{BackoffMin: 50 * time.Millisecond, BackoffMax: 200 * time.Millisecond, MaxCrashes: 3, StableAfter: time.Hour}
	crasher := core.ServerConfig{ID: "crasher", Command: writeScript(t, "echo 'boom: cannot start' >&2\nexit 3\n")}
	e := newEnv(t, opts, testutil.EverythingServer(t, "everything"), testutil.EverythingServer(t, "other"))
	e.sup.Apply([]core.ServerConfig{testutil.EverythingServer(t, "everything"), testutil.EverythingServer(t, "other"), crasher})
	sess := e.connect(t, nil)
	ctx := context.Background()

	// A server that keeps crashing is marked failed, with its stderr kept.
	testutil.Eventually(t, 30*time.Second, func() bool {
		st, _ := e.sup.ServerStatus("crasher")
		return st.State == core.StateFailed
	}, "crasher never marked failed: %+v", e.sup.Status())
	st, _ := e.sup.ServerStatus("crasher")
	if len(st.StderrTail) == 0 || !strings.Contains(strings.Join(st.StderrTail, "\n"), "boom") {
		t.Errorf("failed server's stderr tail = %q, want the crash message", st.StderrTail)
	}

	// Kill the everything server mid-session: it is restarted and later calls succeed.
	pid := e.sup.PID("everything")
	if pid == 0 {
		t.Fatal("no pid for everything")
	}
	syscall.Kill(pid, syscall.SIGKILL)
	testutil.Eventually(t, 30*time.Second, func() bool {
		st, _ := e.sup.ServerStatus("everything")
		return st.State == core.StateRunning && st.Restarts >= 1 && st.PID != pid
	}, "everything not restarted after kill: %+v", e.sup.Status())

	// Meanwhile the other server was unaffected.
	if st, _ := e.sup.ServerStatus("other"); st.State != core.StateRunning || st.Restarts != 0 {
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
	e.sup.Apply([]core.ServerConfig{testutil.EverythingServer(t, "everything"), testutil.EverythingServer(t, "other"), crasher})
	_, err := e.sup.CallTool(ctx, "crasher", "x", nil, nil)
	if core.ErrorCode(err) != core.EUnavailable {
		t.Errorf("call to failed server: %v, want code %s", err, core.EUnavailable)
	}
}

func TestDownstreamTimeout(t *testing.T) {
	// A server that completes the handshake and lists a tool, then never answers a call.
	script := `read init
id=$(echo "$init" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
echo '{"jsonrpc":"2.0","id":'$id',"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"slow","version":"1"}}}'
read initialized
read list
id=$(echo "$list" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
echo '{"jsonrpc":"2.0","id":'$id',"result":{"tools":[{"name":"hang","inputSchema":{"type":"object"}}]}}'
while read line; do :; done
`
	slow := core.ServerConfig{ID: "slow", Command: writeScript(t, script)}
	e := newEnv(t, gateway.SupervisorOptions{CallTimeout: 300 * time.Millisecond}, slow, testutil.EverythingServer(t, "everything"))
	sess := e.connect(t, nil)
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow__hang"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(text(t, res), "[timeout]") {
		t.Errorf("call to a hanging server = %q (isError %v), want a timeout tool error", text(t, res), res.IsError)
	}
	res, err = sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "ok"}})
	if err != nil || res.IsError {
		t.Errorf("other server stopped working after a timeout: %v", err)
	}
}

func TestListChangedReachesSessions(t *testing.T) {
	e := newEnv(t, gateway.SupervisorOptions{}, testutil.EverythingServer(t, "everything"))
	changed := make(chan struct{}, 10)
	sess := e.connect(t, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	// Adding a server changes every session's view.
	e.sup.Apply([]core.ServerConfig{testutil.EverythingServer(t, "everything"), testutil.EverythingServer(t, "second")})
	select {
	case <-changed:
	case <-time.After(60 * time.Second):
		t.Fatal("no notifications/tools/list_changed after a server was added")
	}
	testutil.Eventually(t, 30*time.Second, func() bool {
		tools, err := sess.ListTools(context.Background(), nil)
		if err != nil {
			return false
		}
		for _, tl := range tools.Tools {
			if tl.Name == "second__echo" {
				return true
			}
		}
		return false
	}, "second__echo never appeared in tools/list")
}

func TestPromptsResourcesAndLogsPassThrough(t *testing.T) {
	e := newEnv(t, gateway.SupervisorOptions{}, testutil.EverythingServer(t, "everything"))
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
	r := res.Resources[0]
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

func TestCancellationReachesDownstream(t *testing.T) {
	e := newEnv(t, gateway.SupervisorOptions{}, testutil.EverythingServer(t, "everything"))
	sess := e.connect(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "everything__trigger-long-running-operation", Arguments: map[string]any{"duration": 30, "steps": 30}})
		errc <- err
	}()
	time.Sleep(500 * time.Millisecond)
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("a cancelled call returned no error")
	}
	// The gateway's forwarded call ends too (it does not run on for 30 s),
	// and the audit log says it was cancelled.
	testutil.Eventually(t, 10*time.Second, func() bool {
		recs, _ := e.audit.List(core.ActivityFilter{Tool: "trigger-long-running-operation"})
		return len(recs) == 1 && recs[0].ErrorCode == "cancelled"
	}, "the cancelled call was not recorded as cancelled")
}

// reply is a shell snippet that reads one request and answers it with result.
func reply(result string) string {
	return `read req
id=$(echo "$req" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
echo '{"jsonrpc":"2.0","id":'$id',"result":` + result + `}'
`
}

// A downstream server with a resource the SDK cannot take and a huge stderr
// line neither crashes the gateway nor blocks the server.
func TestBadDownstreamDefinitionsAreSkipped(t *testing.T) {
	script := `head -c 300000 /dev/zero | tr '\0' 'x' >&2; echo >&2; echo "after the long line" >&2
` + reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{}},"serverInfo":{"name":"odd","version":"1"}}`) +
		"read initialized\n" +
		reply(`{"tools":[{"name":"ok","inputSchema":{"type":"object"}},{"name":"bad-schema","inputSchema":{"type":"string"}}]}`) +
		reply(`{"resources":[{"uri":"file:///%zz","name":"broken"},{"uri":"file:///fine.txt","name":"fine"}]}`) +
		reply(`{"resourceTemplates":[{"uriTemplate":"{{{","name":"broken-template"}]}`) +
		"while read line; do :; done\n"
	odd := core.ServerConfig{ID: "odd", Command: writeScript(t, script)}
	e := newEnv(t, gateway.SupervisorOptions{}, odd, testutil.EverythingServer(t, "everything"))
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
	if !slices.Contains(uris, "file:///fine.txt") || slices.Contains(uris, "file:///%zz") {
		t.Errorf("resources = %v, want the fine one and not the broken one", uris)
	}
	st, _ := e.sup.ServerStatus("odd")
	tail := strings.Join(st.StderrTail, "\n")
	if st.State != core.StateRunning || !strings.Contains(tail, "after the long line") || !strings.Contains(tail, "(cut)") {
		t.Errorf("odd server: state %s, stderr tail %.200q; want running, the long line cut and the next one kept", st.State, tail)
	}
}

// Downstream servers reached over Streamable HTTP and over legacy SSE work
// like stdio ones.
func TestHTTPAndSSEDownstreams(t *testing.T) {
	remote := core.ServerConfig{ID: "remote", URL: testutil.EverythingHTTP(t, "streamableHttp") + "/mcp"}
	legacy := core.ServerConfig{ID: "legacy", URL: testutil.EverythingHTTP(t, "sse") + "/sse", Type: "sse"}
	e := newEnv(t, gateway.SupervisorOptions{}, remote, legacy)
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
		if st, _ := e.sup.ServerStatus(id); st.Transport != map[string]string{"remote": "http", "legacy": "sse"}[id] {
			t.Errorf("%s transport = %q", id, st.Transport)
		}
	}
}

// A remote server that goes away gives a clear "unavailable" tool error at
// once, and calls work again once it is back.
func TestHTTPDownstreamGoesAwayAndComesBack(t *testing.T) {
	base, proc := testutil.EverythingHTTPProcess(t, "streamableHttp", 0)
	e := newEnv(t, gateway.SupervisorOptions{BackoffMax: 500 * time.Millisecond}, core.ServerConfig{ID: "remote", URL: base + "/mcp"})
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
	}, "calls never worked again after the server came back: %+v", e.sup.Status())
}
