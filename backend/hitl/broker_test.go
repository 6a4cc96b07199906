package hitl_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/store"
)

// recorder is a core.EventSink that keeps what it receives.
type recorder struct {
	mu     sync.Mutex
	events []event
}

type event struct {
	Name   string
	Status string
}

func (r *recorder) Emit(name string, payload any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := event{Name: name}
	if a, ok := payload.(hitl.Approval); ok {
		e.Status = a.Status
	}
	r.events = append(r.events, e)
}

func (r *recorder) approvalEvents() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event
	for _, e := range r.events {
		if e.Name != core.EventRulesChanged {
			out = append(out, e)
		}
	}
	return out
}

type brokerEnv struct {
	db     *store.DB
	rules  *hitl.Rules
	broker *hitl.Broker
	events *recorder
	store  *store.Approvals
}

func newBrokerEnv(t *testing.T, timeout time.Duration) *brokerEnv {
	t.Helper()
	db := openDB(t, filepath.Join(t.TempDir(), "airlock.db"))
	ev := &recorder{}
	rules := newRules(t, db, hitl.RulesOptions{Events: ev})
	st := store.NewApprovals(db)
	b := hitl.NewBroker(rules, st, hitl.BrokerOptions{Timeout: timeout, ProgressInterval: 20 * time.Millisecond, Events: ev})
	return &brokerEnv{db: db, rules: rules, broker: b, events: ev, store: st}
}

type result struct {
	out core.ApprovalOutcome
	err error
}

// request starts a request in the background and waits until it is queued.
// held is a request the pipeline hands the broker, with the verdict that
// sent it there.
type held struct {
	r   *core.Request
	why core.Verdict
}

func (e *brokerEnv) request(t *testing.T, ctx context.Context, req *held) (string, <-chan result) {
	t.Helper()
	before := len(e.broker.Pending())
	ch := make(chan result, 1)
	go func() {
		out, err := e.broker.Hold(ctx, req.r, req.why, 0)
		ch <- result{out, err}
	}()
	waitFor(t, "the request to be queued", func() bool { return len(e.broker.Pending()) > before })
	p := e.broker.Pending()
	return p[len(p)-1].ID, ch
}

func readFileReq() *held {
	return &held{
		r: &core.Request{Kind: core.KindToolCall, Caller: core.Caller{AgentID: "alice", Session: "s1"},
			Server: "filesystem", Name: "write_file", Exposed: "filesystem__write_file",
			Args: json.RawMessage(`{"path":"/tmp/x","content":"hi"}`)},
		why: core.Verdict{Outcome: core.Ask, Reason: hitl.NoMatchReason, RuleSetVersion: 1},
	}
}

func wait(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the request did not return")
		return result{}
	}
}

func TestBrokerApprove(t *testing.T) {
	e := newBrokerEnv(t, time.Minute)
	id, ch := e.request(t, context.Background(), readFileReq())
	p := e.broker.Pending()
	if len(p) != 1 || p[0].Status != hitl.StatusPending || p[0].Risk != hitl.RiskUnknown || p[0].Reason != hitl.NoMatchReason ||
		p[0].Deadline.Sub(p[0].CreatedAt) != time.Minute {
		t.Errorf("pending approval = %+v", p)
	}
	if err := e.broker.Approve(id, "owner"); err != nil {
		t.Fatal(err)
	}
	got := wait(t, ch)
	want := core.ApprovalOutcome{ApprovalID: id, Approved: true, Decision: core.DecisionApproved, Reason: "approved by owner", By: "owner"}
	if diff := cmp.Diff(want, got.out, cmpIgnoreWaited); diff != "" || got.err != nil {
		t.Errorf("outcome (-want +got):\n%s, err %v", diff, got.err)
	}
	// Deciding again, or deciding what does not exist, is a clear error.
	if err := e.broker.Approve(id, "owner"); core.ErrorCode(err) != core.EConflict {
		t.Errorf("second Approve: %v, want %s", err, core.EConflict)
	}
	if err := e.broker.Decline(id, "", "owner"); core.ErrorCode(err) != core.EConflict {
		t.Errorf("Decline after Approve: %v, want %s", err, core.EConflict)
	}
	if err := e.broker.Approve("unknown", "owner"); core.ErrorCode(err) != core.ENotFound {
		t.Errorf("Approve(unknown): %v, want %s", err, core.ENotFound)
	}
	a, ok, err := e.store.LoadApproval(id)
	if err != nil || !ok || a.Status != hitl.StatusApproved || a.DecidedBy != "owner" || a.DecidedAt == nil {
		t.Errorf("stored approval = %+v, %v, %v", a, ok, err)
	}
	wantEvents := []event{{core.EventApprovalRequested, hitl.StatusPending}, {core.EventApprovalResolved, hitl.StatusApproved}}
	if diff := cmp.Diff(wantEvents, e.events.approvalEvents()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

var cmpIgnoreWaited = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".WaitedMs" }, cmp.Ignore())

