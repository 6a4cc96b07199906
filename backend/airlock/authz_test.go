package airlock_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// team is an Airlock with two in-process servers ("everything", "work"),
// a role "readers" granted only "everything", and agents alice (readers)
// and bob (the default role, which grants nothing).
type team struct {
	in          *airlock.Instance
	everything  *testutil.TestServer
	work        *testutil.TestServer
	alice, bob  authz.CreatedAgent
	projectName string
}

func newTeam(t *testing.T) *team {
	t.Helper()
	tm := &team{everything: testutil.NewTestServer(), work: testutil.NewTestServer(), projectName: "apollo"}
	tm.in = startWith(t, airlock.Options{DataDir: t.TempDir(), InProcess: map[string]*mcp.Server{"everything": tm.everything.Server, "work": tm.work.Server}})
	allowAll(t, tm.in)
	if _, err := tm.in.API.Agents.CreateRole(authz.RoleInput{Name: "readers", Servers: []string{"everything"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tm.in.API.Agents.CreateProject(tm.projectName, "the test project"); err != nil {
		t.Fatal(err)
	}
	var err error
	if tm.alice, err = tm.in.API.Agents.Create(authz.AgentInput{Name: "alice", Kind: authz.KindWorker, Role: "readers", Projects: []string{tm.projectName}}); err != nil {
		t.Fatal(err)
	}
	if tm.bob, err = tm.in.API.Agents.Create(authz.AgentInput{Name: "bob", Kind: authz.KindWorker, Projects: []string{tm.projectName}}); err != nil {
		t.Fatal(err)
	}
	return tm
}

// connectWith opens an MCP session with token ("" for none) at url's query.
func (tm *team) connectWith(t *testing.T, token, query string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, opts)
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: tm.in.Info.MCPURL + query, HTTPClient: &http.Client{Transport: bearer{token}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func names(t *testing.T, sess *mcp.ClientSession) []string {
	t.Helper()
	res, err := sess.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	return out
}

func code(res *mcp.CallToolResult) string {
	e, _ := res.Meta["airlock/error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func call(t *testing.T, sess *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// Two agents with different roles, connected at once, see different tools;
// a tool an agent cannot see, called by name, is refused for the reason it
// was hidden, with a hint that names the setting.
func TestTwoAgentsSeeDifferentTools(t *testing.T) {
	tm := newTeam(t)
	alice := tm.connectWith(t, tm.alice.Token, "", nil)
	bob := tm.connectWith(t, tm.bob.Token, "", nil)
	a, b := names(t, alice), names(t, bob)
	if !slices.Contains(a, "everything__echo") || slices.Contains(a, "work__echo") {
		t.Errorf("alice (readers) sees %v, want everything__* and not work__*", a)
	}
	if slices.ContainsFunc(b, func(n string) bool { return strings.Contains(n, "__") }) {
		t.Errorf("bob (no grants) sees downstream tools: %v", b)
	}
	for _, own := range []string{"help", "logout"} {
		if !slices.Contains(a, own) || !slices.Contains(b, own) {
			t.Errorf("%s is missing: alice %v, bob %v", own, a, b)
		}
	}
	res := call(t, bob, "everything__echo", map[string]any{"message": "x"})
	if !res.IsError || code(res) != "not_subscribed" || !strings.Contains(textOf(res), "#/agents/") {
		t.Errorf("bob calling everything__echo = %q (code %q), want not_subscribed with a link to the setting", textOf(res), code(res))
	}
	if res := call(t, alice, "everything__echo", map[string]any{"message": "hi"}); res.IsError {
		t.Errorf("alice's granted call failed: %s", textOf(res))
	}
	if got := tm.everything.Started(); !slices.Equal(got, []string{"echo"}) {
		t.Errorf("the server ran %v, want only alice's echo", got)
	}
	// help agrees with what each may call.
	// A misspelt argument is refused, naming the right one.
	if res := call(t, bob, "help", map[string]any{"tool": "echo"}); !res.IsError || !strings.Contains(textOf(res), "tool_name") {
		t.Errorf("help with a misspelt argument: %s", textOf(res))
	}
	var listing authz.HelpListing
	res = call(t, bob, "help", nil)
	if err := json.Unmarshal([]byte(textOf(res)), &listing); err != nil {
		t.Fatalf("help: %v %s", err, textOf(res))
	}
	if listing.Context.AgentID != tm.bob.Agent.ID {
		t.Errorf("help context = %+v, want bob", listing.Context)
	}
}

// Suspending an agent in the UI cuts it off within one call: its sessions
// get list_changed and lose their tools, its next call is refused, and a
// new connection is refused at the door (and recorded).
func TestSuspendCutsOffAtOnce(t *testing.T) {
	tm := newTeam(t)
	changed := make(chan struct{}, 10)
	alice := tm.connectWith(t, tm.alice.Token, "", &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	if res := call(t, alice, "everything__echo", map[string]any{"message": "before"}); res.IsError {
		t.Fatal(textOf(res))
	}
	if _, err := tm.in.API.Agents.Suspend(tm.alice.Agent.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no list_changed after the agent was suspended")
	}
	// On the session it had, the refusal is a tool error with the reason
	// code: the session lives on (an HTTP 403 made the client give it up).
	res, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "after"}})
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "suspended") {
		t.Fatalf("a suspended agent's call: %v %+v, want a tool error with code suspended", err, res)
	}
	if got := names(t, alice); slices.Contains(got, "everything__echo") {
		t.Errorf("a suspended agent lists %v", got)
	}
	req, _ := http.NewRequest("POST", tm.in.Info.MCPURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	req.Header.Set("Authorization", "Bearer "+tm.alice.Token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body core.Error
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || body.Code != "suspended" {
		t.Errorf("a new connection of a suspended agent: %d %+v, want 403 suspended", resp.StatusCode, body)
	}
	testutil.Eventually(t, 5*time.Second, func() bool {
		recs, _ := tm.in.API.Activity.List(core.ActivityFilter{Agent: "alice", Decision: core.DecisionDenied})
		return len(recs) >= 1
	}, "the suspended agent's refused requests are not in Activity")
	if _, err := tm.in.API.Agents.Resume(tm.alice.Agent.ID); err != nil {
		t.Fatal(err)
	}
	// Resumed, the same session works again.
	if res := call(t, alice, "everything__echo", map[string]any{"message": "same session"}); res.IsError {
		t.Errorf("after resume, on the session it had: %s", textOf(res))
	}
	again := tm.connectWith(t, tm.alice.Token, "", nil)
	if res := call(t, again, "everything__echo", map[string]any{"message": "back"}); res.IsError {
		t.Errorf("after resume: %s", textOf(res))
	}
}

// TestSuspendAndResumeSessionless: a client of the sessionless revision
// (2026-07-28, the Go SDK's default) that was working when its agent was
// suspended gets tool errors with code suspended, not HTTP 403 (on which
// the client closes for good), and works again after resume without
// reconnecting (found by a new-user test).
func TestSuspendAndResumeSessionless(t *testing.T) {
	tm := newTeam(t)
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	alice, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: tm.in.Info.MCPURL, HTTPClient: &http.Client{Transport: bearer{tm.alice.Token}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { alice.Close() })
	if alice.ID() != "" {
		t.Fatalf("the client opened session %q; want the sessionless revision", alice.ID())
	}
	if res := call(t, alice, "everything__echo", map[string]any{"message": "before"}); res.IsError {
		t.Fatal(textOf(res))
	}
	if _, err := tm.in.API.Agents.Suspend(tm.alice.Agent.ID); err != nil {
		t.Fatal(err)
	}
	res, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "after"}})
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "suspended") {
		t.Fatalf("a suspended agent's call: %v %+v, want a tool error with code suspended", err, res)
	}
	if _, err := tm.in.API.Agents.Resume(tm.alice.Agent.ID); err != nil {
		t.Fatal(err)
	}
	if res := call(t, alice, "everything__echo", map[string]any{"message": "same client"}); res.IsError {
		t.Errorf("after resume, with the same client: %s", textOf(res))
	}
}

// authenticate within a connection changes who the session is (seed 000):
// the list follows at once, and logout ends only that session.
func TestAuthenticateWithinAConnection(t *testing.T) {
	tm := newTeam(t)
	changed := make(chan struct{}, 10)
	anon := tm.connectWith(t, "", "", &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	if got := names(t, anon); !slices.Contains(got, "authenticate") || !slices.Contains(got, "help") || slices.Contains(got, "everything__echo") {
		t.Fatalf("an unauthenticated session sees %v, want authenticate and help only", got)
	}
	res := call(t, anon, "authenticate", map[string]any{"agent_id": tm.alice.Agent.ID, "passkey": "wrong", "project_id": tm.projectName, "purpose": "task"})
	if !res.IsError || !strings.Contains(textOf(res), "Invalid agent_id or passkey") {
		t.Errorf("a wrong passkey: %s", textOf(res))
	}
	res = call(t, anon, "authenticate", map[string]any{"agent_id": tm.alice.Agent.ID, "passkey": tm.alice.Passkey, "project_id": tm.projectName, "purpose": "chat"})
	var auth authz.AuthenticateResult
	if res.IsError || json.Unmarshal([]byte(textOf(res)), &auth) != nil || !auth.Success || !auth.Bound || auth.Purpose != "chat" {
		t.Fatalf("authenticate = %s", textOf(res))
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no list_changed after authenticate")
	}
	if got := names(t, anon); !slices.Contains(got, "everything__echo") {
		t.Errorf("after authenticate the session sees %v, want alice's tools", got)
	}
	if res := call(t, anon, "everything__whoami", nil); !strings.HasPrefix(textOf(res), "caller: "+tm.alice.Agent.ID) {
		t.Errorf("whoami after authenticate = %q", textOf(res))
	}
	// The session token also works as a bearer token elsewhere.
	other := tm.connectWith(t, auth.SessionToken, "", nil)
	if res := call(t, other, "everything__echo", map[string]any{"message": "via the session token"}); res.IsError {
		t.Errorf("the session token as a bearer token: %s", textOf(res))
	}
	if res := call(t, anon, "logout", nil); res.IsError {
		t.Fatalf("logout: %s", textOf(res))
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return !slices.Contains(names(t, anon), "everything__echo") },
		"after logout the session still sees alice's tools")
}

// Another agent's credential cannot use a session (to call tools in it,
// ride its rules, or end it); the owner is unaffected.
func TestAnotherAgentCannotUseASession(t *testing.T) {
	tm := newTeam(t)
	alice := tm.connectWith(t, tm.alice.Token, "", nil)
	req, _ := http.NewRequest("POST", tm.in.Info.MCPURL, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"everything__echo","arguments":{"message":"as alice"}}}`))
	req.Header.Set("Authorization", "Bearer "+tm.bob.Token)
	req.Header.Set("Mcp-Session-Id", alice.ID())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("bob on alice's session: HTTP %d, want 403", resp.StatusCode)
	}
	if len(tm.everything.Started()) != 0 {
		t.Errorf("bob's call ran in alice's session: %v", tm.everything.Started())
	}
	if res := call(t, alice, "everything__echo", map[string]any{"message": "mine"}); res.IsError {
		t.Errorf("alice's session was affected: %s", textOf(res))
	}
	// Activity says who tried (found by a new-user test: it said
	// "unauthenticated" for a valid token).
	testutil.Eventually(t, 5*time.Second, func() bool {
		recs, _ := tm.in.API.Activity.List(core.ActivityFilter{Kind: "session", Agent: "bob"})
		return len(recs) == 1 && recs[0].Session == alice.ID() && recs[0].ErrorCode == core.EForbidden
	}, "bob's attempt on alice's session is not in Activity under bob")
}

// Compact mode (seed 003): the agent sees the meta-tools instead of every
// tool; get_module_schema refuses a module with no allowed tool; call runs
// the inner call through the whole pipeline; batch is all or nothing.
func TestCompactMode(t *testing.T) {
	tm := newTeam(t)
	if _, err := tm.in.API.Agents.SetCompact(tm.alice.Agent.ID, true); err != nil {
		t.Fatal(err)
	}
	alice := tm.connectWith(t, tm.alice.Token, "", nil)
	got := names(t, alice)
	for _, want := range []string{"get_module_schema", "call", "batch", "help"} {
		if !slices.Contains(got, want) {
			t.Errorf("compact tools/list lacks %s: %v", want, got)
		}
	}
	if slices.Contains(got, "everything__echo") {
		t.Errorf("compact mode still lists downstream tools: %v", got)
	}
	res := call(t, alice, "get_module_schema", map[string]any{"module": "everything"})
	if res.IsError || !strings.Contains(textOf(res), `"name": "echo"`) {
		t.Errorf("get_module_schema everything = %s", textOf(res))
	}
	res = call(t, alice, "get_module_schema", map[string]any{"module": "work"})
	if !res.IsError || !strings.Contains(textOf(res), "no access to module: work") {
		t.Errorf("get_module_schema work = %s, want no access", textOf(res))
	}
	res = call(t, alice, "call", map[string]any{"module": "everything", "tool_name": "echo", "params": map[string]any{"message": "compact"}})
	if res.IsError || !strings.Contains(textOf(res), "Echo: compact") {
		t.Errorf("call = %s", textOf(res))
	}
	recs, _ := tm.in.API.Activity.List(core.ActivityFilter{Server: "everything", Tool: "echo"})
	if len(recs) != 1 || recs[0].Agent != "alice" || recs[0].Decision != core.DecisionAllow {
		t.Errorf("the inner call's audit record = %+v, want alice's echo, decided by the rules", recs)
	}
	before := len(tm.everything.Started())
	res = call(t, alice, "batch", map[string]any{"calls": []any{
		map[string]any{"module": "everything", "tool_name": "echo", "params": map[string]any{"message": "one"}},
		map[string]any{"module": "work", "tool_name": "echo", "params": map[string]any{"message": "two"}},
	}})
	if !res.IsError || !strings.Contains(textOf(res), `"message": "1 tool(s) not permitted"`) || !strings.Contains(textOf(res), `"tool": "work:echo"`) {
		t.Errorf("a batch with a denied call = %s", textOf(res))
	}
	// Seed 003's shape: {"error": {"message": ..., "denied_tools": [...]}},
	// the error object once (it was nested twice; found by a new-user test).
	var shape struct {
		Error struct {
			Message     string            `json:"message"`
			DeniedTools []json.RawMessage `json:"denied_tools"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(textOf(res)), &shape); err != nil || shape.Error.Message != "1 tool(s) not permitted" || len(shape.Error.DeniedTools) != 1 {
		t.Errorf("the refused batch is not in the seed's shape (%v): %s", err, textOf(res))
	}
	if len(tm.everything.Started()) != before || len(tm.work.Started()) != 0 {
		t.Error("a refused batch ran some of its calls")
	}
	res = call(t, alice, "batch", map[string]any{"calls": []any{
		map[string]any{"module": "everything", "tool_name": "echo", "params": map[string]any{"message": "one"}},
		map[string]any{"module": "everything", "tool_name": "add", "params": map[string]any{"a": 1, "b": 2}},
	}})
	if res.IsError || !strings.Contains(textOf(res), "Echo: one") || !strings.Contains(textOf(res), `"sum": 3`) {
		t.Errorf("an allowed batch = %s", textOf(res))
	}
}

