package airlock_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func startWith(t testing.TB, o airlock.Options) *airlock.Instance {
	t.Helper()
	o.Addr = "127.0.0.1:0"
	return startOn(t, o)
}

// startOn starts Airlock with o as given (its address included).
func startOn(t testing.TB, o airlock.Options) *airlock.Instance {
	t.Helper()
	o.UI = fstest.MapFS{"index.html": {Data: []byte("<title>Airlock</title>")}}
	in, err := airlock.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Close)
	return in
}

// waitingCall starts an echo call and returns the approval it waits on and
// a channel with its result.
func waitingCall(t *testing.T, in *airlock.Instance, sess *mcp.ClientSession, params *mcp.CallToolParams) (hitl.Approval, <-chan *mcp.CallToolResult) {
	t.Helper()
	before, _ := in.API.Approvals.Pending()
	done := callAsync(sess, params)
	var pending []hitl.Approval
	testutil.Eventually(t, 10*time.Second, func() bool {
		pending, _ = in.API.Approvals.Pending()
		return len(pending) == len(before)+1
	}, "the call never waited for approval")
	return pending[len(pending)-1], done
}

func echoParams(msg string) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": msg}}
}

func result(t *testing.T, ch <-chan *mcp.CallToolResult) *mcp.CallToolResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("the call did not return")
		return nil
	}
}

func lastActivity(t *testing.T, in *airlock.Instance) core.AuditRecord {
	t.Helper()
	var recs []core.AuditRecord
	testutil.Eventually(t, 5*time.Second, func() bool {
		recs, _ = in.API.Activity.List(core.ActivityFilter{Limit: 1})
		return len(recs) == 1
	}, "no activity recorded")
	return recs[0]
}

func setup(t *testing.T, o airlock.Options) (*airlock.Instance, *mcp.ClientSession) {
	t.Helper()
	o.DataDir = t.TempDir()
	// An in-process test server under the id the tests name: it starts in
	// microseconds, where server-everything from npm takes a second.
	o.InProcess = map[string]*mcp.Server{"everything": testutil.NewTestServer().Server}
	in := startWith(t, o)
	sess := connect(t, in)
	waitTool(t, sess, "everything__echo")
	return in, sess
}

func TestDeclineWithReasonReachesAgent(t *testing.T) {
	in, sess := setup(t, airlock.Options{})
	a, done := waitingCall(t, in, sess, echoParams("rm everything"))
	if a.Client != "test-agent" || a.ClientVersion != "1" || a.Agent != "default" {
		t.Errorf("approval agent %q, client %q version %q; want the agent and the MCP client's name and version apart", a.Agent, a.Client, a.ClientVersion)
	}
	if a.Reason != hitl.NoMatchReason || a.Risk == "" {
		t.Errorf("approval = %+v, want the no-match reason and a risk", a)
	}
	if err := in.API.Approvals.Decline(a.ID, "not on a Friday"); err != nil {
		t.Fatal(err)
	}
	res := result(t, done)
	if !res.IsError || !strings.Contains(textOf(res), "not on a Friday") {
		t.Fatalf("declined call = %q (isError %v), want a tool error carrying the reason", textOf(res), res.IsError)
	}
	rec := lastActivity(t, in)
	if rec.Decision != core.DecisionDeclined || rec.Approver == "" || !strings.Contains(rec.Error, "not on a Friday") {
		t.Errorf("activity = %+v, want declined by a person with the reason", rec)
	}
	if err := in.API.Approvals.Decline(a.ID, "again"); core.ErrorCode(err) != core.EConflict && core.ErrorCode(err) != core.ENotFound {
		t.Errorf("declining a decided call: %v, want a conflict or not-found error", err)
	}
}

func TestApprovalTimeoutDeclines(t *testing.T) {
	in, sess := setup(t, airlock.Options{ApprovalTimeout: 300 * time.Millisecond})
	_, done := waitingCall(t, in, sess, echoParams("nobody is watching"))
	res := result(t, done)
	if !res.IsError || !strings.Contains(textOf(res), core.EApprovalTimeout) {
		t.Fatalf("timed-out call = %q, want a tool error with %s", textOf(res), core.EApprovalTimeout)
	}
	if strings.Contains(textOf(res), "Echo:") {
		t.Fatal("a timed-out call reached the tool")
	}
	if rec := lastActivity(t, in); rec.Decision != core.DecisionTimeout {
		t.Errorf("activity decision = %q, want %q", rec.Decision, core.DecisionTimeout)
	}
}

