// Package pipeline is the path every MCP request takes through Airlock: an
// explicit, ordered list of named stages that one constructor builds.
//
// The stages, in order (Names returns them):
//
//	route     find the source that serves the name the agent used; an
//	          unknown name is refused (its record says what was asked for)
//	gate      authorization: may this caller use this target at all?
//	policy    built-in policies of the target (tool pins, file/shell policies):
//	          deny, or demand a person whatever the rules say
//	decide    the human-in-the-loop rules: auto-approve or ask
//	journal   make a record of the request durable, with the decision so
//	          far (the rule that allowed it, or why a person is asked),
//	          before it can have any effect: no person is asked and nothing
//	          is sent on unrecorded; when that fails the request is refused
//	          (audit_unavailable). The stages before it only look.
//	approve   hold an asked request until a person decides or it times out
//	dispatch  run it on its source (a downstream server or an in-process one)
//	respond   after-dispatch hooks that add to (or replace) a tool response,
//	          e.g. cross-session notifications; they see refusals too
//	audit     complete the record: decision, reason, result, latency (a
//	          request refused before the journal stage is recorded here,
//	          in one write)
//
// A stage that is missing fails closed: no router or no gate refuses everything, no decider
// asks, no approver refuses what would be asked, no auditor refuses everything.
//
// The package imports core and the MCP SDK only; the stages are implemented
// elsewhere (authz, builtin, hitl, pins, teams, catalog) against the small
// interfaces below, all of which speak core's vocabulary directly.
package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"runtime/debug"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Router finds the source and target of a request from the name the agent
// used (r.Exposed): it fills r.Server, r.Name and, for a tool, r.Tool. It
// returns a *core.Error for a name nothing serves.
type Router interface {
	Route(ctx context.Context, r *core.Request) error
}

// Gate decides whether the caller may use the request's target at all. It
// returns a *core.Error (with a reason code and a hint) to refuse. The same
// authorization filters listings, so a hidden target called by name gets the
// reason it was hidden for.
type Gate interface {
	Authorize(ctx context.Context, r *core.Request) error
}

// Policy is a built-in policy of the target. It returns core.Allow when it
// has no objection, core.Deny to refuse, or core.Ask to demand a person's
// approval whatever the rules say.
type Policy interface {
	Check(ctx context.Context, r *core.Request) core.Verdict
}

// Decider applies the human-in-the-loop rules: core.Allow (auto-approve) or
// core.Ask, naming the rule that decided.
type Decider interface {
	Decide(r *core.Request) core.Verdict
}

// Approver holds a request until a person approves or declines it, or it
// times out. It never approves on timeout or on error. why is the Ask
// verdict that sent it there; auditID is the request's audit record.
type Approver interface {
	Hold(ctx context.Context, r *core.Request, why core.Verdict, auditID int64) (core.ApprovalOutcome, error)
}

// Dispatcher runs a request on the source that serves it and returns the
// MCP result: *mcp.CallToolResult, *mcp.GetPromptResult or
// *mcp.ReadResourceResult.
type Dispatcher interface {
	Dispatch(ctx context.Context, r *core.Request) (mcp.Result, error)
}

// BuiltInDispatcher is a Dispatcher that knows which servers are Airlock's
// own (in-process). Their tool errors carry Airlock error codes in
// _meta["airlock/error"], which the audit record takes over; a downstream
// server's claim to such a code is not trusted.
type BuiltInDispatcher interface {
	Dispatcher
	BuiltIn(server string) bool
}

// Responder sees a tool call's response before the agent does and may add
// to it or replace it (cross-session notifications, interrupts).
type Responder interface {
	Respond(ctx context.Context, r *core.Request, res *mcp.CallToolResult) *mcp.CallToolResult
}

// Auditor records requests. Begin makes the first record of a request
// durable (it assigns rec.ID); Finish completes it. An error from Begin
// refuses the request.
type Auditor interface {
	Begin(rec *core.AuditRecord) error
	Finish(rec *core.AuditRecord) error
}

