package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// trace records which stages ran, in order.
type trace struct{ steps []string }

func (t *trace) add(s string) { t.steps = append(t.steps, s) }

type router struct {
	tr  *trace
	err error
}

func (r router) Route(_ context.Context, req *core.Request) error {
	r.tr.add("route")
	if r.err != nil {
		return r.err
	}
	req.Server, req.Name = "srv", strings.TrimPrefix(req.Exposed, "srv__")
	return nil
}

type gate struct {
	tr  *trace
	err error
}

func (g gate) Authorize(context.Context, *core.Request) error { g.tr.add("gate"); return g.err }

type policy struct {
	tr *trace
	v  core.Verdict
}

func (p policy) Check(context.Context, *core.Request) core.Verdict { p.tr.add("policy"); return p.v }

type decider struct {
	tr *trace
	v  core.Verdict
}

func (d decider) Decide(*core.Request) core.Verdict { d.tr.add("decide"); return d.v }

type approver struct {
	tr  *trace
	out core.ApprovalOutcome
	why *core.Verdict
}

func (a *approver) Hold(_ context.Context, _ *core.Request, why core.Verdict, _ int64) (core.ApprovalOutcome, error) {
	a.tr.add("approve")
	a.why = &why
	return a.out, nil
}

type dispatcher struct {
	tr  *trace
	res mcp.Result
	err error
}

func (d dispatcher) Dispatch(context.Context, *core.Request) (mcp.Result, error) {
	d.tr.add("dispatch")
	if d.res == nil && d.err == nil {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran"}}}, nil
	}
	return d.res, d.err
}

// panicky panics where it is used as a policy or a dispatcher: a bug.
type panicky struct{ tr *trace }

func (p panicky) Check(context.Context, *core.Request) core.Verdict {
	p.tr.add("policy")
	panic("index out of range")
}

func (p panicky) Dispatch(context.Context, *core.Request) (mcp.Result, error) {
	p.tr.add("dispatch")
	panic("nil map")
}

type responder struct{ tr *trace }

func (r responder) Respond(_ context.Context, _ *core.Request, res *mcp.CallToolResult) *mcp.CallToolResult {
	r.tr.add("respond")
	if res.Meta == nil {
		res.Meta = mcp.Meta{}
	}
	res.Meta["seen"] = true
	return res
}

type auditor struct {
	tr       *trace
	beginErr error
	begun    []core.AuditRecord
	finished []core.AuditRecord
}

// Begin of a running record is the journal stage's; Begin of a complete
// one is the audit stage's record of a request refused before the journal
// stage (traced as "audit", and kept among the finished records).
func (a *auditor) Begin(rec *core.AuditRecord) error {
	complete := rec.Status != core.StatusRunning
	if complete {
		a.tr.add("audit")
	} else {
		a.tr.add("journal")
	}
	if a.beginErr != nil {
		return a.beginErr
	}
	rec.ID = int64(len(a.begun) + 1)
	a.begun = append(a.begun, *rec)
	if complete {
		a.finished = append(a.finished, *rec)
	}
	return nil
}

func (a *auditor) Finish(rec *core.AuditRecord) error {
	a.tr.add("audit")
	a.finished = append(a.finished, *rec)
	return nil
}

var (
	allow = core.Verdict{Outcome: core.Allow, Reason: "allowed by a rule"}
	ask   = core.Verdict{Outcome: core.Ask, Reason: "no rule matched"}
)

// parts are a full set of stages that let a call through.
type parts struct {
	tr    *trace
	stg   pipeline.Stages
	audit *auditor
	appr  *approver
}

func newParts() *parts {
	tr := &trace{}
	p := &parts{tr: tr, audit: &auditor{tr: tr}, appr: &approver{tr: tr, out: core.ApprovalOutcome{Approved: true, Decision: core.DecisionApproved, By: "owner"}}}
	p.stg = pipeline.Stages{
		Route:    router{tr: tr},
		Gate:     gate{tr: tr},
		Policies: []pipeline.Policy{policy{tr: tr, v: core.Verdict{Outcome: core.Allow}}},
		Decider:  decider{tr: tr, v: allow},
		Approver: p.appr,
		Dispatch: dispatcher{tr: tr},
		Respond:  []pipeline.Responder{responder{tr: tr}},
		Audit:    p.audit,
	}
	return p
}