func TestBrokerDeclineWithReason(t *testing.T) {
	e := newBrokerEnv(t, time.Minute)
	id, ch := e.request(t, context.Background(), readFileReq())
	if err := e.broker.Decline(id, "not in production", "owner"); err != nil {
		t.Fatal(err)
	}
	got := wait(t, ch)
	want := core.ApprovalOutcome{ApprovalID: id, Decision: core.DecisionDeclined, Reason: "not in production", By: "owner", Code: core.EDenied}
	if diff := cmp.Diff(want, got.out, cmpIgnoreWaited); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
	if err := e.broker.Approve(id, "owner"); core.ErrorCode(err) != core.EConflict {
		t.Errorf("Approve after Decline: %v, want %s", err, core.EConflict)
	}
}

func TestBrokerTimeoutNeverApproves(t *testing.T) {
	e := newBrokerEnv(t, 150*time.Millisecond)
	var mu sync.Mutex
	var progress []float64
	req := readFileReq()
	req.r.Progress = func(_, total float64, _ string) {
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, total)
	}
	id, ch := e.request(t, context.Background(), req)
	got := wait(t, ch)
	if got.out.Approved || got.out.Decision != core.DecisionTimeout || got.out.Code != core.EApprovalTimeout || got.err != nil {
		t.Errorf("outcome after timeout = %+v, %v; want declined with %s", got.out, got.err, core.EApprovalTimeout)
	}
	mu.Lock()
	if len(progress) == 0 || progress[0] != 0.15 {
		t.Errorf("progress calls = %v, want at least one with the total timeout", progress)
	}
	mu.Unlock()
	if err := e.broker.Approve(id, "late"); core.ErrorCode(err) != core.EConflict {
		t.Errorf("Approve after timeout: %v, want %s", err, core.EConflict)
	}
	if a, _, _ := e.store.LoadApproval(id); a.Status != hitl.StatusTimeout {
		t.Errorf("stored status = %q, want %q", a.Status, hitl.StatusTimeout)
	}
}