// With no rules of the user's, Airlock's own tools answer at once (the
// permission levels decide who may call them) while a downstream call
// still waits for a person: the default rule is there and visible.
func TestOwnToolsDoNotAsk(t *testing.T) {
	srv := testutil.NewTestServer()
	in := startWith(t, airlock.Options{DataDir: t.TempDir(), InProcess: map[string]*mcp.Server{"everything": srv.Server}})
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: in.Info.MCPURL, HTTPClient: &http.Client{Transport: bearer{in.Info.AgentToken}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()

	waitTool(t, sess, "everything__echo")
	// The downstream call waits for a person...
	waiting := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "x"}})
		waiting <- res
	}()
	var pending []hitl.Approval
	testutil.Eventually(t, 60*time.Second, func() bool {
		pending, _ = in.API.Approvals.Pending()
		return len(pending) == 1
	}, "the echo call did not wait for approval")
	// ...while help, on the same session, answers without asking.
	res := call(t, sess, "help", nil)
	if res.IsError {
		t.Fatalf("help = %s, want its listing", textOf(res))
	}
	if p, _ := in.API.Approvals.Pending(); len(p) != 1 || p[0].ID != pending[0].ID {
		t.Errorf("pending after help = %+v, want only the echo call", p)
	}
	rules, err := in.API.Rules.List()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(rules, func(r hitl.Rule) bool {
		return r.ID == store.OwnToolsRuleID && r.AutoApprove && r.ServerID != nil && *r.ServerID == "airlock"
	}) {
		t.Errorf("rules = %+v, want the visible default rule for Airlock's own tools", rules)
	}
	if err := in.API.Approvals.Decline(pending[0].ID, "not now"); err != nil {
		t.Fatal(err)
	}
	if res := <-waiting; res == nil || !res.IsError {
		t.Errorf("the declined echo = %+v, want a tool error", res)
	}
}

