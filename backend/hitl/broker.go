package hitl

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
)

// ApprovalStore persists approvals, so that a restart records the calls
// that were waiting instead of losing them.
type ApprovalStore interface {
	SaveApproval(a Approval) error // insert or update by ID
	LoadApproval(id string) (Approval, bool, error)
	ExpirePendingApprovals(at time.Time) ([]Approval, error)
}

// Approval statuses.
const (
	StatusPending   = "pending"
	StatusApproved  = "approved"
	StatusDeclined  = "declined"
	StatusTimeout   = "timeout"
	StatusExpired   = "expired"   // Airlock stopped while the call waited
	StatusCancelled = "cancelled" // the caller went away while it waited
)

// Risk levels of an approval, from the tool's MCP annotations.
const (
	RiskDestructive = "destructive"
	RiskOpenWorld   = "open_world"
	RiskReadOnly    = "read_only"
	// RiskModifies: the tool changes data but, by its annotations, destroys
	// nothing and stays on this machine.
	RiskModifies = "modifies"
	RiskUnknown  = "unknown"
)

// Approval is a waiting (or decided) call as the UI shows it.
type Approval struct {
	ID string `json:"id"`
	// AuditID is the audit record of the request (0 when unknown).
	AuditID int64 `json:"auditId,omitempty"`
	// Kind is the request kind: tools/call, prompts/get or resources/read.
	Kind    string `json:"kind"`
	Agent   string `json:"agent"` // the caller's label
	AgentID string `json:"agentId,omitempty"`
	// Client and ClientVersion are the MCP client's own words, shown apart
	// from the agent: "claude-code" and "2.1.0".
	Client         string                `json:"client,omitempty"`
	ClientVersion  string                `json:"clientVersion,omitempty"`
	Purpose        string                `json:"purpose,omitempty"`
	Session        string                `json:"session"`
	Server         string                `json:"server"`
	Tool           string                `json:"tool"`
	ExposedName    string                `json:"exposedName"`
	Arguments      json.RawMessage       `json:"arguments"`
	Annotations    *core.ToolAnnotations `json:"annotations,omitempty"`
	Risk           string                `json:"risk"`
	Warning        string                `json:"warning"`
	ForcedBy       string                `json:"forcedBy,omitempty"`
	RuleID         string                `json:"ruleId"`
	Reason         string                `json:"reason"`
	RuleSetVersion int64                 `json:"ruleSetVersion"`
	CreatedAt      time.Time             `json:"createdAt"`
	Deadline       time.Time             `json:"deadline"`
	// Task is what the caller is working on, when it has a task in
	// progress (SPEC §4: the dialog shows the current task).
	Task          *TaskRef   `json:"task,omitempty"`
	Status        string     `json:"status"`
	DecidedBy     string     `json:"decidedBy,omitempty"`
	DeclineReason string     `json:"declineReason,omitempty"`
	DecidedAt     *time.Time `json:"decidedAt,omitempty"`
}

// Breadths of the rule "Approve and add rule" creates.
const (
	BreadthTool     = "tool"      // this server and tool
	BreadthToolArgs = "tool_args" // this tool with exactly these arguments, nothing added
	BreadthServer   = "server"    // every tool of this server
)

// Who a rule made with ApproveAndAddRule is for.
const (
	ScopeAgent    = "agent"    // only the agent whose call it was
	ScopeSession  = "session"  // only the MCP session the call came on (and its agent)
	ScopeEveryone = "everyone" // every agent
)

// Expiries of the rule "Approve and add rule" creates.
var ruleExpiries = map[string]time.Duration{"none": 0, "": 0, "1h": time.Hour, "8h": 8 * time.Hour, "24h": 24 * time.Hour}

// BrokerOptions configures a Broker. Zero values are sensible.
type BrokerOptions struct {
	Timeout          time.Duration // how long a call waits for a person; default 5 minutes
	ProgressInterval time.Duration // default 5 seconds
	// CurrentTask says which task a caller is working on, for the dialog;
	// nil, or nil returned, when none.
	CurrentTask func(c core.Caller) *TaskRef
	Events      core.EventSink
	Now         func() time.Time
	Logger      *slog.Logger
}

// TaskRef names a task of the board: where the dialog links to.
type TaskRef struct {
	ID        string `json:"id"`
	ProjectID string `json:"projectId"`
	Title     string `json:"title"`
}

// Broker holds calls that need a person's approval until someone decides,
// the timeout passes (declined, never approved) or the caller goes away.
type Broker struct {
	rules *Rules
	store ApprovalStore
	opts  BrokerOptions

	mu      sync.Mutex
	timeout time.Duration
	pending map[string]*waiting
	seq     uint64
	stopped bool // Airlock is stopping: no call waits any more
}