func (p *parts) run(t *testing.T, kind string) (mcp.Result, error) {
	t.Helper()
	pl, err := pipeline.New(p.stg)
	if err != nil {
		t.Fatal(err)
	}
	return pl.Run(context.Background(), &core.Request{Kind: kind, Exposed: "srv__echo", Args: json.RawMessage(`{"message":"hi"}`)})
}

func TestStageOrder(t *testing.T) {
	p := newParts()
	pl, err := pipeline.New(p.stg)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"route", "gate", "policy", "decide", "journal", "approve", "dispatch", "respond", "audit"}
	if diff := cmp.Diff(want, pl.Names()); diff != "" {
		t.Errorf("stage names (-want +got):\n%s", diff)
	}
	// An asked call passes every stage, in that order, and the gate
	// decides again once the call is approved.
	p.stg.Decider = decider{tr: p.tr, v: ask}
	if _, err := p.run(t, core.KindToolCall); err != nil {
		t.Fatal(err)
	}
	want = slices.Insert(want, slices.Index(want, "approve")+1, "gate")
	if diff := cmp.Diff(want, p.tr.steps); diff != "" {
		t.Errorf("stages run (-want +got):\n%s", diff)
	}
}

// Every missing or failing stage refuses the request before it is
// dispatched, with a reason code. Responders (notifications) do not run on
// a refusal: what they add waits for a call that ran.
func TestFailsClosed(t *testing.T) {
	tests := []struct {
		name     string
		change   func(p *parts)
		code     string
		decision string
		ran      []string
	}{
		{"no gate", func(p *parts) { p.stg.Gate = nil }, core.EInternal, core.DecisionDenied,
			[]string{"route", "audit"}},
		{"gate refuses", func(p *parts) { p.stg.Gate = gate{tr: p.tr, err: core.Errorf("not_subscribed", "no grant")} }, "not_subscribed", core.DecisionDenied,
			[]string{"route", "gate", "audit"}},
		{"no router", func(p *parts) { p.stg.Route = nil }, core.EInternal, core.DecisionError,
			[]string{"audit"}},
		{"unknown target", func(p *parts) { p.stg.Route = router{tr: p.tr, err: core.Errorf("unknown_tool", "no such tool")} }, "unknown_tool", core.DecisionError,
			[]string{"route", "audit"}},
		{"policy denies", func(p *parts) {
			p.stg.Policies = []pipeline.Policy{policy{tr: p.tr, v: core.Verdict{Outcome: core.Deny, Code: "command_denied", Reason: "rm -rf"}}}
		}, "command_denied", core.DecisionDenied, []string{"route", "gate", "policy", "audit"}},
		{"policy gives an unknown verdict", func(p *parts) {
			p.stg.Policies = []pipeline.Policy{policy{tr: p.tr, v: core.Verdict{Outcome: "maybe"}}}
		}, core.EInternal, core.DecisionDenied, []string{"route", "gate", "policy", "audit"}},
		{"no approver for an asked call", func(p *parts) { p.stg.Decider, p.stg.Approver = decider{tr: p.tr, v: ask}, nil }, core.EDenied, core.DecisionDenied,
			[]string{"route", "gate", "policy", "decide", "journal", "audit"}},
		{"declined", func(p *parts) {
			p.stg.Decider = decider{tr: p.tr, v: ask}
			p.appr.out = core.ApprovalOutcome{Decision: core.DecisionDeclined, Code: core.EDenied, By: "owner", Reason: "not today"}
		}, core.EDenied, core.DecisionDeclined, []string{"route", "gate", "policy", "decide", "journal", "approve", "audit"}},
		{"timed out", func(p *parts) {
			p.stg.Decider = decider{tr: p.tr, v: ask}
			p.appr.out = core.ApprovalOutcome{Decision: core.DecisionTimeout, Code: core.EApprovalTimeout}
		}, core.EApprovalTimeout, core.DecisionTimeout, []string{"route", "gate", "policy", "decide", "journal", "approve", "audit"}},
		{"a policy panics", func(p *parts) { p.stg.Policies = []pipeline.Policy{panicky{tr: p.tr}} }, core.EInternal, core.DecisionError,
			[]string{"route", "gate", "policy", "audit"}},
		{"the dispatch panics", func(p *parts) { p.stg.Dispatch = panicky{tr: p.tr} }, core.EInternal, core.DecisionError,
			[]string{"route", "gate", "policy", "decide", "journal", "dispatch", "respond", "audit"}},
		{"no auditor", func(p *parts) { p.stg.Audit = nil }, pipeline.EAuditUnavailable, "", []string{"route", "gate", "policy", "decide"}},
		{"the record cannot be made durable", func(p *parts) { p.audit.beginErr = errors.New("write audit journal: no space left on device") },
			pipeline.EAuditUnavailable, "", []string{"route", "gate", "policy", "decide", "journal"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newParts()
			tt.change(p)
			res, err := p.run(t, core.KindToolCall)
			if err != nil {
				t.Fatal(err)
			}
			tr, _ := res.(*mcp.CallToolResult)
			if tr == nil || !tr.IsError {
				t.Fatalf("result = %+v, want a tool error", res)
			}
			e, _ := tr.Meta["airlock/error"].(*core.Error)
			if e == nil || e.Code != tt.code {
				t.Errorf("error = %+v, want code %s", tr.Meta["airlock/error"], tt.code)
			}
			if diff := cmp.Diff(tt.ran, p.tr.steps); diff != "" {
				t.Errorf("stages run (-want +got):\n%s", diff)
			}
			if len(p.audit.finished) > 0 {
				rec := p.audit.finished[0]
				if rec.Decision != tt.decision || rec.ErrorCode != tt.code || rec.Status != core.StatusError {
					t.Errorf("audit record: decision %q code %q status %q, want %q %q error", rec.Decision, rec.ErrorCode, rec.Status, tt.decision, tt.code)
				}
			}
		})
	}
}