// A call waiting for a person whose agent is then suspended is declined by
// Airlock with the reason, instead of waiting in the queue for a decision
// that could not let it run (found by a new-user test).
func TestSuspendDeclinesWaitingCalls(t *testing.T) {
	tm := newTeam(t)
	server, tool := "everything", "echo"
	if _, err := tm.in.API.Rules.Create(hitl.RuleInput{ServerID: &server, ToolName: &tool, AutoApprove: false, Priority: 50}); err != nil {
		t.Fatal(err)
	}
	alice := tm.connectWith(t, tm.alice.Token, "", nil)
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "waiting"}})
		done <- res
	}()
	testutil.Eventually(t, 10*time.Second, func() bool {
		p, _ := tm.in.API.Approvals.Pending()
		return len(p) == 1
	}, "alice's echo never waited for approval")
	if _, err := tm.in.API.Agents.Suspend(tm.alice.Agent.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		if res == nil || !res.IsError || !strings.Contains(textOf(res), "access changed while the call waited") || !strings.Contains(textOf(res), "suspended") {
			t.Errorf("the waiting call's answer: %s", textOf(res))
		}
		// Said once (found by a new-user test: "declined by Airlock:" twice).
		if n := strings.Count(textOf(res), "declined by Airlock"); n != 1 {
			t.Errorf("the waiting call's answer says who declined it %d times: %s", n, textOf(res))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting call of a suspended agent was not answered")
	}
	if p, _ := tm.in.API.Approvals.Pending(); len(p) != 0 {
		t.Errorf("still waiting: %+v", p)
	}
}