type waiting struct {
	a        Approval
	req      core.Request // a copy: the rules re-decide it after every change
	forced   bool
	deciding bool // ApproveAndAddRule is creating its rule
	seq      uint64
	done     chan struct{}
}

// NewBroker returns a broker deciding with rules and persisting to st. It
// subscribes to rule changes, so a new auto-approve rule releases matching
// waiting calls (see Recheck).
func NewBroker(rules *Rules, st ApprovalStore, opts BrokerOptions) *Broker {
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Minute
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = 5 * time.Second
	}
	if opts.Events == nil {
		opts.Events = core.Discard
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	b := &Broker{rules: rules, store: st, opts: opts, timeout: opts.Timeout, pending: map[string]*waiting{}}
	rules.OnChange(func(int64) { b.Recheck() })
	return b
}

// SetTimeout changes the timeout for calls that start waiting from now on.
func (b *Broker) SetTimeout(d time.Duration) error {
	if d <= 0 {
		return core.Errorf(core.EInvalid, "approval timeout must be positive, got %s", d)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.timeout = d
	return nil
}

// Timeout returns the current approval timeout.
func (b *Broker) Timeout() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.timeout
}

func (b *Broker) now() time.Time { return b.opts.Now().UTC() }

// RecoverExpired marks every approval still pending in the store as
// expired. Call it once at startup, before the gateway accepts calls: those
// calls' callers are gone, and the record must say so.
func (b *Broker) RecoverExpired() ([]Approval, error) {
	expired, err := b.store.ExpirePendingApprovals(b.now())
	if err != nil {
		return nil, fmt.Errorf("expire pending approvals: %w", err)
	}
	return expired, nil
}

var _ interface {
	Hold(context.Context, *core.Request, core.Verdict, int64) (core.ApprovalOutcome, error)
} = (*Broker)(nil)

// Hold asks a person to decide on r, which the verdict why (an Ask)
// sent here, and blocks until they do, the timeout passes or ctx ends. Only
// an explicit approval (or, unless why is Forced, a rule change that now
// auto-approves the request) approves; a timeout declines with code
// core.EApprovalTimeout. It implements the pipeline's approve stage.
func (b *Broker) Hold(ctx context.Context, r *core.Request, why core.Verdict, auditID int64) (core.ApprovalOutcome, error) {
	if r.Server == "" || r.Name == "" {
		return core.ApprovalOutcome{}, core.Errorf(core.EInvalid, "an approval request needs a server and a target")
	}
	a := Approval{
		ID: newID(), AuditID: auditID, Kind: r.Kind, Agent: r.Caller.Label(), AgentID: r.Caller.AgentID,
		Client: r.Caller.Client.Name, ClientVersion: r.Caller.Client.Version, Purpose: r.Caller.Purpose,
		Session: r.Caller.Session, Server: r.Server, Tool: r.Name,
		ExposedName: r.Exposed, Arguments: normalizeArgs(r.Args),
		RuleID: why.RuleID, Reason: why.Reason, RuleSetVersion: why.RuleSetVersion, Status: StatusPending,
	}
	if r.Tool != nil {
		a.Annotations = r.Tool.Annotations
	}
	if a.Kind == "" {
		a.Kind = core.KindToolCall
	}
	a.Risk, a.Warning = riskOf(a.Kind, a.Annotations)
	if b.opts.CurrentTask != nil && r.Caller.AgentID != "" {
		a.Task = b.opts.CurrentTask(r.Caller)
	}
	if why.Forced {
		a.ForcedBy = why.Reason
		a.Warning = "Asked whatever the rules say: " + why.Reason + ". " + a.Warning
	}
	b.mu.Lock()
	timeout := b.timeout
	b.mu.Unlock()
	a.CreatedAt = b.now()
	a.Deadline = a.CreatedAt.Add(timeout)
	if err := b.store.SaveApproval(a); err != nil {
		return core.ApprovalOutcome{}, fmt.Errorf("save approval: %w", err)
	}
	w := &waiting{a: a, req: *r, forced: why.Forced, done: make(chan struct{})}
	w.req.Progress = nil // the copy is for re-deciding only
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		a.Status = StatusExpired
		now := b.now()
		a.DecidedAt = &now
		if err := b.store.SaveApproval(a); err != nil {
			b.opts.Logger.Warn("save approval", "id", a.ID, "err", err)
		}
		return outcomeOf(a), nil
	}
	b.seq++
	w.seq = b.seq
	b.pending[a.ID] = w
	b.mu.Unlock()
	b.opts.Events.Emit(core.EventApprovalRequested, a)

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	tick := time.NewTicker(b.opts.ProgressInterval)
	defer tick.Stop()
	start := time.Now()
	var ctxErr error