// Stages are the parts a Pipeline is built from. Nil parts fail closed (see
// the package comment); Dispatch is required.
type Stages struct {
	Route    Router
	Gate     Gate
	Policies []Policy
	Decider  Decider
	Approver Approver
	Dispatch Dispatcher
	Respond  []Responder
	Audit    Auditor
	Logger   *slog.Logger
	// OnAuditError is told when a record cannot be completed after the
	// request ran, so the UI can say that Activity is missing it.
	OnAuditError func(err error)
}

// Pipeline runs requests through the stages.
type Pipeline struct {
	stages []stage
	s      Stages
	log    *slog.Logger
}

type stage struct {
	name string
	// always stages run even after an earlier stage ended the request.
	always bool
	run    func(ctx context.Context, f *flow)
}

// flow is one request on its way through the stages.
type flow struct {
	req   *core.Request
	rec   *core.AuditRecord
	start time.Time
	// asks are the reasons of policies that demand a person.
	asks    []string
	asksBy  []string
	verdict core.Verdict
	done    bool // a stage ended the request (refused, or dispatched)
	// dispatched: the request reached its server (it was not refused).
	dispatched bool
	refusal    *core.Error
	// journaled: the journal stage tried to make the record durable
	// (whether or not it could).
	journaled bool
	res       mcp.Result
	err       error // a protocol error to return as is (non-tool requests)
}

// New builds a pipeline from s. It fails when no dispatcher is given.
func New(s Stages) (*Pipeline, error) {
	if s.Dispatch == nil {
		return nil, errors.New("pipeline: a dispatcher is required")
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Pipeline{s: s, log: s.Logger}
	p.stages = []stage{
		{name: "route", run: p.route},
		{name: "gate", run: p.gate},
		{name: "policy", run: p.policy},
		{name: "decide", run: p.decide},
		{name: "journal", run: p.journal},
		{name: "approve", run: p.approve},
		{name: "dispatch", run: p.dispatch},
		{name: "respond", always: true, run: p.respond},
		{name: "audit", always: true, run: p.audit},
	}
	return p, nil
}

// Names returns the stage names in the order they run.
func (p *Pipeline) Names() []string {
	out := make([]string, len(p.stages))
	for i, s := range p.stages {
		out[i] = s.name
	}
	return out
}

// Run takes r through every stage and returns what the agent receives. A
// refused tool call is a tool error (isError) with the reason code in its
// text and in _meta["airlock/error"], so the model can read it; a refused
// prompt or resource request is a JSON-RPC error carrying the same. A
// server's own JSON-RPC error answer passes through as it is, whatever the
// request.
func (p *Pipeline) Run(ctx context.Context, r *core.Request) (mcp.Result, error) {
	f := &flow{req: r, rec: newRecord(r), start: time.Now()}
	for _, s := range p.stages {
		if f.done && !s.always {
			continue
		}
		p.runStage(ctx, s, f)
	}
	if f.refusal != nil {
		if r.Kind == core.KindToolCall {
			if res, ok := f.res.(*mcp.CallToolResult); ok && res != nil {
				return res, nil // a responder already built on the refusal
			}
			return ErrorResult(f.refusal), nil
		}
		return nil, RPCError(f.refusal)
	}
	if f.err != nil {
		return nil, f.err
	}
	return f.res, nil
}

// runStage runs one stage. A stage that panics (a bug in Airlock or in a
// library it calls) ends the request as an internal error, recorded like
// any other, instead of taking the whole gateway and every agent's
// session down with it; the stack goes to the log.
func (p *Pipeline) runStage(ctx context.Context, s stage, f *flow) {
	defer func() {
		if r := recover(); r != nil {
			p.log.Error("a pipeline stage panicked; the request is refused", "stage", s.name, "tool", f.req.Exposed, "panic", r, "stack", string(debug.Stack()))
			f.refuse(core.DecisionError, core.Errorf(core.EInternal, "Airlock failed while handling this request (%s: %v); it did not complete", s.name, r))
		}
	}()
	s.run(ctx, f)
}

// refuse ends the request with err, recording decision.
func (f *flow) refuse(decision string, err error) {
	var e *core.Error
	if !errors.As(err, &e) {
		e = &core.Error{Code: core.EInternal, Message: err.Error()}
	}
	f.done = true
	f.refusal = e
	f.rec.Decision = decision
	f.rec.Status = core.StatusError
	f.rec.ErrorCode = e.Code
	f.rec.Error = e.Message
	if f.rec.Reason == "" {
		f.rec.Reason = e.Message
	} else if decision != core.DecisionDenied && decision != core.DecisionError {
		f.rec.Reason = e.Message + " (" + f.rec.Reason + ")"
	}
	if f.req.Kind == core.KindToolCall {
		f.res = ErrorResult(e)
	}
}

// auditHint says what would let Airlock record requests again, from why
// the journal write failed.
func auditHint(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "free disk space in Airlock's data directory; the Activity screen shows the error"
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return "make Airlock's data directory and its journal folder writable again; the Activity screen shows the error"
	default:
		return "check Airlock's data directory (disk space, permissions); the Activity screen shows the error"
	}
}