func TestRuleChangeReleasesWaitingCall(t *testing.T) {
	in, sess := setup(t, airlock.Options{})
	_, done := waitingCall(t, in, sess, echoParams("released by a rule"))
	server, tool := "everything", "echo"
	if _, err := in.API.Rules.Create(hitl.RuleInput{ServerID: &server, ToolName: &tool, AutoApprove: true, Priority: 10}); err != nil {
		t.Fatal(err)
	}
	res := result(t, done)
	if res.IsError || !strings.Contains(textOf(res), "released by a rule") {
		t.Fatalf("call after a releasing rule = %q", textOf(res))
	}
	if p, _ := in.API.Approvals.Pending(); len(p) != 0 {
		t.Errorf("%d approvals still pending", len(p))
	}
}

func TestProgressKeepsWaitingCallAlive(t *testing.T) {
	in, _ := setup(t, airlock.Options{ApprovalProgressInterval: 50 * time.Millisecond})
	var mu sync.Mutex
	var msgs []string
	c := mcp.NewClient(&mcp.Implementation{Name: "p", Version: "1"}, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		msgs = append(msgs, r.Params.Message)
		mu.Unlock()
	}})
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: in.Info.MCPURL, HTTPClient: &http.Client{Transport: bearer{in.Info.AgentToken}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	p := echoParams("with progress")
	p.SetProgressToken("tok-1")
	a, done := waitingCall(t, in, sess, p)
	testutil.Eventually(t, 10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(msgs) >= 2
	}, "no progress notifications while the call waited")
	mu.Lock()
	if !strings.Contains(msgs[0], "approve") {
		t.Errorf("progress message %q does not say the call waits for approval", msgs[0])
	}
	mu.Unlock()
	in.API.Approvals.Approve(a.ID)
	if res := result(t, done); res.IsError {
		t.Fatalf("approved call failed: %s", textOf(res))
	}
}

func TestApproveAndAddRuleLetsNextCallThrough(t *testing.T) {
	in, sess := setup(t, airlock.Options{})
	a, done := waitingCall(t, in, sess, echoParams("first"))
	if err := in.API.Approvals.ApproveAndAddRule(a.ID, hitl.BreadthTool, "1h", hitl.ScopeAgent); err != nil {
		t.Fatal(err)
	}
	if res := result(t, done); res.IsError {
		t.Fatalf("approved call failed: %s", textOf(res))
	}
	rules := toolRules(t, in)
	if len(rules) != 1 || !rules[0].AutoApprove || rules[0].ExpiresAt == nil {
		t.Fatalf("rules after approve-and-add = %+v, want one expiring auto-approve rule", rules)
	}
	res := echo(t, sess, "second")
	if res.IsError || !strings.Contains(textOf(res), "second") {
		t.Fatalf("second call = %q, want it to pass without asking", textOf(res))
	}
	if rec := lastActivity(t, in); rec.Decision != core.DecisionAllow || rec.RuleID != rules[0].ID {
		t.Errorf("second call activity = %+v, want allowed by rule %s", rec, rules[0].ID)
	}
}

func TestEditingRuleChangesNextDecision(t *testing.T) {
	in, sess := setup(t, airlock.Options{})
	server := "everything"
	r, err := in.API.Rules.Create(hitl.RuleInput{ServerID: &server, AutoApprove: true})
	if err != nil {
		t.Fatal(err)
	}
	if res := echo(t, sess, "allowed"); res.IsError {
		t.Fatalf("allowed call failed: %s", textOf(res))
	}
	in2 := r.Input()
	in2.AutoApprove = false
	if _, err := in.API.Rules.Update(r.ID, in2); err != nil {
		t.Fatal(err)
	}
	a, done := waitingCall(t, in, sess, echoParams("now asks"))
	if a.RuleID != r.ID {
		t.Errorf("approval names rule %q, want %q", a.RuleID, r.ID)
	}
	in.API.Approvals.Decline(a.ID, "")
	result(t, done)
}

