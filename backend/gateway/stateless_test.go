package gateway_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newRevision is the MCP revision without sessions (SEP-2575).
const newRevision = "2026-07-28"

// connectNew connects a client of the 2026-07-28 revision with token (none
// when empty), with the receiving middleware mw, and fails the test unless
// that revision is the one agreed on.
func (e *env) connectNew(t *testing.T, token string, opts *mcp.ClientOptions, mw ...mcp.Middleware) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "new-agent", Version: "2"}, opts)
	c.AddReceivingMiddleware(mw...)
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: e.http.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: newRevision})
	if err != nil {
		t.Fatalf("connect to gateway with %s: %v", newRevision, err)
	}
	t.Cleanup(func() { sess.Close() })
	if got := sess.InitializeResult().ProtocolVersion; got != newRevision || sess.ID() != "" {
		t.Fatalf("agreed on revision %q with session id %q, want %s without a session", got, sess.ID(), newRevision)
	}
	return sess
}

// ackTo tells ch of every subscriptions/listen stream Airlock acknowledged:
// from then on, the stream hears what it asked for.
func ackTo(ch chan<- string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				ch <- method
			}
			return next(ctx, method, req)
		}
	}
}

// receive returns the next value from ch; the bound only keeps a broken
// test from hanging.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s", what)
	}
	var zero T
	return zero
}

// audited waits for the audit records filter selects to satisfy ok.
func (e *env) audited(t *testing.T, filter core.ActivityFilter, ok func([]core.AuditRecord) bool, what string) []core.AuditRecord {
	t.Helper()
	var recs []core.AuditRecord
	testutil.Eventually(t, 10*time.Second, func() bool {
		recs, _ = e.audit.List(filter)
		return ok(recs)
	}, "%s: audit has %+v", what, &recs)
	return recs
}