// A waiting call is declined too when what it was made with goes away
// while it waits: the agent token (rotated), the agent's place in the
// session's project (taken off it), the project (deleted) (found by a
// new-user test: approved, such a call ran).
func TestAccessLostDeclinesWaitingCalls(t *testing.T) {
	for _, tc := range []struct {
		name, reason string
		change       func(tm *team) error
	}{
		{"token rotated", "rotated", func(tm *team) error { _, err := tm.in.API.Agents.RotateToken(tm.alice.Agent.ID); return err }},
		{"taken off the project", "not assigned", func(tm *team) error {
			_, err := tm.in.API.Agents.Unassign(tm.alice.Agent.ID, tm.projectName)
			return err
		}},
		{"project deleted", "not assigned", func(tm *team) error {
			return tm.in.API.Agents.DeleteProject(tm.projectName, true)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tm := newTeam(t)
			server, tool := "everything", "echo"
			if _, err := tm.in.API.Rules.Create(hitl.RuleInput{ServerID: &server, ToolName: &tool, AutoApprove: false, Priority: 50}); err != nil {
				t.Fatal(err)
			}
			alice := tm.connectWith(t, tm.alice.Token, "?project="+tm.projectName, nil)
			done := make(chan *mcp.CallToolResult, 1)
			errs := make(chan error, 1)
			go func() {
				res, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "waiting"}})
				done <- res
				errs <- err
			}()
			testutil.Eventually(t, 10*time.Second, func() bool {
				p, _ := tm.in.API.Approvals.Pending()
				return len(p) == 1
			}, "alice's echo never waited for approval")
			if err := tc.change(tm); err != nil {
				t.Fatal(err)
			}
			select {
			case res := <-done:
				if err := <-errs; err != nil {
					t.Fatalf("the waiting call ended with %v, want it declined (%s)", err, tc.reason)
				}
				if res == nil || !res.IsError || !strings.Contains(textOf(res), "access changed while the call waited") || !strings.Contains(strings.ToLower(textOf(res)), tc.reason) {
					t.Errorf("the waiting call's answer: %s, want it declined (%s)", textOf(res), tc.reason)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the waiting call was not answered")
			}
			if p, _ := tm.in.API.Approvals.Pending(); len(p) != 0 {
				t.Errorf("still waiting: %+v", p)
			}
		})
	}
}