func (p *Pipeline) journal(_ context.Context, f *flow) {
	f.journaled = true
	if p.s.Audit == nil {
		f.refuse(core.DecisionError, core.Errorf(EAuditUnavailable, "Airlock cannot record this request (no audit log), so it refuses it"))
		return
	}
	if err := p.s.Audit.Begin(f.rec); err != nil {
		p.log.Error("audit record could not be made durable; refusing the request", "err", err)
		f.refuse(core.DecisionError, (&core.Error{Code: EAuditUnavailable,
			Message: "Airlock cannot record this request, so it refuses it: " + core.ErrorMessage(err)}).
			WithHint(auditHint(err)))
		if p.s.OnAuditError != nil {
			p.s.OnAuditError(err)
		}
		return
	}
}

func (p *Pipeline) route(ctx context.Context, f *flow) {
	if p.s.Route == nil {
		f.refuse(core.DecisionError, core.Errorf(core.EInternal, "Airlock has no routing stage, so it refuses every request"))
		return
	}
	if err := p.s.Route.Route(ctx, f.req); err != nil {
		f.refuse(core.DecisionError, err)
		return
	}
	f.rec.Server, f.rec.Tool = f.req.Server, f.req.Name
	ClipRecord(f.rec)
	if f.req.Kind == core.KindToolCall {
		if err := checkToolArgs(f.req.Args); err != nil {
			f.refuse(core.DecisionError, err)
		}
	}
}

// checkToolArgs refuses tool arguments that are not a JSON object (MCP's
// CallToolRequest): a person would be asked to approve a call no server
// can take, and the server would get it.
func checkToolArgs(args json.RawMessage) error {
	t := bytes.TrimSpace(args)
	if len(t) == 0 || t[0] == '{' || bytes.Equal(t, []byte("null")) {
		return nil
	}
	what := map[byte]string{'[': "an array", '"': "a string", 't': "true", 'f': "false"}[t[0]]
	if what == "" {
		what = "a number"
	}
	return (&core.Error{Code: core.EInvalid, Message: "the arguments of a tool call must be a JSON object, not " + what}).
		WithHint(`pass them as {"name": value, ...}`)
}

func (p *Pipeline) gate(ctx context.Context, f *flow) {
	if p.s.Gate == nil {
		f.refuse(core.DecisionDenied, core.Errorf(core.EInternal, "Airlock has no authorization stage, so it refuses every request"))
		return
	}
	if err := p.s.Gate.Authorize(ctx, f.req); err != nil {
		f.refuse(core.DecisionDenied, err)
	}
}