wait:
	for {
		select {
		case <-w.done:
			break wait
		case <-timer.C:
			b.finish(a.ID, StatusTimeout, "", "", true)
		case <-ctx.Done():
			if b.finish(a.ID, StatusCancelled, "", "", true) == nil {
				ctxErr = ctx.Err()
			}
		case <-tick.C:
			if r.Progress != nil {
				// Keep clients that reset their timeout on progress waiting.
				r.Progress(time.Since(start).Seconds(), timeout.Seconds(), "waiting for a person to approve "+r.Exposed+" in Airlock")
			}
		}
	}
	b.mu.Lock()
	final := w.a
	b.mu.Unlock()
	out := outcomeOf(final)
	out.WaitedMs = time.Since(start).Milliseconds()
	return out, ctxErr
}

func outcomeOf(a Approval) core.ApprovalOutcome {
	o := core.ApprovalOutcome{ApprovalID: a.ID, By: a.DecidedBy}
	switch a.Status {
	case StatusApproved:
		o.Approved, o.Decision, o.Reason = true, core.DecisionApproved, "approved by "+a.DecidedBy
	case StatusDeclined:
		o.Decision, o.Code = core.DecisionDeclined, core.EDenied
		o.Reason = a.DeclineReason // "" when the person gave none
	case StatusTimeout:
		o.Decision, o.Code = core.DecisionTimeout, core.EApprovalTimeout
		o.Reason = fmt.Sprintf("nobody approved the call within %s; it was declined", a.Deadline.Sub(a.CreatedAt).Round(time.Second))
	case StatusCancelled:
		o.Decision, o.Code = core.DecisionDeclined, core.EDenied
		o.Reason = "the call was cancelled while it waited for approval"
	default:
		o.Decision, o.Code = core.DecisionExpired, core.EExpired
		o.Reason = "Airlock stopped while the call waited for approval; nobody approved it"
	}
	return o
}

// Stop declines every call waiting for approval as expired (Airlock is
// stopping: nobody can approve them any more, and their agents get an
// answer instead of a connection that hangs until Airlock is gone), and
// every call that asks after it at once.
func (b *Broker) Stop() {
	b.mu.Lock()
	b.stopped = true
	ids := make([]string, 0, len(b.pending))
	for id := range b.pending {
		ids = append(ids, id)
	}
	b.mu.Unlock()
	for _, id := range ids {
		b.finish(id, StatusExpired, "", "", true)
	}
}

func normalizeArgs(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	if !json.Valid(raw) {
		b, _ := json.Marshal(string(raw))
		return b
	}
	return append(json.RawMessage(nil), raw...)
}

// Risk classifies a tool by its MCP annotations and returns the warning the
// dialog shows. MCP's defaults apply to hints that are absent: a tool that
// is not read-only is assumed destructive and open-world.
func Risk(ann *core.ToolAnnotations) (risk, warning string) {
	return riskOf(core.KindToolCall, ann)
}

// riskOf is Risk for any request kind: reading a resource or getting a
// prompt changes nothing.
func riskOf(kind string, ann *core.ToolAnnotations) (risk, warning string) {
	switch kind {
	case core.KindResourceRead:
		return RiskReadOnly, "Reading a resource changes nothing, but its content reaches the agent."
	case core.KindPromptGet:
		return RiskReadOnly, "A prompt is a message template: getting it changes nothing."
	case core.KindSampling:
		return RiskOpenWorld, "The server asks the agent's client to run its language model: this spends the client's model tokens, and the model's reply goes back to the server."
	case core.KindElicitation:
		return RiskReadOnly, "The server asks the person at the agent's client for input; the client shows its own form, and what is entered goes back to the server."
	}
	switch {
	case ann == nil:
		return RiskUnknown, "The server does not say what this tool does. Treat it as able to change or delete data."
	case ann.ReadOnly != nil && *ann.ReadOnly:
		return RiskReadOnly, "The server marks this tool as read-only: it should not change anything."
	case ann.Destructive == nil || *ann.Destructive:
		return RiskDestructive, "This tool may delete or overwrite data. Check the arguments before approving."
	case ann.OpenWorld == nil || *ann.OpenWorld:
		return RiskOpenWorld, "This tool reaches outside this machine (the internet or other systems)."
	}
	return RiskModifies, "This tool may change data; the server says it destroys nothing and stays on this machine."
}