// A request with a token nobody knows (a guess, a rotated one) is refused
// and recorded in Activity, as a security event (found by a new-user test:
// it left no trace).
func TestUnknownTokenIsRecorded(t *testing.T) {
	tm := newTeam(t)
	if status := mcpStatus(t, tm.in, "alk_not-a-token-anyone-has-0123456789"); status != http.StatusUnauthorized {
		t.Errorf("an unknown token: HTTP %d, want 401", status)
	}
	testutil.Eventually(t, 5*time.Second, func() bool {
		recs, _ := tm.in.API.Activity.List(core.ActivityFilter{Kind: "session", Agent: core.Unauthenticated})
		return len(recs) == 1 && recs[0].ErrorCode == core.EUnauthorized
	}, "the refused unknown token is not in Activity")
}

// TestRefusedConnectionSaysWhy: an MCP client refused at the door (a
// project its agent is not in, a token nobody knows) shows the reason
// code, in both protocol revisions: the refusal is also the request's
// JSON-RPC error. The Go SDK's client showed only "Forbidden".
func TestRefusedConnectionSaysWhy(t *testing.T) {
	tm := newTeam(t)
	for _, tc := range []struct {
		name, token, query, want string
		status                   int
	}{
		{"unknown project", tm.alice.Token, "?project=nope", authz.EProjectNotFound, http.StatusNotFound},
		{"bad purpose", tm.alice.Token, "?purpose=bogus", core.EInvalid, http.StatusBadRequest},
		{"unknown token", "alk_not-a-token-anyone-has-0123456789", "", core.EUnauthorized, http.StatusUnauthorized},
	} {
		// Only a credential problem is 401 with a challenge, which
		// OAuth-capable clients take as "sign in".
		resp := mcpInitialize(t, tm.in.Info.MCPURL+tc.query, tc.token)
		if challenge := resp.Header.Get("WWW-Authenticate") != ""; resp.StatusCode != tc.status || challenge != (tc.status == http.StatusUnauthorized) {
			t.Errorf("%s: HTTP %d, WWW-Authenticate %v; want %d, a challenge only with 401", tc.name, resp.StatusCode, challenge, tc.status)
		}
		for _, version := range []string{"2025-11-25", ""} {
			t.Run(tc.name+" "+version, func(t *testing.T) {
				c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
				sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
					Endpoint: tm.in.Info.MCPURL + tc.query, HTTPClient: &http.Client{Transport: bearer{tc.token}},
				}, &mcp.ClientSessionOptions{ProtocolVersion: version})
				if err == nil {
					_, err = sess.ListTools(context.Background(), nil)
					sess.Close()
				}
				if err == nil || !strings.Contains(err.Error(), "["+tc.want+"]") {
					t.Errorf("error %v, want one naming %s", err, tc.want)
				}
			})
		}
	}
}