func (p *Pipeline) policy(ctx context.Context, f *flow) {
	for _, pol := range p.s.Policies {
		v := pol.Check(ctx, f.req)
		switch v.Outcome {
		case core.Allow:
		case core.Ask:
			f.asks = append(f.asks, v.Reason)
			f.asksBy = append(f.asksBy, v.By)
		default: // Deny, or an outcome this pipeline does not know: refuse
			if v.Outcome != core.Deny {
				v = core.Verdict{Outcome: core.Deny, Code: core.EInternal, By: v.By,
					Reason: fmt.Sprintf("a policy gave an unknown verdict %q", v.Outcome)}
			}
			f.rec.Reason = ""
			f.refuse(core.DecisionDenied, v.Err())
			return
		}
	}
}

func (p *Pipeline) decide(_ context.Context, f *flow) {
	v := core.Verdict{Outcome: core.Ask, By: "pipeline", Reason: "no rules are loaded: approval required"}
	if p.s.Decider != nil {
		v = p.s.Decider.Decide(f.req)
	}
	if v.Outcome != core.Allow {
		v.Outcome = core.Ask // the rules never deny; anything else asks
	}
	f.rec.RuleID, f.rec.RuleSetVersion = v.RuleID, v.RuleSetVersion
	if len(f.asks) > 0 {
		reason := joinReasons(f.asks)
		if v.Outcome == core.Allow {
			reason += " (overrides " + v.Reason + ")"
		}
		v.Outcome, v.Forced, v.Reason, v.By = core.Ask, true, reason, f.asksBy[0]
	}
	f.verdict = v
	// The journal stage records the decision so far: a request Airlock
	// stops in is then known to have been allowed, and by which rule.
	if v.Outcome == core.Allow {
		f.rec.Decision, f.rec.Reason = core.DecisionAllow, v.Reason
	} else {
		f.rec.Reason = "asked: " + v.Reason
	}
}

func joinReasons(rs []string) string {
	out := rs[0]
	for _, r := range rs[1:] {
		out += "; " + r
	}
	return out
}