// The journal stage runs after the rules decided: the durable record of a
// request on its way already says which rule allowed it, or why a person is
// asked (an auto-approved call Airlock stopped in lost its rule).
func TestJournalHoldsTheDecision(t *testing.T) {
	p := newParts()
	p.stg.Decider = decider{tr: p.tr, v: core.Verdict{Outcome: core.Allow, Reason: "rule r1 allows it", RuleID: "r1", RuleSetVersion: 3}}
	if _, err := p.run(t, core.KindToolCall); err != nil {
		t.Fatal(err)
	}
	if got := p.audit.begun[0]; got.Status != core.StatusRunning || got.Decision != core.DecisionAllow || got.RuleID != "r1" || got.RuleSetVersion != 3 || got.Reason != "rule r1 allows it" {
		t.Errorf("journaled record = %+v, want running, allowed by rule r1 (version 3)", got)
	}
	p = newParts()
	p.stg.Decider = decider{tr: p.tr, v: ask}
	if _, err := p.run(t, core.KindToolCall); err != nil {
		t.Fatal(err)
	}
	if got := p.audit.begun[0]; got.Status != core.StatusRunning || got.Decision != "" || got.Reason != "asked: no rule matched" {
		t.Errorf("journaled record = %+v, want running, undecided, asked: no rule matched", got)
	}
	if got := p.audit.finished[0]; got.Decision != core.DecisionApproved || got.Reason != "asked: no rule matched" && !strings.Contains(got.Reason, "(asked: no rule matched)") {
		t.Errorf("finished record = %+v, want approved, with the reason it was asked", got)
	}
}