// An agent speaking the 2026-07-28 revision does through Airlock what a
// 2025-11-25 agent does: list and call tools, prompts and resources,
// complete, get logs and progress on its requests, cancel, hear
// list_changed and resources/updated (subscriptions/listen), and answer a
// downstream server's sampling and elicitation requests, which reach it as
// input requests (SEP-2322) after passing the pipeline.
func TestNewRevisionAgentDoesEverything(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	logs := make(chan *mcp.LoggingMessageParams, 10)
	progress := make(chan float64, 10)
	changed := make(chan string, 10)
	updated := make(chan string, 10)
	acked := make(chan string, 10)
	sess := e.connectNew(t, testToken, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) { logs <- req.Params },
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- req.Params.Progress
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- "tools" },
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updated <- req.Params.URI },
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "test-model", Role: "assistant", Content: &mcp.TextContent{Text: "42"}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	}, ackTo(acked))
	receive(t, acked, "acknowledgement of the list_changed stream the client opens when it connects")
	ctx := context.Background()

	t.Run("tools", func(t *testing.T) {
		if names := toolNames(t, sess); !slices.Contains(names, "test__echo") || !slices.Contains(names, "test__ask_model") {
			t.Fatalf("tools/list = %v, want the test server's tools", names)
		}
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "test__echo", Arguments: map[string]any{"message": "new revision"}})
		if err != nil || text(t, res) != "Echo: new revision" {
			t.Fatalf("tools/call = %v, %+v", err, res)
		}
		res, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "test__structured", Arguments: map[string]any{"city": "Oslo"}})
		if err != nil || res.IsError || res.StructuredContent == nil {
			t.Fatalf("structured content = %v, %+v", err, res)
		}
		recs := e.audited(t, core.ActivityFilter{Tool: "echo"}, func(r []core.AuditRecord) bool { return len(r) == 1 && r[0].Status == core.StatusOK }, "the call")
		got := []string{recs[0].Agent, recs[0].Session, recs[0].Client, recs[0].ClientVersion, recs[0].Server}
		if diff := cmp.Diff([]string{"tester", "", "new-agent", "2", "test"}, got); diff != "" {
			t.Errorf("audit record (agent, session, client, version, server) (-want +got):\n%s", diff)
		}
	})

	t.Run("prompts, resources, completion", func(t *testing.T) {
		prompts, err := sess.ListPrompts(ctx, nil)
		if err != nil || len(prompts.Prompts) == 0 || prompts.Prompts[0].Name != "test__greeting" {
			t.Fatalf("prompts/list = %v, %+v", err, prompts)
		}
		p, err := sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test__greeting", Arguments: map[string]string{"name": "Ada"}})
		if err != nil || len(p.Messages) != 1 || p.Messages[0].Content.(*mcp.TextContent).Text != "Hello, Ada" {
			t.Fatalf("prompts/get = %v, %+v", err, p)
		}
		rs, err := sess.ListResources(ctx, nil)
		if err != nil || len(rs.Resources) != 1 || rs.Resources[0].URI != "test://doc/readme" {
			t.Fatalf("resources/list = %v, %+v", err, rs)
		}
		ts, err := sess.ListResourceTemplates(ctx, nil)
		if err != nil || len(ts.ResourceTemplates) != 1 {
			t.Fatalf("resources/templates/list = %v, %+v", err, ts)
		}
		for uri, want := range map[string]string{"test://doc/readme": "read me", "test://item/7": "item test://item/7"} {
			r, err := sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != want {
				t.Errorf("resources/read %s = %v, %+v; want %q", uri, err, r, want)
			}
		}
		comp, err := sess.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "test__greeting"},
			Argument: mcp.CompleteParamsArgument{Name: "name", Value: "A"}})
		if err != nil || !slices.Equal(comp.Completion.Values, []string{"Ada", "Alan"}) {
			t.Errorf("completion/complete = %v, %+v; want Ada and Alan", err, comp)
		}
	})

	t.Run("logs and progress on the request", func(t *testing.T) {
		// Logs travel on the response to a request, at the level the
		// request asked for in _meta (logging/setLevel is gone).
		notifier := newNotifier()
		var once sync.Once
		release := func() { once.Do(func() { close(notifier.release) }) }
		t.Cleanup(release) // a failed check does not leave the call held until its timeout
		e.cat.AddInProcess("notifier", notifier.Server, false)
		e.waitRunning(t, "notifier")
		params := &mcp.CallToolParams{Meta: mcp.Meta{mcp.MetaKeyLogLevel: "info"}, Name: "notifier__notify"}
		params.SetProgressToken("p-1")
		done := make(chan *mcp.CallToolResult, 1)
		go func() {
			res, _ := sess.CallTool(ctx, params)
			done <- res
		}()
		l := receive(t, logs, "log message of the downstream server")
		if l.Data != "shown" || l.Logger != "notifier/probe" {
			t.Errorf("first log message = %+v, want the info one (\"shown\", not the debug one before it), from logger notifier/probe", l)
		}
		if got := receive(t, progress, "progress notification"); got != 1 {
			t.Errorf("progress = %v, want 1", got)
		}
		release()
		if res := receive(t, done, "the call's result"); res == nil || text(t, res) != "released" {
			t.Errorf("notify = %+v, want released", res)
		}
	})

	t.Run("cancellation reaches the source", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() {
			_, err := sess.CallTool(cctx, &mcp.CallToolParams{Name: "test__hang"})
			errc <- err
		}()
		testutil.Eventually(t, 10*time.Second, func() bool { return slices.Contains(e.test.Started(), "hang") }, "the call never reached the server")
		cancel()
		if err := receive(t, errc, "end of the cancelled call"); err == nil {
			t.Fatal("a cancelled call returned no error")
		}
		e.audited(t, core.ActivityFilter{Tool: "hang"}, func(r []core.AuditRecord) bool { return len(r) == 1 && r[0].ErrorCode == pipeline.ECancelled },
			"the cancelled call recorded as cancelled")
	})

	t.Run("sampling and elicitation as input requests", func(t *testing.T) {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "test__ask_model", Arguments: map[string]any{"question": "the answer?"}})
		if err != nil || text(t, res) != "the model said: 42" {
			t.Fatalf("a sampling request relayed = %v %+v", err, res)
		}
		res, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "test__ask_user", Arguments: map[string]any{"question": "your name?"}})
		if err != nil || text(t, res) != "the user answered accept: Ada" {
			t.Fatalf("an elicitation relayed = %v %+v", err, res)
		}
		for _, kind := range []string{core.KindSampling, core.KindElicitation} {
			e.audited(t, core.ActivityFilter{Kind: kind}, func(r []core.AuditRecord) bool {
				return len(r) == 1 && r[0].Agent == "tester" && r[0].Server == "test" && r[0].Status == core.StatusOK
			}, kind+" audited for tester's call")
		}
	})

	t.Run("resources/updated through subscriptions/listen", func(t *testing.T) {
		legacy := e.connect(t, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			updated <- "legacy " + req.Params.URI
		}})
		if err := legacy.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://doc/readme"}); err != nil {
			t.Fatal(err)
		}
		if err := sess.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://doc/readme"}); err != nil {
			t.Fatal(err)
		}
		receive(t, acked, "acknowledgement of the resource subscription")
		if n := count(e.test.Started(), "subscribe test://doc/readme"); n != 1 {
			t.Errorf("the server got %d subscriptions, want 1 for both agents", n)
		}
		if _, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "test__touch", Arguments: map[string]any{"uri": "test://doc/readme"}}); err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{receive(t, updated, "resources/updated"): true, receive(t, updated, "resources/updated"): true}
		if want := map[string]bool{"test://doc/readme": true, "legacy test://doc/readme": true}; !cmp.Equal(want, got) {
			t.Errorf("resources/updated reached %v, want %v", got, want)
		}
		sess.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "test://doc/readme"})
		legacy.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "test://doc/readme"})
		testutil.Eventually(t, 10*time.Second, func() bool { return slices.Contains(e.test.Started(), "unsubscribe test://doc/readme") },
			"the server is still subscribed after both agents unsubscribed")
	})

	t.Run("list_changed through subscriptions/listen", func(t *testing.T) {
		e.cat.AddInProcess("second", testutil.NewTestServer().Server, false)
		receive(t, changed, "notifications/tools/list_changed after a server was added")
		testutil.Eventually(t, 10*time.Second, func() bool { return slices.Contains(toolNames(t, sess), "second__echo") },
			"second__echo never listed")
	})
}