func TestBrokerCancel(t *testing.T) {
	e := newBrokerEnv(t, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	id, ch := e.request(t, ctx, readFileReq())
	cancel()
	got := wait(t, ch)
	if got.out.Approved || !errors.Is(got.err, context.Canceled) {
		t.Errorf("outcome after cancel = %+v, %v", got.out, got.err)
	}
	if a, _, _ := e.store.LoadApproval(id); a.Status != hitl.StatusCancelled {
		t.Errorf("stored status = %q, want %q", a.Status, hitl.StatusCancelled)
	}
	if len(e.broker.Pending()) != 0 {
		t.Errorf("pending after cancel: %+v", e.broker.Pending())
	}
}

func TestBrokerQueueOrder(t *testing.T) {
	e := newBrokerEnv(t, time.Minute)
	var ids []string
	var chans []<-chan result
	for _, tool := range []string{"a", "b", "c"} {
		req := readFileReq()
		req.r.Name = tool
		id, ch := e.request(t, context.Background(), req)
		ids = append(ids, id)
		chans = append(chans, ch)
	}
	var got []string
	for _, a := range e.broker.Pending() {
		got = append(got, a.ID)
	}
	if diff := cmp.Diff(ids, got); diff != "" {
		t.Errorf("queue order (-want oldest first +got):\n%s", diff)
	}
	// Each is decided on its own.
	if err := e.broker.Decline(ids[1], "", "owner"); err != nil {
		t.Fatal(err)
	}
	if r := wait(t, chans[1]); r.out.Approved {
		t.Error("declined call approved")
	}
	if n := len(e.broker.Pending()); n != 2 {
		t.Errorf("%d pending after one decline, want 2", n)
	}
	for _, i := range []int{0, 2} {
		if err := e.broker.Approve(ids[i], "owner"); err != nil {
			t.Fatal(err)
		}
		wait(t, chans[i])
	}
}

func TestBrokerRecoverExpired(t *testing.T) {
	path := filepath.Join(t.TempDir(), "airlock.db")
	db := openDB(t, path)
	rules := newRules(t, db, hitl.RulesOptions{})
	// A previous run left an approval pending: it crashed while the call waited.
	old := hitl.Approval{ID: "left-over", Server: "fs", Tool: "x", Arguments: json.RawMessage(`{}`), Status: hitl.StatusPending,
		CreatedAt: time.Now().Add(-time.Hour).UTC(), Deadline: time.Now().UTC()}
	if err := store.NewApprovals(db).SaveApproval(old); err != nil {
		t.Fatal(err)
	}
	b := hitl.NewBroker(rules, store.NewApprovals(db), hitl.BrokerOptions{})
	expired, err := b.RecoverExpired()
	if err != nil || len(expired) != 1 || expired[0].ID != old.ID {
		t.Fatalf("RecoverExpired = %+v, %v; want the left-over approval", expired, err)
	}
	a, _, _ := store.NewApprovals(db).LoadApproval("left-over")
	if a.Status != hitl.StatusExpired || a.DecidedAt == nil {
		t.Errorf("left-over approval = %+v, want expired", a)
	}
	if err := b.Approve("left-over", "owner"); core.ErrorCode(err) != core.EConflict {
		t.Errorf("Approve(expired): %v, want %s", err, core.EConflict)
	}
	if again, _ := b.RecoverExpired(); len(again) != 0 {
		t.Errorf("second RecoverExpired = %+v, want none", again)
	}
}

func TestBrokerRecheckReleases(t *testing.T) {
	e := newBrokerEnv(t, time.Minute)
	global := mustCreate(t, e.rules, hitl.RuleInput{Priority: 0})
	req := readFileReq()
	req.why = e.rules.Decide(req.r)
	id, ch := e.request(t, context.Background(), req)
	forced := readFileReq()
	forced.why = core.Verdict{Outcome: core.Ask, Forced: true, Reason: "shell ask-list (sudo)"}
	forcedID, forcedCh := e.request(t, context.Background(), forced)
	other := readFileReq()
	other.r.Server = "shell"
	otherID, _ := e.request(t, context.Background(), other)

	// A rule unrelated to the waiting calls releases nothing.
	mustCreate(t, e.rules, hitl.RuleInput{ServerID: sp("weather"), AutoApprove: true})
	if n := len(e.broker.Pending()); n != 3 {
		t.Fatalf("%d pending after an unrelated rule, want 3", n)
	}
	rule := mustCreate(t, e.rules, hitl.RuleInput{ServerID: sp("filesystem"), ToolName: sp("write_file"), AutoApprove: true, Priority: 10})
	got := wait(t, ch)
	want := core.ApprovalOutcome{ApprovalID: id, Approved: true, Decision: core.DecisionApproved, Reason: "approved by rule " + rule.ID, By: "rule " + rule.ID}
	if diff := cmp.Diff(want, got.out, cmpIgnoreWaited); diff != "" {
		t.Errorf("released outcome (-want +got):\n%s", diff)
	}
	var pending []string
	for _, a := range e.broker.Pending() {
		pending = append(pending, a.ID)
	}
	if diff := cmp.Diff([]string{forcedID, otherID}, pending); diff != "" {
		t.Errorf("still pending (-want +got):\n%s", diff)
	}
	_ = global
	if err := e.broker.Decline(forcedID, "", "owner"); err != nil {
		t.Fatal(err)
	}
	wait(t, forcedCh)
}

func TestBrokerApproveAndAddRule(t *testing.T) {
	tests := []struct {
		breadth, expiry, scope string
		next                   hitl.Call // the next call, which must now pass unasked
		notNext                hitl.Call // a call the rule must not cover
		conds                  []hitl.Condition
	}{
		{hitl.BreadthTool, "none", hitl.ScopeEveryone,
			hitl.Call{Server: "filesystem", Tool: "write_file", Args: json.RawMessage(`{"path":"/other"}`)},
			hitl.Call{Server: "filesystem", Tool: "delete_file"}, nil},
		{hitl.BreadthToolArgs, "1h", hitl.ScopeEveryone,
			hitl.Call{Server: "filesystem", Tool: "write_file", Args: json.RawMessage(`{"content":"hi","path":"/tmp/x"}`)},
			hitl.Call{Server: "filesystem", Tool: "write_file", Args: json.RawMessage(`{"path":"/etc/x","content":"hi"}`)},
			[]hitl.Condition{{Path: "$", Op: "equals", Value: `{"content":"hi","path":"/tmp/x"}`}}},
		// An argument added to the approved ones is not approved (found by
		// a new-user test: the rule passed {"content":"hi","path":"/tmp/x","mode":"0777"}).
		{hitl.BreadthToolArgs, "1h", hitl.ScopeEveryone,
			hitl.Call{Server: "filesystem", Tool: "write_file", Args: json.RawMessage(`{ "path" : "/tmp/x", "content":"hi"}`)},
			hitl.Call{Server: "filesystem", Tool: "write_file", Args: json.RawMessage(`{"content":"hi","path":"/tmp/x","mode":"0777"}`)},
			[]hitl.Condition{{Path: "$", Op: "equals", Value: `{"content":"hi","path":"/tmp/x"}`}}},
		{hitl.BreadthServer, "24h", hitl.ScopeEveryone,
			hitl.Call{Server: "filesystem", Tool: "anything"},
			hitl.Call{Server: "shell", Tool: "write_file"}, nil},
		// Only for the agent that made the call (alice): bob still asks.
		{hitl.BreadthTool, "none", hitl.ScopeAgent,
			hitl.Call{Agent: "alice", Server: "filesystem", Tool: "write_file", Args: json.RawMessage(`{"path":"/other"}`)},
			hitl.Call{Agent: "bob", Server: "filesystem", Tool: "write_file", Args: json.RawMessage(`{"path":"/other"}`)}, nil},
		// Only for the session the call came on (Claude Code's "don't ask
		// again this session"): alice's next session still asks.
		{hitl.BreadthTool, "none", hitl.ScopeSession,
			hitl.Call{Agent: "alice", Session: "s1", Server: "filesystem", Tool: "write_file", Args: json.RawMessage(`{"path":"/other"}`)},
			hitl.Call{Agent: "alice", Session: "s2", Server: "filesystem", Tool: "write_file", Args: json.RawMessage(`{"path":"/other"}`)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.breadth+"/"+tt.scope, func(t *testing.T) {
			e := newBrokerEnv(t, time.Minute)
			// The rule that sends write_file here has priority 100.
			mustCreate(t, e.rules, hitl.RuleInput{ServerID: sp("filesystem"), ToolPattern: sp("*"), Priority: 100})
			req := readFileReq()
			req.why = e.rules.Decide(req.r)
			id, ch := e.request(t, context.Background(), req)
			rule, err := e.broker.ApproveAndAddRule(id, tt.breadth, tt.expiry, tt.scope, "owner")
			if err != nil {
				t.Fatal(err)
			}
			got := wait(t, ch)
			if !got.out.Approved || got.out.By != "owner" {
				t.Errorf("outcome = %+v, want approved by owner (not by the new rule)", got.out)
			}
			if rule.Priority != 101 || !rule.AutoApprove || (tt.expiry == "none") != (rule.ExpiresAt == nil) {
				t.Errorf("new rule = %+v, want auto-approve at priority 101, expiry %s", rule, tt.expiry)
			}
			if diff := cmp.Diff(tt.conds, rule.Conditions, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if d := e.rules.Decide(tt.next.Request()); !(d.Outcome == core.Allow) || d.RuleID != rule.ID {
				t.Errorf("next call %+v: %+v, want auto-approved by %s", tt.next, d, rule.ID)
			}
			if d := e.rules.Decide(tt.notNext.Request()); d.Outcome == core.Allow {
				t.Errorf("call %+v auto-approved by %s; the rule is too broad", tt.notNext, d.RuleID)
			}
		})
	}
}

func TestBrokerApproveAndAddRuleErrors(t *testing.T) {
	e := newBrokerEnv(t, time.Minute)
	id, ch := e.request(t, context.Background(), readFileReq())
	rulesBefore := len(e.rules.List())
	for _, tt := range []struct{ breadth, expiry, scope, code string }{
		{"everything", "none", hitl.ScopeEveryone, core.EInvalid},
		{hitl.BreadthTool, "2h", hitl.ScopeEveryone, core.EInvalid},
		{hitl.BreadthTool, "none", "team", core.EInvalid},
	} {
		if _, err := e.broker.ApproveAndAddRule(id, tt.breadth, tt.expiry, tt.scope, "owner"); core.ErrorCode(err) != tt.code {
			t.Errorf("ApproveAndAddRule(%s, %s, %s): %v, want %s", tt.breadth, tt.expiry, tt.scope, err, tt.code)
		}
	}
	if _, err := e.broker.ApproveAndAddRule("unknown", hitl.BreadthTool, "none", hitl.ScopeEveryone, "owner"); core.ErrorCode(err) != core.ENotFound {
		t.Errorf("ApproveAndAddRule(unknown): %v, want %s", err, core.ENotFound)
	}
	if len(e.rules.List()) != rulesBefore || len(e.broker.Pending()) != 1 {
		t.Errorf("failed ApproveAndAddRule changed something: %d rules, %d pending", len(e.rules.List()), len(e.broker.Pending()))
	}
	if err := e.broker.Decline(id, "", "owner"); err != nil {
		t.Fatal(err)
	}
	wait(t, ch)
	if _, err := e.broker.ApproveAndAddRule(id, hitl.BreadthTool, "none", hitl.ScopeEveryone, "owner"); core.ErrorCode(err) != core.EConflict {
		t.Errorf("ApproveAndAddRule after Decline: %v, want %s", err, core.EConflict)
	}
	if len(e.rules.List()) != rulesBefore {
		t.Error("ApproveAndAddRule on a decided approval created a rule")
	}
}

func TestRisk(t *testing.T) {
	tr, fa := true, false
	tests := []struct {
		ann  *core.ToolAnnotations
		want string
	}{
		{nil, hitl.RiskUnknown},
		{&core.ToolAnnotations{ReadOnly: &tr}, hitl.RiskReadOnly},
		{&core.ToolAnnotations{}, hitl.RiskDestructive}, // MCP default: destructive
		{&core.ToolAnnotations{Destructive: &tr}, hitl.RiskDestructive},
		{&core.ToolAnnotations{Destructive: &fa}, hitl.RiskOpenWorld},                // MCP default: open world
		{&core.ToolAnnotations{Destructive: &fa, OpenWorld: &fa}, hitl.RiskModifies}, // annotated non-destructive and closed-world: not "unknown"
	}
	for _, tt := range tests {
		got, warning := hitl.Risk(tt.ann)
		if got != tt.want || warning == "" {
			t.Errorf("Risk(%+v) = %q, %q; want %q with a warning", tt.ann, got, warning, tt.want)
		}
	}
}

// Stop declines every waiting call as expired, and a call that asks after
// it is declined the same way at once: nobody is left to approve it.
func TestBrokerStopExpiresWaitingCalls(t *testing.T) {
	e := newBrokerEnv(t, time.Hour)
	id, ch := e.request(t, context.Background(), readFileReq())
	e.broker.Stop()
	got := wait(t, ch)
	if got.out.Approved || got.out.Decision != core.DecisionExpired || got.out.Code != core.EExpired || got.err != nil {
		t.Errorf("outcome after Stop = %+v, %v; want declined as %s", got.out, got.err, core.EExpired)
	}
	if a, _, _ := e.store.LoadApproval(id); a.Status != hitl.StatusExpired {
		t.Errorf("stored status = %q, want %q", a.Status, hitl.StatusExpired)
	}
	out, err := e.broker.Hold(context.Background(), readFileReq().r, readFileReq().why, 0)
	if out.Approved || out.Decision != core.DecisionExpired || err != nil {
		t.Errorf("a call asking after Stop = %+v, %v; want declined as expired at once", out, err)
	}
	if p := e.broker.Pending(); len(p) != 0 {
		t.Errorf("pending after Stop = %+v, want none", p)
	}
}