func TestBadRuleInputChangesNothing(t *testing.T) {
	in, _ := setup(t, airlock.Options{})
	bad := "["
	if _, err := in.API.Rules.Create(hitl.RuleInput{ToolPattern: &bad}); core.ErrorCode(err) != core.EInvalid {
		t.Errorf("invalid pattern: %v, want %s", err, core.EInvalid)
	}
	if _, err := in.API.Rules.Create(hitl.RuleInput{Conditions: []hitl.Condition{{Path: "$.x", Op: "regex", Value: "("}}}); core.ErrorCode(err) != core.EInvalid {
		t.Errorf("invalid regex condition: %v, want %s", err, core.EInvalid)
	}
	if err := in.API.Approvals.Approve("no-such-approval"); core.ErrorCode(err) != core.ENotFound {
		t.Errorf("approving an unknown approval: %v, want %s", err, core.ENotFound)
	}
	if rules := toolRules(t, in); len(rules) != 0 {
		t.Errorf("bad input created %d rules", len(rules))
	}
}

// TestRestartWhileWaiting kills Airlock (SIGKILL) while a call waits for
// approval; the agent gets an error, and the next start records the call as
// expired in the approvals and the audit log.
func TestRestartWhileWaiting(t *testing.T) {
	runChildIfAsked(false)
	dir := t.TempDir()
	ch := startChild(t, "TestRestartWhileWaiting", dir)
	c := mcp.NewClient(&mcp.Implementation{Name: "a", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ch.url, HTTPClient: &http.Client{Transport: bearer{ch.token}}, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	waitTool(t, sess, "test__echo")
	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "test__echo", Arguments: map[string]any{"message": "waiting when the lights went out"}})
		if err == nil && !res.IsError {
			err = fmt.Errorf("call succeeded: %s", textOf(res))
		} else if err == nil {
			err = fmt.Errorf("tool error: %s", textOf(res))
		}
		errc <- err
	}()
	testutil.Eventually(t, 10*time.Second, func() bool {
		var pending []hitl.Approval
		ch.rpc(t, "Approvals.Pending", &pending)
		return len(pending) == 1
	}, "the call never waited for approval in the child")
	ch.kill()
	select {
	case err := <-errc:
		if strings.HasPrefix(err.Error(), "call succeeded") {
			t.Fatal(err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("the agent's call hung after Airlock was killed")
	}

	in := startWith(t, airlock.Options{DataDir: dir})
	if p, _ := in.API.Approvals.Pending(); len(p) != 0 {
		t.Errorf("after restart %d approvals are pending, want none", len(p))
	}
	recs, _ := in.API.Activity.List(core.ActivityFilter{Decision: core.DecisionExpired})
	if len(recs) != 1 || recs[0].Tool != "echo" || recs[0].ErrorCode != core.EExpired {
		t.Fatalf("activity after restart = %+v, want the waiting call recorded as expired", recs)
	}
}

// Stopping Airlock while a call waits for approval answers the agent at
// once (expired), records it so, and does not wait for the agent to give
// up: the gateway's sessions wait for their requests before they close.
func TestStopWhileWaiting(t *testing.T) {
	dir := t.TempDir()
	in := startWith(t, airlock.Options{DataDir: dir, InProcess: map[string]*mcp.Server{"everything": testutil.NewTestServer().Server}})
	sess := connect(t, in)
	waitTool(t, sess, "everything__echo")
	_, done := waitingCall(t, in, sess, echoParams("waiting when Airlock stops"))
	closed := make(chan struct{})
	go func() {
		in.Close()
		close(closed)
	}()
	res := result(t, done)
	if !res.IsError || !strings.Contains(textOf(res), core.EExpired) {
		t.Errorf("the waiting call's result = %q, want a tool error with code %s", textOf(res), core.EExpired)
	}
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Airlock did not stop while a call waited for approval")
	}
	in2 := startWith(t, airlock.Options{DataDir: dir})
	recs, _ := in2.API.Activity.List(core.ActivityFilter{Decision: core.DecisionExpired})
	if len(recs) != 1 || recs[0].Tool != "echo" || recs[0].ErrorCode != core.EExpired {
		t.Fatalf("activity after the restart = %+v, want the waiting call recorded as expired", recs)
	}
}

func TestCancelWhileWaitingIsRecorded(t *testing.T) {
	in, sess := setup(t, airlock.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := sess.CallTool(ctx, echoParams("never mind"))
		done <- err
	}()
	testutil.Eventually(t, 10*time.Second, func() bool {
		p, _ := in.API.Approvals.Pending()
		return len(p) == 1
	}, "the call never waited")
	cancel()
	<-done
	testutil.Eventually(t, 10*time.Second, func() bool {
		p, _ := in.API.Approvals.Pending()
		recs, _ := in.API.Activity.List(core.ActivityFilter{})
		return len(p) == 0 && len(recs) == 1 && recs[0].ErrorCode == "cancelled"
	}, "a call cancelled while waiting is not recorded as cancelled, or still waits")
}