// A session opened with an agent token ends when the token is rotated:
// the old token is refused at the door at once, and an event stream it
// opened before must not go on hearing of the agent's lists, resources
// and logs (found in a security review: it did).
func TestRotatedTokenEndsItsSessions(t *testing.T) {
	tm := newTeam(t)
	sess := tm.connectWith(t, tm.alice.Token, "", nil)
	if _, err := sess.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- sess.Wait() }()
	if _, err := tm.in.API.Agents.RotateToken(tm.alice.Agent.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the session opened with the rotated token is still open")
	}
}

// A session that names no project keeps working in its agent's project
// when the agent is given a second one (found by a new-user test: every
// team tool of the sessions already open answered project_required); a
// session opened after that must name its project.
func TestSessionKeepsItsProjectWhenTheAgentGetsAnother(t *testing.T) {
	tm := newTeam(t)
	alice := tm.connectWith(t, tm.alice.Token, "", nil)
	if res := call(t, alice, "get_my_tasks", nil); res.IsError {
		t.Fatalf("get_my_tasks in alice's only project: %s", textOf(res))
	}
	if _, err := tm.in.API.Agents.CreateProject("hermes", ""); err != nil {
		t.Fatal(err)
	}
	projects := []string{tm.projectName, "hermes"}
	if _, err := tm.in.API.Agents.Update(tm.alice.Agent.ID, authz.AgentUpdate{Projects: &projects}); err != nil {
		t.Fatal(err)
	}
	if res := call(t, alice, "get_my_tasks", nil); res.IsError {
		t.Errorf("get_my_tasks on the session already open, after a second project = %s", textOf(res))
	}
	fresh := tm.connectWith(t, tm.alice.Token, "", nil)
	if res := call(t, fresh, "get_my_tasks", nil); !res.IsError || !strings.Contains(textOf(res), "project_required") {
		t.Errorf("a new session naming no project, with two = %s, want project_required", textOf(res))
	}
}