func (p *Pipeline) approve(ctx context.Context, f *flow) {
	v := f.verdict
	if v.Outcome == core.Allow {
		return // decide recorded it
	}
	if p.s.Approver == nil {
		f.refuse(core.DecisionDenied, core.Errorf(core.EDenied, "approval required (%s) but nobody can approve calls right now", v.Reason))
		return
	}
	out, err := p.s.Approver.Hold(ctx, f.req, v, f.rec.ID)
	f.rec.Approver, f.rec.WaitMs = out.By, out.WaitedMs
	if why := haltedBy(ctx); why != nil && errors.Is(err, context.Canceled) {
		err = why
	} else if errors.Is(err, context.Canceled) {
		who := "the agent"
		if f.req.Kind == core.KindSampling || f.req.Kind == core.KindElicitation {
			who = "the server (or the agent whose call it was handling)" // a relayed request
		}
		err = &core.Error{Code: ECancelled, Message: who + " cancelled the request while it waited for approval"}
	}
	if err != nil {
		f.refuse(core.DecisionError, err)
		return
	}
	if !out.Approved {
		code := out.Code
		if code == "" {
			code = core.EDenied
		}
		name := f.req.Exposed
		var msg string
		switch out.Decision {
		case core.DecisionTimeout:
			msg = fmt.Sprintf("the call to %s was not approved in time", name)
		case core.DecisionExpired:
			msg = fmt.Sprintf("the call to %s was lost when Airlock stopped", name)
		default:
			msg = fmt.Sprintf("the call to %s was %s", name, out.Decision)
			if out.By != "" {
				msg += " by " + out.By
			}
		}
		if out.Reason != "" {
			msg += ": " + out.Reason
		} else if out.Decision == core.DecisionDeclined {
			msg += " without a reason"
		}
		decision := out.Decision
		if decision == "" {
			decision = core.DecisionDeclined
		}
		// What the agent can do now (found by a new-user test: these
		// refusals said nothing of it).
		var hint string
		switch out.Decision {
		case core.DecisionTimeout:
			hint = "a person has to approve it in Airlock: ask them, or call again when someone is there; the wait is set on Airlock's Approvals screen"
		case core.DecisionExpired:
			hint = "call again once Airlock runs; nothing ran"
		case core.DecisionDeclined:
			hint = "do not call it again as it was; follow the reason given, or ask the person what to do instead"
			if out.Reason == "" {
				hint = "do not call it again as it was; ask the person what to do instead"
			}
		default:
			hint = "do not call it again as it was; ask the person what to do instead"
		}
		f.refuse(decision, (&core.Error{Code: code, Message: msg}).WithHint(hint))
		return
	}
	f.rec.Decision = core.DecisionApproved
	if out.Reason != "" {
		f.rec.Reason = out.Reason + " (" + f.rec.Reason + ")"
	}
	// The wait can be long: the agent may have been suspended, or lost the
	// server or tool, meanwhile. A person's approval does not restore
	// access that is gone; the gate decides again.
	if p.s.Gate == nil {
		f.refuse(core.DecisionDenied, core.Errorf(core.EInternal, "Airlock has no authorization stage, so it refuses every request"))
		return
	}
	if err := p.s.Gate.Authorize(ctx, f.req); err != nil {
		e := &core.Error{Code: core.EInternal, Message: err.Error()}
		if ce := (*core.Error)(nil); errors.As(err, &ce) {
			c := *ce
			e = &c
		}
		e.Message += " (checked again after the call was approved: access changed while it waited)"
		f.rec.Reason = ""
		f.refuse(core.DecisionDenied, e)
	}
}

func (p *Pipeline) dispatch(ctx context.Context, f *flow) {
	f.done, f.dispatched = true, true
	res, err := p.s.Dispatch.Dispatch(ctx, f.req)
	if why := haltedBy(ctx); why != nil {
		// Airlock ended the request (it is stopping), not the agent: the
		// agent is still there to hear why, or the answer if it came.
		if errors.Is(err, context.Canceled) {
			err = why
		}
	} else if errors.Is(ctx.Err(), context.Canceled) && (err == nil || errors.Is(err, context.Canceled)) {
		// The agent cancelled the request while the server worked. Even
		// when the server answered anyway (an input request it made
		// failed, say), the record says cancelled, and so does an answer
		// that is still sent (the SDK sends none to an agent that
		// cancelled with notifications/cancelled; one whose client ended
		// the session with DELETE gets it).
		res, err = nil, cancelled(ctx)
	}
	if err != nil {
		f.rec.Status, f.rec.ErrorCode, f.rec.Error = core.StatusError, core.ErrorCode(err), core.ErrorMessage(err)
		if errors.Is(err, context.Canceled) {
			f.rec.ErrorCode = ECancelled
		}
		var wire *jsonrpc.Error
		switch {
		case errors.As(err, &wire):
			// The server's own protocol error passes through as it is, for
			// a tool call too: the agent gets the code and data it would
			// get from the server directly (found by an interop test: a
			// -32602 with data became a tool error with text). The record
			// says error, with code downstream_error.
			f.err = wire
		case f.req.Kind == core.KindToolCall:
			f.res = ErrorResult(err)
		default:
			f.err = RPCError(err)
		}
		return
	}
	f.res = res
	f.rec.Status = core.StatusOK
	if tr, ok := res.(*mcp.CallToolResult); ok && tr.IsError {
		f.rec.Status = core.StatusToolError
		f.rec.Error = firstText(tr)
		if b, ok := p.s.Dispatch.(BuiltInDispatcher); ok && b.BuiltIn(f.req.Server) {
			f.rec.ErrorCode = airlockCode(tr)
		}
	}
}