// A policy that demands a person overrides an auto-approving rule, and the
// approver learns that no rule may release the call.
func TestPolicyForcesAsk(t *testing.T) {
	p := newParts()
	p.stg.Policies = []pipeline.Policy{policy{tr: p.tr, v: core.Verdict{Outcome: core.Ask, By: "builtin:shell-exec", Reason: "sudo is on the ask list"}}}
	if _, err := p.run(t, core.KindToolCall); err != nil {
		t.Fatal(err)
	}
	why := p.appr.why
	if why == nil || !why.Forced || why.Outcome != core.Ask || !strings.Contains(why.Reason, "sudo is on the ask list") || !strings.Contains(why.Reason, "overrides allowed by a rule") {
		t.Errorf("approver was asked with %+v, want a forced ask naming the policy and the rule it overrides", why)
	}
	rec := p.audit.finished[0]
	if rec.Decision != core.DecisionApproved || rec.Status != core.StatusOK || rec.Approver != "owner" {
		t.Errorf("audit record = %+v, want approved by owner and run", rec)
	}
}

// gateAfter allows the first n checks and refuses the rest: an agent
// suspended while its call waited for approval.
type gateAfter struct {
	tr *trace
	n  *int
}

func (g gateAfter) Authorize(context.Context, *core.Request) error {
	g.tr.add("gate")
	if *g.n--; *g.n >= 0 {
		return nil
	}
	return core.Errorf("suspended", "account is suspended")
}

// An approval does not restore access the agent lost while its call
// waited: the call is refused with the gate's reason, not dispatched.
func TestApprovedCallCheckedAgain(t *testing.T) {
	p := newParts()
	n := 1
	p.stg.Gate = gateAfter{tr: p.tr, n: &n}
	p.stg.Decider = decider{tr: p.tr, v: ask}
	res, err := p.run(t, core.KindToolCall)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(p.tr.steps, "dispatch") {
		t.Errorf("stages run = %v: the call was dispatched after the agent lost access", p.tr.steps)
	}
	tr, _ := res.(*mcp.CallToolResult)
	if tr == nil || !tr.IsError || !strings.Contains(tr.Content[0].(*mcp.TextContent).Text, "suspended") {
		t.Errorf("result = %+v, want a tool error with code suspended", res)
	}
	rec := p.audit.finished[0]
	if rec.Decision != core.DecisionDenied || rec.ErrorCode != "suspended" || rec.Approver != "owner" || !strings.Contains(rec.Reason, "after the call was approved") {
		t.Errorf("audit record = %+v, want denied with code suspended after owner's approval", rec)
	}
}

// A refused prompt or resource request is a JSON-RPC error carrying the
// reason code; a source's own protocol error passes through as it is.
func TestNonToolRequests(t *testing.T) {
	p := newParts()
	p.stg.Gate = gate{tr: p.tr, err: core.Errorf("not_subscribed", "no grant")}
	_, err := p.run(t, core.KindPromptGet)
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != pipeline.CodeRefused || !strings.Contains(wire.Message, "[not_subscribed]") {
		t.Errorf("refused prompt: %v, want a JSON-RPC error with code %d naming not_subscribed", err, pipeline.CodeRefused)
	}
	p = newParts()
	own := &jsonrpc.Error{Code: -32602, Message: "unknown prompt"}
	p.stg.Dispatch = dispatcher{tr: p.tr, err: own}
	_, err = p.run(t, core.KindPromptGet)
	if !errors.As(err, &wire) || wire != own {
		t.Errorf("source's own error: %v, want it passed through", err)
	}
	if rec := p.audit.finished[0]; rec.Kind != core.KindPromptGet || rec.Status != core.StatusError {
		t.Errorf("audit record = %+v, want a failed prompts/get", rec)
	}
}