// notifier is a downstream server whose tool notify sends a debug and an
// info log message and a progress notification, then waits until the test
// releases it: what it sends arrives while the agent's request is open.
type notifier struct {
	*mcp.Server
	release chan struct{}
}

func newNotifier() *notifier {
	n := &notifier{Server: mcp.NewServer(&mcp.Implementation{Name: "notifier", Version: "1"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}}), release: make(chan struct{})}
	mcp.AddTool(n.Server, &mcp.Tool{Name: "notify"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "debug", Logger: "probe", Data: "hidden"})
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "probe", Data: "shown"})
		if tok := req.Params.GetProgressToken(); tok != nil {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 1})
		}
		select {
		case <-n.release:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil, nil
	})
	return n
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// askRelays asks a person about every relayed request; the rest runs.
type askRelays struct{}

func (askRelays) Decide(r *core.Request) core.Verdict {
	if r.Kind == core.KindSampling || r.Kind == core.KindElicitation {
		return core.Verdict{Outcome: core.Ask, By: "test", Reason: "relayed requests ask"}
	}
	return core.Verdict{Outcome: core.Allow, By: "test", Reason: "tests allow calls"}
}

// person approves sampling and declines everything else, and remembers
// what it was asked.
type person struct {
	mu    sync.Mutex
	asked []string
}