// Pending returns the waiting approvals, oldest first.
func (b *Broker) Pending() []Approval {
	type entry struct {
		seq uint64
		a   Approval
	}
	b.mu.Lock()
	es := make([]entry, 0, len(b.pending))
	for _, w := range b.pending {
		es = append(es, entry{w.seq, w.a})
	}
	b.mu.Unlock()
	sort.Slice(es, func(i, j int) bool { return es[i].seq < es[j].seq })
	out := make([]Approval, len(es))
	for i, e := range es {
		out[i] = e.a
	}
	return out
}

// Approve lets the waiting call id run.
func (b *Broker) Approve(id, by string) error {
	return b.finish(id, StatusApproved, by, "", false)
}

// Decline refuses the waiting call id; reason, when given, is returned to
// the agent.
func (b *Broker) Decline(id, reason, by string) error {
	return b.finish(id, StatusDeclined, by, reason, false)
}

// ApproveAndAddRule creates an auto-approve rule for the call waiting as id
// and approves the call. breadth is "tool" (this server and tool),
// "tool_args" (this tool with equals conditions on each top-level argument)
// or "server" (every tool of the server); expiry is "none", "1h", "8h" or
// "24h"; scope is "agent" (only the agent whose call it was), "session"
// (only the MCP session it came on) or "everyone". The rule gets a priority one above the rule that sent the
// call here, so the next identical call passes. If the rule cannot be
// created, nothing changes.
func (b *Broker) ApproveAndAddRule(id, breadth, expiry, scope, by string) (Rule, error) {
	d, ok := ruleExpiries[expiry]
	if !ok {
		return Rule{}, core.Errorf(core.EInvalid, "unknown expiry %q (use none, 1h, 8h or 24h)", expiry)
	}
	if scope != ScopeAgent && scope != ScopeSession && scope != ScopeEveryone {
		return Rule{}, core.Errorf(core.EInvalid, "unknown scope %q (use agent, session or everyone)", scope)
	}
	b.mu.Lock()
	w, err := b.decidableLocked(id)
	if err != nil {
		b.mu.Unlock()
		return Rule{}, err
	}
	in, err := ruleForCall(&w.req, breadth)
	if err == nil && scope == ScopeAgent {
		if agent := w.req.Caller.AgentID; agent != "" {
			in.AgentID = &agent
		} else {
			err = core.Errorf(core.EInvalid, "this call came from no identified agent, so a rule for its agent cannot be made; choose every agent")
		}
	}
	if err == nil && scope == ScopeSession {
		// "Don't ask again this session", as Claude Code says it (found by
		// a new-user test: only the agent, or everyone, could be chosen).
		if sess := w.req.Caller.Session; sess != "" {
			in.SessionID = &sess
			if agent := w.req.Caller.AgentID; agent != "" {
				in.AgentID = &agent
			}
		} else {
			err = core.Errorf(core.EInvalid, "this call came on no MCP session (a 2026-07-28 client), so a rule for its session cannot be made; choose its agent")
		}
	}
	if err != nil {
		b.mu.Unlock()
		return Rule{}, err
	}
	w.deciding = true // keeps Recheck and other deciders off while the rule is created
	b.mu.Unlock()

	now := b.now()
	if d > 0 {
		exp := now.Add(d)
		in.ExpiresAt = &exp
	}
	if cur := b.rules.Engine().DecideAt(&w.req, now); cur.RuleID != "" {
		if r, ok := b.rules.Engine().Rule(cur.RuleID); ok {
			in.Priority = r.Priority + 1
		}
	}
	rule, err := b.rules.Create(in)
	b.mu.Lock()
	w.deciding = false
	b.mu.Unlock()
	if err != nil {
		return Rule{}, err
	}
	if err := b.finish(id, StatusApproved, by, "", false); err != nil {
		// The call ended (timed out, cancelled) while the rule was being
		// made: take the rule back, so that a failed click leaves nothing.
		if derr := b.rules.Delete(rule.ID); derr != nil {
			return Rule{}, fmt.Errorf("%w (and removing the rule %s made for it failed: %v)", err, rule.ID, derr)
		}
		return Rule{}, err
	}
	return rule, nil
}