// Every field of the audit record is bounded: a 4 MiB name or argument
// cannot make the audit log (or Activity) huge.
func TestAuditRecordIsBounded(t *testing.T) {
	p := newParts()
	p.stg.Route = router{tr: p.tr, err: core.Errorf("unknown_tool", "no tool named %s", strings.Repeat("x", 4<<20))}
	pl, _ := pipeline.New(p.stg)
	huge := strings.Repeat("n", 4<<20)
	args, _ := json.Marshal(map[string]string{"blob": strings.Repeat("a", 4<<20)})
	pl.Run(context.Background(), &core.Request{Kind: core.KindToolCall, Exposed: huge, Args: args,
		Caller: core.Caller{AgentID: huge, Client: core.ClientInfo{Name: huge, Version: huge}}})
	for _, rec := range [][]core.AuditRecord{p.audit.begun, p.audit.finished} {
		b, _ := json.Marshal(rec)
		if len(b) > pipeline.MaxAuditArgs+10*pipeline.MaxAuditName+2*pipeline.MaxAuditText+1024 {
			t.Errorf("an audit record of a 4 MiB request is %d bytes", len(b))
		}
	}
}

// builtInDispatcher is a dispatcher whose servers are all Airlock's own.
type builtInDispatcher struct{ dispatcher }

func (builtInDispatcher) BuiltIn(string) bool { return true }

// A tool error of Airlock's own servers keeps its Airlock code in the audit
// record; the same claim from a downstream server is not trusted.
func TestBuiltInToolErrorCodeIsAudited(t *testing.T) {
	refusal := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "blocked"}},
		Meta: mcp.Meta{"airlock/error": map[string]any{"code": "task_blocked", "message": "blocked"}}}
	for _, tc := range []struct {
		name     string
		dispatch pipeline.Dispatcher
		want     string
	}{
		{"built-in", builtInDispatcher{dispatcher{res: refusal}}, "task_blocked"},
		{"downstream", dispatcher{res: refusal}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newParts()
			tr := &trace{}
			switch d := tc.dispatch.(type) {
			case builtInDispatcher:
				d.tr = tr
				p.stg.Dispatch = d
			case dispatcher:
				d.tr = tr
				p.stg.Dispatch = d
			}
			if _, err := p.run(t, core.KindToolCall); err != nil {
				t.Fatal(err)
			}
			rec := p.audit.finished[0]
			if rec.Status != core.StatusToolError || rec.ErrorCode != tc.want {
				t.Errorf("audit record status %q code %q, want tool_error with code %q", rec.Status, rec.ErrorCode, tc.want)
			}
		})
	}
}

// Tool arguments that are not a JSON object are refused and recorded before
// anyone is asked: no server can take them (found by a bad-input test: a
// string went to approval, then to the server).
func TestToolArgumentsMustBeAnObject(t *testing.T) {
	for _, args := range []string{`"notobj"`, `[1]`, `42`, `true`} {
		t.Run(args, func(t *testing.T) {
			p := newParts()
			p.stg.Decider = decider{tr: p.tr, v: ask}
			pl, err := pipeline.New(p.stg)
			if err != nil {
				t.Fatal(err)
			}
			res, err := pl.Run(context.Background(), &core.Request{Kind: core.KindToolCall, Exposed: "srv__echo", Args: json.RawMessage(args)})
			if err != nil {
				t.Fatal(err)
			}
			tr, _ := res.(*mcp.CallToolResult)
			e, _ := tr.Meta["airlock/error"].(*core.Error)
			if e == nil || e.Code != core.EInvalid || !strings.Contains(e.Message, "must be a JSON object") {
				t.Errorf("error = %+v, want invalid: must be a JSON object", tr.Meta["airlock/error"])
			}
			if diff := cmp.Diff([]string{"route", "audit"}, p.tr.steps); diff != "" {
				t.Errorf("stages run (-want +got):\n%s", diff)
			}
		})
	}
	for _, args := range []string{``, `null`, ` {"a":1}`} {
		p := newParts()
		pl, _ := pipeline.New(p.stg)
		res, _ := pl.Run(context.Background(), &core.Request{Kind: core.KindToolCall, Exposed: "srv__echo", Args: json.RawMessage(args)})
		if tr, _ := res.(*mcp.CallToolResult); tr == nil || tr.IsError {
			t.Errorf("arguments %q refused: %+v", args, res)
		}
	}
}