func (p *person) Hold(_ context.Context, r *core.Request, _ core.Verdict, _ int64) (core.ApprovalOutcome, error) {
	p.mu.Lock()
	p.asked = append(p.asked, r.Kind+" for "+r.Caller.AgentID)
	p.mu.Unlock()
	if r.Kind == core.KindSampling {
		return core.ApprovalOutcome{Approved: true, Decision: core.DecisionApproved, By: "person"}, nil
	}
	return core.ApprovalOutcome{Decision: core.DecisionDeclined, By: "person", Reason: "not now"}, nil
}

// The input requests of a 2026-07-28 agent pass the pipeline like a
// 2025-11-25 agent's relayed requests: the rules may ask, and a person's
// "no" reaches the server, never the agent's client.
func TestNewRevisionRelaysPassThePipeline(t *testing.T) {
	who := &person{}
	e := newEnvWith(t, askRelays{}, who, catalog.Options{})
	elicited := make(chan string, 1)
	sess := e.connectNew(t, testToken, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "approved"}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			elicited <- req.Params.Message
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "x"}}, nil
		},
	})
	ctx := context.Background()
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "test__ask_model", Arguments: map[string]any{"question": "?"}})
	if err != nil || text(t, res) != "the model said: approved" {
		t.Fatalf("an approved sampling request = %v %+v", err, res)
	}
	res, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "test__ask_user", Arguments: map[string]any{"question": "?"}})
	if err != nil || !res.IsError || !strings.Contains(text(t, res), "declined by person") {
		t.Fatalf("a declined elicitation = %v %+v, want the server's error saying a person declined", err, res)
	}
	select {
	case m := <-elicited:
		t.Errorf("the declined elicitation reached the client: %q", m)
	default:
	}
	who.mu.Lock()
	asked := who.asked
	who.mu.Unlock()
	if diff := cmp.Diff([]string{core.KindSampling + " for tester", core.KindElicitation + " for tester"}, asked); diff != "" {
		t.Errorf("the person was asked (-want +got):\n%s", diff)
	}
	e.audited(t, core.ActivityFilter{Kind: core.KindElicitation}, func(r []core.AuditRecord) bool {
		return len(r) == 1 && r[0].Decision == core.DecisionDeclined
	}, "the declined elicitation")
}