func TestMoveRuleLandsExactlyOnePlace(t *testing.T) {
	in := startWith(t, airlock.Options{DataDir: t.TempDir()})
	// Without the default tool rules, which would sit between these (the
	// user may delete them).
	for _, id := range []string{store.OwnToolsRuleID, store.FileReadRuleID} {
		if err := in.API.Rules.Delete(id); err != nil {
			t.Fatal(err)
		}
	}
	sp := func(s string) *string { return &s }
	// The order the user reported: echo (0, tool name), GET-* (0, pattern), get-* (-5, pattern).
	a, _ := in.API.Rules.Create(hitl.RuleInput{ToolName: sp("echo")})
	b, _ := in.API.Rules.Create(hitl.RuleInput{ToolPattern: sp("GET-*")})
	c, _ := in.API.Rules.Create(hitl.RuleInput{ToolPattern: sp("get-*"), Priority: -5})
	order := func() []string {
		var out []string
		for _, r := range toolRules(t, in) {
			out = append(out, r.ID)
		}
		return out
	}
	if diff := cmp.Diff([]string{a.ID, b.ID, c.ID}, order()); diff != "" {
		t.Fatalf("start order (-want +got):\n%s", diff)
	}
	steps := []struct {
		id    string
		delta int
		want  []string
	}{
		{c.ID, -1, []string{a.ID, c.ID, b.ID}},
		{c.ID, -1, []string{c.ID, a.ID, b.ID}},
		{c.ID, 1, []string{a.ID, c.ID, b.ID}},
		{a.ID, 1, []string{c.ID, a.ID, b.ID}},
	}
	for n, s := range steps {
		if _, err := in.API.Rules.Move(s.id, s.delta); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(s.want, order()); diff != "" {
			t.Fatalf("after step %d (-want +got):\n%s", n+1, diff)
		}
	}
	if _, err := in.API.Rules.Move(c.ID, -1); core.ErrorCode(err) != core.EInvalid {
		t.Errorf("moving the first rule up: %v, want %s", err, core.EInvalid)
	}
}

// toolRules are the user's rules for tool calls: the list without the
// default rules every Airlock starts with.
func toolRules(t *testing.T, in *airlock.Instance) []hitl.Rule {
	t.Helper()
	rules, err := in.API.Rules.List()
	if err != nil {
		t.Fatal(err)
	}
	var out []hitl.Rule
	for _, r := range rules {
		if r.Kind == hitl.KindTool && !strings.HasPrefix(r.ID, "default-") {
			out = append(out, r)
		}
	}
	return out
}

// A call waiting for a person whose server is then removed (from the
// Servers screen, the CLI or an edit of servers.json) stayed in the queue:
// the dialog still offered Approve for a server that was gone, and
// approving it only got the agent "server is not configured" (found by a
// new-user test). Like a call whose agent lost its access, it is to be
// answered at once, saying why, and leave the queue.
func TestServerRemovedDeclinesItsWaitingCalls(t *testing.T) {
	in := start(t, t.TempDir())
	if _, err := in.API.Servers.Add(testutil.EverythingServer(t, "gone")); err != nil {
		t.Fatal(err)
	}
	sess := connect(t, in)
	waitTool(t, sess, "gone__echo")
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "gone__echo", Arguments: map[string]any{"message": "waiting"}})
		done <- res
	}()
	testutil.Eventually(t, 30*time.Second, func() bool {
		p, _ := in.API.Approvals.Pending()
		return len(p) == 1
	}, "the echo call never waited for approval")
	if err := in.API.Servers.Remove("gone"); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		if res == nil || !res.IsError || !strings.Contains(textOf(res), "gone") {
			t.Errorf("the waiting call's answer: %+v, want a tool error saying its server was removed", res)
		}
	case <-time.After(15 * time.Second):
		p, _ := in.API.Approvals.Pending()
		t.Errorf("the call to the removed server still waits for a person: %d waiting, the first for server %q", len(p), p[0].Server)
		for _, a := range p { // let the call end, so that Airlock stops at once
			in.API.Approvals.Decline(a.ID, "test over")
		}
		<-done
	}
}