// cancelledMidway is a dispatcher whose request is cancelled while the
// server works: it answers anyway, or returns the cancellation.
type cancelledMidway struct {
	cancel func()
	answer bool
}

func (d cancelledMidway) Dispatch(ctx context.Context, _ *core.Request) (mcp.Result, error) {
	d.cancel()
	if d.answer {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran"}}}, nil
	}
	return nil, ctx.Err()
}

// A request Airlock itself cancels (it is stopping) is answered and
// recorded with the reason Airlock gave, and an answer that came anyway
// still reaches the agent; one the agent cancelled is recorded as
// cancelled, and an answer that came anyway is dropped.
func TestCancelledWhileDispatched(t *testing.T) {
	stopping := core.Errorf(core.EShuttingDown, "Airlock stopped")
	for _, tc := range []struct {
		name     string
		cause    error // nil: the agent cancelled
		answer   bool
		wantText string // "": nobody receives the answer
		wantCode string
	}{
		{"agent cancelled", nil, false, "", pipeline.ECancelled},
		{"agent cancelled, answered anyway", nil, true, "", pipeline.ECancelled},
		{"airlock stopping", stopping, false, "Airlock stopped [" + core.EShuttingDown + "]", core.EShuttingDown},
		{"airlock stopping, answered anyway", stopping, true, "ran", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newParts()
			ctx, cancel := context.WithCancelCause(context.Background())
			p.stg.Dispatch = cancelledMidway{cancel: func() { cancel(tc.cause) }, answer: tc.answer}
			pl, err := pipeline.New(p.stg)
			if err != nil {
				t.Fatal(err)
			}
			res, err := pl.Run(ctx, &core.Request{Kind: core.KindToolCall, Exposed: "srv__echo"})
			if err != nil {
				t.Fatal(err)
			}
			tr, _ := res.(*mcp.CallToolResult)
			if tc.wantText == "" && tr != nil && !tr.IsError {
				t.Errorf("result = %+v, want the answer dropped", res)
			}
			if tc.wantText != "" && (tr == nil || len(tr.Content) == 0 || !strings.Contains(tr.Content[0].(*mcp.TextContent).Text, tc.wantText)) {
				t.Errorf("result = %+v, want one whose text has %q", res, tc.wantText)
			}
			if rec := p.audit.finished[0]; rec.ErrorCode != tc.wantCode {
				t.Errorf("audit record code %q, want %q", rec.ErrorCode, tc.wantCode)
			}
		})
	}
}

// A call a person did not approve says what the agent can do now (found by
// a new-user test: these refusals carried no hint).
func TestUnapprovedCallsSayWhatToDo(t *testing.T) {
	for _, tc := range []struct {
		out  core.ApprovalOutcome
		hint string
	}{
		{core.ApprovalOutcome{Decision: core.DecisionTimeout, Code: core.EApprovalTimeout}, "a person has to approve it in Airlock"},
		{core.ApprovalOutcome{Decision: core.DecisionExpired, Code: core.EExpired}, "call again once Airlock runs; nothing ran"},
		{core.ApprovalOutcome{Decision: core.DecisionDeclined, Code: core.EDenied, Reason: "use the staging db"}, "follow the reason given"},
		{core.ApprovalOutcome{Decision: core.DecisionDeclined, Code: core.EDenied}, "do not call it again as it was; ask the person what to do instead"},
	} {
		p := newParts()
		p.stg.Decider = decider{tr: p.tr, v: ask}
		p.appr.out = tc.out
		res, err := p.run(t, core.KindToolCall)
		if err != nil {
			t.Fatal(err)
		}
		tr, _ := res.(*mcp.CallToolResult)
		e, _ := tr.Meta["airlock/error"].(*core.Error)
		if e == nil || !strings.Contains(e.Hint, tc.hint) {
			t.Errorf("%s (reason %q): error %+v, want a hint containing %q", tc.out.Decision, tc.out.Reason, e, tc.hint)
		}
	}
}