// cancelled is the error of a request its agent cancelled, from why ctx
// ended: with the reason the agent gave, or because its client ended the
// session.
func cancelled(ctx context.Context) *core.Error {
	msg := "the agent cancelled the request"
	var byPeer *mcp.CancelledByPeer
	switch cause := context.Cause(ctx); {
	case errors.As(cause, &byPeer) && byPeer.Reason != "":
		msg += ": " + byPeer.Reason
	case errors.Is(cause, mcp.ErrSessionEnded):
		msg = "the agent's client ended its session while the request ran"
	}
	return &core.Error{Code: ECancelled, Message: msg}
}

// haltedBy is the reason Airlock gave when it cancelled ctx itself (the
// gateway ends the calls still running when it stops), or nil: not
// cancelled, or cancelled by the agent.
func haltedBy(ctx context.Context) *core.Error {
	if ctx.Err() == nil {
		return nil
	}
	var e *core.Error
	if errors.As(context.Cause(ctx), &e) {
		return e
	}
	return nil
}

// airlockCode is the code of an Airlock error in a tool result's
// _meta["airlock/error"], "" when there is none.
func airlockCode(tr *mcp.CallToolResult) string {
	switch e := tr.Meta["airlock/error"].(type) {
	case *core.Error:
		return e.Code
	case core.Error:
		return e.Code
	case map[string]any:
		c, _ := e["code"].(string)
		return c
	}
	return ""
}

func (p *Pipeline) respond(ctx context.Context, f *flow) {
	// A refused call ran nothing: what responders add (notifications) waits
	// for a call that did, rather than riding on a refusal a client may
	// show as one line of error.
	if f.req.Kind != core.KindToolCall || len(p.s.Respond) == 0 || !f.dispatched {
		return
	}
	// Nor on the answer to a call the client cancelled: nobody reads it,
	// and what a responder claims for it is marked delivered (found by a
	// seed audit: a notification went with a cancelled call and was lost).
	if ctx.Err() != nil {
		return
	}
	tr, _ := f.res.(*mcp.CallToolResult)
	if tr == nil {
		return
	}
	for _, r := range p.s.Respond {
		if next := r.Respond(ctx, f.req, tr); next != nil {
			tr = next
		}
	}
	f.res = tr
}

func (p *Pipeline) audit(_ context.Context, f *flow) {
	f.rec.LatencyUs = time.Since(f.start).Microseconds()
	if p.s.Audit == nil || (f.rec.ID == 0 && f.journaled) {
		return // the journal stage could not record it, refused it and said why
	}
	ClipRecord(f.rec)
	write := p.s.Audit.Finish
	if f.rec.ID == 0 {
		// Refused before the journal stage, so it had no effect: its
		// record is made now, complete, in one write.
		write = p.s.Audit.Begin
	}
	if err := write(f.rec); err != nil {
		p.log.Error("audit record could not be completed", "id", f.rec.ID, "err", err)
		if p.s.OnAuditError != nil {
			p.s.OnAuditError(err)
		}
	}
}

// Error codes the pipeline gives.
const (
	// EAuditUnavailable: the request's record could not be made durable.
	EAuditUnavailable = "audit_unavailable"
	// ECancelled: the agent cancelled the request.
	ECancelled = "cancelled"
)

// newRecord starts the audit record of r.
func newRecord(r *core.Request) *core.AuditRecord {
	rec := &core.AuditRecord{
		Time:          time.Now().UTC(),
		Kind:          r.Kind,
		Agent:         r.Caller.Label(),
		AgentID:       r.Caller.AgentID,
		Client:        r.Caller.Client.Name,
		ClientVersion: r.Caller.Client.Version,
		Session:       r.Caller.Session,
		AuthSession:   r.Caller.AuthSession,
		Purpose:       r.Caller.Purpose,
		Server:        r.Server,
		Tool:          r.Name,
		Arguments:     RedactArguments(r.Args),
		ArgsDigest:    digest(r.Args),
		Status:        core.StatusRunning,
	}
	if rec.Tool == "" {
		rec.Tool = r.Exposed // not routed yet
	}
	ClipRecord(rec)
	return rec
}