// Without sessions every request is identified by its own credential. A
// call waiting for the agent's answers belongs to the credential that
// started it: a retry with another credential or none is refused and
// audited, and the call stays its owner's; a requestState is good for one
// retry; a caller that may not call any more (suspended) gets its retry
// refused and the call cancelled.
func TestNewRevisionIdentityPerRequest(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	manual := &mcp.ClientOptions{
		MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil },
	}
	tester := e.connectNew(t, testToken, manual)
	other := e.connectNew(t, otherToken, manual)
	nobody := e.connectNew(t, "", manual)
	ctx := context.Background()

	for _, c := range []struct {
		name string
		sess *mcp.ClientSession
		want string
	}{
		{"tester", tester, "caller: tester session "},
		{"other", other, "caller: other session "},
		{"nobody", nobody, "Airlock: this request needs an agent identity [unauthorized]\nHint: connect with a token"},
	} {
		res, err := c.sess.CallTool(ctx, &mcp.CallToolParams{Name: "test__whoami"})
		if err != nil || text(t, res) != c.want {
			t.Errorf("whoami as %s = %v %q, want %q", c.name, err, text(t, res), c.want)
		}
	}

	askErr := func(sess *mcp.ClientSession, state string, answers mcp.InputResponseMap) (*mcp.CallToolResult, error) {
		return sess.CallTool(ctx, &mcp.CallToolParams{Name: "test__ask_user", Arguments: map[string]any{"question": "name?"},
			InputResponses: answers, RequestState: state})
	}
	ask := func(sess *mcp.ClientSession, state string, answers mcp.InputResponseMap) *mcp.CallToolResult {
		t.Helper()
		res, err := askErr(sess, state, answers)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// A retry whose requestState continues no call of its caller gets a
	// JSON-RPC error, invalid params, with the reason code (SEP-2322; a
	// tool error would read as the tool's answer).
	stateRefused := func(who string, res *mcp.CallToolResult, err error, code string) {
		t.Helper()
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpc.Message, "["+code+"]") {
			t.Errorf("%s: %v (result %+v), want a JSON-RPC error -32602 naming %s", who, err, res, code)
		}
	}
	first := ask(tester, "", nil)
	if !first.NeedsInput() || len(first.InputRequests) != 1 || first.RequestState == "" {
		t.Fatalf("a call that needs the user = %+v, want input_required with one input request and a requestState", first)
	}
	var id string
	for id = range first.InputRequests {
	}
	if p, ok := first.InputRequests[id].(*mcp.ElicitParams); !ok || p.Message != "name?" {
		t.Fatalf("input request = %#v, want the server's elicitation", first.InputRequests[id])
	}
	mallory := mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Mallory"}}}
	for _, c := range []struct {
		name string
		sess *mcp.ClientSession
	}{{"other", other}, {"nobody", nobody}} {
		res, err := askErr(c.sess, first.RequestState, mallory)
		stateRefused(c.name+" answering tester's call", res, err, core.EForbidden)
	}
	recs := e.audited(t, core.ActivityFilter{Server: "test", Tool: "ask_user", Decision: core.DecisionDenied}, func(r []core.AuditRecord) bool { return len(r) == 2 },
		"the two refused answers")
	for _, r := range recs {
		if r.ErrorCode != core.EForbidden || r.Server != "test" || r.Tool != "ask_user" || r.Agent == "tester" {
			t.Errorf("audit of a refused answer = %+v, want forbidden, for test / ask_user (as its other records), not by tester", r)
		}
	}
	// The state continues that call of that tool only (found in a security
	// review: another tool's name was taken, and audited as that tool).
	other2, err := tester.CallTool(ctx, &mcp.CallToolParams{Name: "test__echo", Arguments: map[string]any{"message": "x"},
		InputResponses: mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}}, RequestState: first.RequestState})
	stateRefused("tester's requestState on another tool", other2, err, "unknown_request_state")
	res := ask(tester, first.RequestState, mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}})
	if text(t, res) != "the user answered accept: Ada" {
		t.Fatalf("the owner's answer = %+v, want the call's result", res)
	}
	res, err = askErr(tester, first.RequestState, mallory)
	stateRefused("a requestState used twice", res, err, "unknown_request_state")

	// A caller suspended while its call waited.
	second := ask(tester, "", nil)
	if !second.NeedsInput() {
		t.Fatalf("second call = %+v, want input_required", second)
	}
	e.ids.suspend("tester")
	for id = range second.InputRequests {
	}
	if res := ask(tester, second.RequestState, mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "cancel"}}); errorCode(res) != core.EForbidden {
		t.Errorf("a suspended agent's answer: %q, want %s", text(t, res), core.EForbidden)
	}
	e.audited(t, core.ActivityFilter{Tool: "ask_user"}, func(r []core.AuditRecord) bool {
		return slices.ContainsFunc(r, func(r core.AuditRecord) bool { return r.ErrorCode == pipeline.ECancelled })
	}, "the suspended agent's call cancelled")
}

// A request of the new revision cannot reach a 2025-11-25 session of
// another credential by naming it.
func TestNewRevisionCannotUseAnothersSession(t *testing.T) {
	e := newEnv(t, catalog.Options{})
	owner := e.connect(t, nil)
	status, _ := e.post(t, otherToken, map[string]string{"Mcp-Session-Id": owner.ID(), "Mcp-Protocol-Version": newRevision},
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test__echo","arguments":{"message":"hijack"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if status != http.StatusForbidden {
		t.Errorf("status %d, want 403", status)
	}
	if slices.Contains(e.test.Started(), "echo") {
		t.Error("the hijacked call ran")
	}
}