// A batch is all or nothing against the shell policy's deny list too: a
// denied command refuses the whole batch before any call runs (found by a
// new-user test: the calls before a denied rm -rf ran).
func TestBatchRefusedWholeByTheShellPolicy(t *testing.T) {
	dir := t.TempDir()
	everything := testutil.NewTestServer()
	in := startWith(t, airlock.Options{DataDir: t.TempDir(), AllowPaths: []string{dir}, InProcess: map[string]*mcp.Server{"everything": everything.Server}})
	allowAll(t, in)
	if _, err := in.API.Agents.CreateRole(authz.RoleInput{Name: "shellers", Servers: []string{"everything", builtin.ServerShellExec}}); err != nil {
		t.Fatal(err)
	}
	a, err := in.API.Agents.Create(authz.AgentInput{Name: "carl", Kind: authz.KindWorker, Role: "shellers", Compact: true})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: in.Info.MCPURL, HTTPClient: &http.Client{Transport: bearer{a.Token}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	waitTool(t, sess, "batch")
	res := call(t, sess, "batch", map[string]any{"calls": []any{
		map[string]any{"module": "everything", "tool_name": "echo", "params": map[string]any{"message": "first"}},
		map[string]any{"module": builtin.ServerShellExec, "tool_name": builtin.ToolShellExec, "params": map[string]any{"command": "rm -rf victim", "cwd": dir}},
	}})
	if !res.IsError || !strings.Contains(textOf(res), `"tool": "`+builtin.ServerShellExec+":"+builtin.ToolShellExec+`"`) || !strings.Contains(textOf(res), "command_denied") {
		t.Errorf("a batch with a denied command = %s, want it refused whole, naming the shell call", textOf(res))
	}
	if n := len(everything.Started()); n != 0 {
		t.Errorf("the refused batch ran %d call(s)", n)
	}
}

// A session opened in a project its agent is then taken off stays
// connected, its calls refused inside as tool errors with the reason, as a
// suspended agent's are (found by a new-user test: every request got HTTP
// 403, which clients take for a broken server). A new session for that
// project is still refused at the door.
func TestSessionOfAProjectLeftIsRefusedInside(t *testing.T) {
	tm := newTeam(t)
	alice := tm.connectWith(t, tm.alice.Token, "?project="+tm.projectName, nil)
	waitTool(t, alice, "everything__echo")
	if _, err := tm.in.API.Agents.Unassign(tm.alice.Agent.ID, tm.projectName); err != nil {
		t.Fatal(err)
	}
	res, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "x"}})
	if err != nil || !res.IsError || !strings.Contains(textOf(res), authz.EAgentNotAssigned) {
		t.Errorf("a call after the agent left the project = %v %+v, want a tool error naming %s", err, res, authz.EAgentNotAssigned)
	}
	if tools, err := alice.ListTools(context.Background(), nil); err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != authz.ToolHelp {
		t.Errorf("tools/list after the agent left the project: %v %+v, want help alone", err, tools)
	}
	// help still answers there, and says why the rest is refused
	// (found by a new-user test: help was refused too).
	res = call(t, alice, "help", map[string]any{})
	if res.IsError || !strings.Contains(textOf(res), "No tool but help is available in this session") || !strings.Contains(textOf(res), "is not assigned to project") {
		t.Errorf("help after the agent left the project = %s, want its answer saying the agent is not in the project", textOf(res))
	}
	if !strings.Contains(textOf(res), `"total_available": 1`) {
		t.Errorf("help after the agent left the project lists more than itself: %s", textOf(res))
	}
	res = call(t, alice, "help", map[string]any{"tool_name": "get_my_task"})
	if res.IsError || !strings.Contains(textOf(res), `"available": false`) || !strings.Contains(textOf(res), authz.EAgentNotAssigned) {
		t.Errorf("help on get_my_task after the agent left the project = %s, want it unavailable, for %s", textOf(res), authz.EAgentNotAssigned)
	}
	res = call(t, alice, "get_my_task", map[string]any{})
	if !res.IsError || !strings.Contains(textOf(res), authz.EAgentNotAssigned) {
		t.Errorf("get_my_task after the agent left the project = %s, want it refused", textOf(res))
	}
	if resp := mcpInitialize(t, tm.in.Info.MCPURL+"?project="+tm.projectName, tm.alice.Token); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a new session for the project left: HTTP %d, want 403", resp.StatusCode)
	}
}
