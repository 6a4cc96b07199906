package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Caller is who makes a call, as the identify stage found it.
type Caller struct {
	Agent   string // agent id; "unauthenticated" when nobody was identified
	Session string // the MCP session id
	// Client is the MCP client's name and version as it reports them
	// (e.g. "claude-code 2.1.0"): shown to people, never used to decide.
	Client string
}

// Call is one tools/call on its way through the pipeline.
type Call struct {
	Caller Caller
	Tool   core.ToolInfo
	Args   json.RawMessage
	// Progress sends a progress notification to the caller; nil when the
	// caller gave no progress token.
	Progress func(progress, total float64, message string)
}

// Gate decides whether the caller may call the tool at all (authorization).
// It returns a *core.Error to deny.
type Gate interface {
	Allow(ctx context.Context, c *Call) error
}

// Policy is a built-in policy of the target tool: it may deny the call (a
// *core.Error) or demand a person's approval whatever the rules say.
type Policy interface {
	Check(ctx context.Context, c *Call) (forceAsk bool, reason string, err error)
}

// Decision is what the human-in-the-loop rules say of a call.
type Decision struct {
	AutoApprove    bool
	RuleID         string
	RuleSetVersion int64
	Reason         string
	// ForcedBy is set when a built-in policy demands a person whatever the
	// rules say; no rule change may then release the call.
	ForcedBy string
}

// Decider applies the human-in-the-loop rules.
type Decider interface {
	Decide(c *Call) Decision
}

// Outcome is how an approval ended.
type Outcome struct {
	Approved bool
	Decision string // core.DecisionApproved, Declined, Timeout, Expired
	Reason   string
	By       string
	Waited   time.Duration
	Code     string // error code to give the agent when not approved
}

// Approver holds a call until a person approves or declines it, or it times
// out. It never approves on timeout or error.
type Approver interface {
	Approve(ctx context.Context, c *Call, d Decision) (Outcome, error)
}

// Dispatcher runs the call on its server.
type Dispatcher interface {
	CallTool(ctx context.Context, server, tool string, args json.RawMessage, onProgress func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, error)
}

// AuditSink records a call; Record returns once the record is durable.
type AuditSink interface {
	Record(rec *core.AuditRecord)
}

// Pipeline runs every tool call through the same named stages. Stages that
// are nil are skipped: gate and policy allow, decide auto-approves.
type Pipeline struct {
	Gate     Gate
	Policy   Policy
	Decider  Decider
	Approver Approver
	Dispatch Dispatcher
	Audit    AuditSink
}

// Run takes a call through identify (done by the transport) → gate → policy →
// decide → approve → dispatch → audit and returns what the agent receives.
// Refusals are tool errors (isError) carrying a reason code, never protocol
// errors, so that the agent can read and explain them.
func (p *Pipeline) Run(ctx context.Context, c *Call) *mcp.CallToolResult {
	start := time.Now()
	rec := &core.AuditRecord{
		Time:       start.UTC(),
		Agent:      c.Caller.Agent,
		Client:     c.Caller.Client,
		Session:    c.Caller.Session,
		Server:     c.Tool.ServerID,
		Tool:       c.Tool.Name,
		Arguments:  pipeline.RedactArguments(c.Args),
		ArgsDigest: digest(c.Args),
	}
	res := p.run(ctx, c, rec)
	rec.LatencyUs = time.Since(start).Microseconds()
	// A decline reason or a tool's error can be long; the audit keeps the
	// start of it.
	rec.Reason, rec.Error = clip(rec.Reason), clip(rec.Error)
	if p.Audit != nil {
		p.Audit.Record(rec)
	}
	return res
}