func ruleForCall(call *core.Request, breadth string) (RuleInput, error) {
	server, tool := call.Server, call.Name
	in := RuleInput{Kind: RuleKind(call.Kind), ServerID: &server, AutoApprove: true}
	switch breadth {
	case BreadthServer:
	case BreadthTool:
		in.ToolName = &tool
	case BreadthToolArgs:
		// Exactly these arguments: one condition on the whole object
		// (keys sorted, numbers as written). A condition per argument
		// would also pass a call that adds one (a cwd, an overwrite
		// flag) the person never saw.
		in.ToolName = &tool
		a := args{raw: call.Args}
		root, ok := a.get()
		if _, isObj := root.(map[string]any); !ok || !isObj {
			return in, core.Errorf(core.EInvalid, "the call's arguments are not a JSON object, so no argument rule can be made")
		}
		in.Conditions = []Condition{{Path: "$", Op: OpEquals, Value: ValueText(root)}}
	default:
		return in, core.Errorf(core.EInvalid, "unknown breadth %q (use tool, tool_args or server)", breadth)
	}
	return in, nil
}

// decidableLocked returns the waiting entry for id, or the error deciding
// it would be.
func (b *Broker) decidableLocked(id string) (*waiting, error) {
	w, ok := b.pending[id]
	if ok && !w.deciding {
		return w, nil
	}
	if ok {
		return nil, core.Errorf(core.EConflict, "approval %s is being decided right now", id)
	}
	a, found, err := b.store.LoadApproval(id)
	if err != nil {
		return nil, fmt.Errorf("load approval %s: %w", id, err)
	}
	if !found {
		return nil, core.Errorf(core.ENotFound, "approval %s not found", id)
	}
	if a.Status == StatusPending || a.Status == StatusExpired {
		return nil, core.Errorf(core.EConflict, "approval %s expired: Airlock stopped while the call waited", id)
	}
	by := ""
	if a.DecidedBy != "" {
		by = " by " + a.DecidedBy
	}
	return nil, core.Errorf(core.EConflict, "approval %s was already decided: %s%s", id, a.Status, by)
}

// finish decides the waiting call id. A decision by a person is persisted
// first and changes nothing if that fails; a timeout or cancellation
// (force) ends the wait even when the store fails, because the caller must
// not be kept waiting.
func (b *Broker) finish(id, status, by, reason string, force bool) error {
	b.mu.Lock()
	w, err := b.decidableLocked(id)
	if err != nil && !(force && w == nil && b.pending[id] != nil) {
		b.mu.Unlock()
		return err
	}
	if w == nil {
		w = b.pending[id] // forced while ApproveAndAddRule is creating its rule
	}
	a := w.a
	now := b.now()
	a.Status, a.DecidedBy, a.DeclineReason, a.DecidedAt = status, by, reason, &now
	if err := b.store.SaveApproval(a); err != nil {
		if !force {
			b.mu.Unlock()
			return fmt.Errorf("save approval %s: %w", id, err)
		}
		b.opts.Logger.Warn("save approval", "id", id, "err", err)
	}
	w.a = a
	delete(b.pending, id)
	close(w.done)
	b.mu.Unlock()
	b.opts.Events.Emit(core.EventApprovalResolved, a)
	return nil
}

// candidate is a waiting call a recheck looks at.
type candidate struct {
	id  string
	req *core.Request
}

// undecided returns the waiting calls nobody is deciding now that include
// accepts.
func (b *Broker) undecided(include func(*waiting) bool) []candidate {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []candidate
	for id, w := range b.pending {
		if !w.deciding && include(w) {
			out = append(out, candidate{id, &w.req})
		}
	}
	return out
}

// Revalidate declines every waiting call whose caller check now refuses
// (its agent was suspended, lost the grant, the tool was switched off):
// the person is not left to decide a call that could not run, and the
// agent hears why at once. check is the pipeline's gate.
func (b *Broker) Revalidate(check func(*core.Request) error) {
	for _, c := range b.undecided(func(*waiting) bool { return true }) {
		err := check(c.req)
		if err == nil {
			continue
		}
		reason := fmt.Sprintf("access changed while the call waited (%s: %s)", core.ErrorCode(err), core.ErrorMessage(err))
		if ferr := b.finish(c.id, StatusDeclined, "Airlock", reason, false); ferr != nil {
			b.opts.Logger.Debug("revalidate approval", "id", c.id, "err", ferr)
		}
	}
}

// Recheck re-decides every waiting call against the rules in force and
// approves those a rule now auto-approves (By "rule <id>"). Calls a
// built-in policy forces to a person are left waiting. NewBroker arranges
// for it to run after every rule change.
func (b *Broker) Recheck() {
	for _, c := range b.undecided(func(w *waiting) bool { return !w.forced }) {
		d := b.rules.Engine().DecideAt(c.req, b.now())
		if d.Outcome != core.Allow {
			continue
		}
		if err := b.finish(c.id, StatusApproved, "rule "+d.RuleID, "", false); err != nil {
			b.opts.Logger.Debug("recheck approval", "id", c.id, "err", err)
		}
	}
}