// Limits on what one audit record stores: a request with a 4 MiB tool name
// or argument must not make Activity (or the database) huge.
const (
	MaxAuditName = 256      // agent, client, session, server, tool/URI
	MaxAuditText = 2000     // reason, error
	MaxAuditArgs = 16 << 10 // the redacted arguments
)

// ClipRecord cuts every field of rec to its limit.
func ClipRecord(rec *core.AuditRecord) {
	for _, s := range []*string{&rec.Agent, &rec.AgentID, &rec.Client, &rec.ClientVersion, &rec.Session, &rec.Server, &rec.Tool, &rec.RuleID, &rec.Approver, &rec.ErrorCode, &rec.Purpose} {
		*s = clip(*s, MaxAuditName)
	}
	rec.Reason = clip(rec.Reason, MaxAuditText)
	rec.Error = clip(rec.Error, MaxAuditText)
	rec.Arguments = clip(rec.Arguments, MaxAuditArgs)
}

const cutMark = "…(cut)"

// clip returns s cut to at most n bytes (plus a marker), on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + cutMark
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ErrorResult is a tool error carrying the reason code in its text (for the
// model) and in _meta["airlock/error"] (for programs).
func ErrorResult(err error) *mcp.CallToolResult {
	e := asError(err)
	text := fmt.Sprintf("Airlock: %s [%s]", e.Message, e.Code)
	if e.Hint != "" {
		text += "\nHint: " + e.Hint
	}
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: text}},
		Meta:    mcp.Meta{"airlock/error": e},
	}
}

// CodeRefused is the JSON-RPC error code of a refused prompt or resource
// request (in the range JSON-RPC leaves to servers). The error's data is the
// *core.Error. Not -32001, which the TypeScript SDK names RequestTimeout
// and -32000 ConnectionClosed (found by an interop test: a refusal read as
// a timeout), nor a code of MCP's or of the Go SDK's own.
const CodeRefused = -32010

// RPCError is the JSON-RPC error of a refused non-tool request.
func RPCError(err error) *jsonrpc.Error {
	e := asError(err)
	data, _ := jsonMarshal(e)
	msg := fmt.Sprintf("Airlock: %s [%s]", e.Message, e.Code)
	if e.Hint != "" {
		msg += " Hint: " + e.Hint
	}
	code := int64(CodeRefused)
	switch e.Code {
	case "unknown_resource": // catalog.EUnknownResource
		// MCP's own code for it, as a server answers (found by an interop
		// test); the reason is in the data as for any refusal.
		code = CodeResourceNotFound
	case "unknown_prompt": // catalog.EUnknownPrompt
		// MCP's code for an invalid prompt name, as a server answers it
		// (found by an interop test: -32001).
		code = jsonrpc.CodeInvalidParams
	case core.EInvalid:
		// A request that is not one Airlock (or MCP) can take as it is.
		code = jsonrpc.CodeInvalidRequest
	}
	return &jsonrpc.Error{Code: code, Message: msg, Data: data}
}

// CodeResourceNotFound is MCP's JSON-RPC error code for a resource that
// does not exist.
const CodeResourceNotFound = -32002

func asError(err error) *core.Error {
	var e *core.Error
	if !errors.As(err, &e) {
		e = &core.Error{Code: core.EInternal, Message: err.Error()}
	}
	return e
}

func firstText(res *mcp.CallToolResult) string {
	res.DecodeVerbatim() // a server's result as it came (see catalog); left empty if it cannot be read
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return clip(t.Text, 500)
		}
	}
	return ""
}