func (p *Pipeline) run(ctx context.Context, c *Call, rec *core.AuditRecord) *mcp.CallToolResult {
	// gate
	if p.Gate != nil {
		if err := p.Gate.Allow(ctx, c); err != nil {
			return refuse(rec, core.DecisionDenied, err)
		}
	}
	// policy
	forceAsk, policyReason := false, ""
	if p.Policy != nil {
		var err error
		forceAsk, policyReason, err = p.Policy.Check(ctx, c)
		if err != nil {
			return refuse(rec, core.DecisionDenied, err)
		}
	}
	// decide
	d := Decision{AutoApprove: true, Reason: "no approval stage configured"}
	if p.Decider != nil {
		d = p.Decider.Decide(c)
	}
	rec.RuleID, rec.RuleSetVersion = d.RuleID, d.RuleSetVersion
	if forceAsk {
		d.ForcedBy = policyReason
		if d.AutoApprove {
			d.AutoApprove = false
			d.Reason = policyReason + " (overrides " + d.Reason + ")"
		}
	}
	// approve
	if d.AutoApprove {
		rec.Decision, rec.Reason = core.DecisionAllow, d.Reason
	} else {
		if p.Approver == nil {
			return refuse(rec, core.DecisionDenied, core.Errorf(core.EDenied, "approval required (%s) but no approver is available", d.Reason))
		}
		// The record keeps why the call was asked as well as how it ended.
		rec.Reason = "asked: " + d.Reason
		out, err := p.Approver.Approve(ctx, c, d)
		rec.Approver, rec.WaitMs = out.By, out.Waited.Milliseconds()
		if errors.Is(err, context.Canceled) {
			err = &core.Error{Code: "cancelled", Message: "the agent cancelled the call while it waited for approval"}
		}
		if err != nil {
			return refuse(rec, core.DecisionError, err)
		}
		if !out.Approved {
			code := out.Code
			if code == "" {
				code = core.EDenied
			}
			var msg string
			switch out.Decision {
			case core.DecisionTimeout:
				msg = fmt.Sprintf("the call to %s was not approved in time", c.Tool.ExposedName)
			case core.DecisionExpired:
				msg = fmt.Sprintf("the call to %s was lost when Airlock stopped", c.Tool.ExposedName)
			default:
				msg = fmt.Sprintf("the call to %s was %s", c.Tool.ExposedName, out.Decision)
				if out.By != "" {
					msg += " by " + out.By
				}
			}
			if out.Reason != "" {
				msg += ": " + out.Reason
			}
			return refuse(rec, out.Decision, &core.Error{Code: code, Message: msg})
		}
		rec.Decision = core.DecisionApproved
		if out.Reason != "" {
			rec.Reason = out.Reason + " (" + rec.Reason + ")"
		}
	}
	// dispatch
	var onProgress func(*mcp.ProgressNotificationParams)
	if c.Progress != nil {
		onProgress = func(pn *mcp.ProgressNotificationParams) { c.Progress(pn.Progress, pn.Total, pn.Message) }
	}
	res, err := p.Dispatch.CallTool(ctx, c.Tool.ServerID, c.Tool.Name, c.Args, onProgress)
	if err != nil {
		rec.Status, rec.ErrorCode, rec.Error = core.StatusError, core.ErrorCode(err), err.Error()
		if errors.Is(err, context.Canceled) {
			rec.ErrorCode = "cancelled"
		}
		return errorResult(err)
	}
	rec.Status = core.StatusOK
	if res.IsError {
		rec.Status = core.StatusToolError
		rec.Error = firstText(res)
	}
	return res
}

// refuse records a refusal and turns it into the tool error the agent gets.
func refuse(rec *core.AuditRecord, decision string, err error) *mcp.CallToolResult {
	rec.Decision = decision
	rec.Status = core.StatusError
	rec.ErrorCode = core.ErrorCode(err)
	rec.Error = core.ErrorMessage(err)
	if rec.Reason == "" {
		rec.Reason = rec.Error
	} else if decision != core.DecisionDenied && decision != core.DecisionError {
		rec.Reason = rec.Error + " (" + rec.Reason + ")"
	}
	return errorResult(err)
}

// errorResult is a tool error with the reason code in the text (for the
// model) and in _meta["airlock/error"] (for programs).
func errorResult(err error) *mcp.CallToolResult {
	var e *core.Error
	if !errors.As(err, &e) {
		e = &core.Error{Code: core.EInternal, Message: err.Error()}
	}
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

func firstText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			if len(t.Text) > 500 {
				return t.Text[:500]
			}
			return t.Text
		}
	}
	return ""
}

const maxAuditText = 2000

func clip(s string) string {
	if len(s) <= maxAuditText {
		return s
	}
	return s[:maxAuditText] + "…(cut)"
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
