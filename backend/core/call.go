package core

import (
	"encoding/json"
	"errors"
	"strings"
)

// The vocabulary of the call pipeline: who calls (Caller), what they ask for
// (Request) and what a stage says of it (Verdict). Every stage — authorization,
// built-in policies, the rules, the approval broker, the audit — speaks these
// types directly, so a request is never copied field by field between stages.

// Session purposes (seed 000): a task session works on tasks, a chat session
// answers conversations. Airlock's own tools are allowed or refused by them.
const (
	PurposeTask = "task"
	PurposeChat = "chat"
)

// Unauthenticated is the caller label of a request nobody has been
// identified for.
const Unauthenticated = "unauthenticated"

// ClientInfo is what an MCP client says of itself in initialize. It is shown
// to people and never used to decide anything: any client can claim any name.
type ClientInfo struct {
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
}

// Caller is who makes a request. The gateway resolves it for every request
// from the MCP session's current state, because a session's identity and
// purpose change when it authenticates (seed 000) or logs out.
type Caller struct {
	// AgentID is the agent's id; empty when nobody is identified.
	AgentID string `json:"agentId,omitempty"`
	// AgentName is the agent's display name.
	AgentName string `json:"agentName,omitempty"`
	// Kind is the agent's place in the hierarchy: owner, coordinator,
	// manager or worker.
	Kind string `json:"kind,omitempty"`
	// Role is the agent's permission role (server grants, tool permissions).
	Role string `json:"role,omitempty"`
	// Session is the MCP session the request arrived on.
	Session string `json:"session,omitempty"`
	// AuthSession is the id of the agent session opened by authenticate or
	// carried as a session token; empty for a connection made with the
	// agent's own token.
	AuthSession string `json:"authSession,omitempty"`
	// Purpose is the session purpose, PurposeTask or PurposeChat.
	Purpose string `json:"purpose,omitempty"`
	// ProjectID is the project the session works in, when it named one.
	ProjectID string `json:"projectId,omitempty"`
	// Client is the MCP client's self-description, for display only.
	Client ClientInfo `json:"client"`
	// TokenID is the agent token the connection was made with, when no
	// agent session stands in for it: a call that waits is declined when
	// that token is rotated or deleted meanwhile.
	TokenID string `json:"-"`
}

// Authenticated reports whether an agent has been identified.
func (c *Caller) Authenticated() bool { return c.AgentID != "" }

// Label is how the caller is named in the audit log and the approval dialog:
// the agent's name, else its id, else "unauthenticated".
func (c *Caller) Label() string {
	switch {
	case c.AgentName != "":
		return c.AgentName
	case c.AgentID != "":
		return c.AgentID
	}
	return Unauthenticated
}

// Request kinds: the MCP methods that pass the pipeline. The first three
// are an agent's requests; the last two are requests a downstream server
// makes of the agent's client while it handles the agent's call, which
// Airlock relays (and audits, and may ask about) like the others.
const (
	KindToolCall     = "tools/call"
	KindPromptGet    = "prompts/get"
	KindResourceRead = "resources/read"
	KindSampling     = "sampling/createMessage"
	KindElicitation  = "elicitation/create"
)

// Kinds lists the request kinds, for forms and validation.
var Kinds = []string{KindToolCall, KindPromptGet, KindResourceRead, KindSampling, KindElicitation}

// Request is one MCP request on its way through the pipeline.
type Request struct {
	// Kind is KindToolCall, KindPromptGet or KindResourceRead.
	Kind   string
	Caller Caller
	// Server is the id of the source that serves the target.
	Server string
	// Name is the target's name at its server: the tool or prompt name, or
	// the resource URI.
	Name string
	// Exposed is the name (or URI) the agent used.
	Exposed string
	// SubscribedAt is, for a resource read, the server the agent's session
	// is subscribed to that URI at: asked when nothing else places the
	// URI, so that the resource whose updates the agent hears of can be
	// read (found by an interop test). Empty otherwise.
	SubscribedAt string
	// Tool is the definition the agent saw, for tool calls (its annotations
	// tell the approval dialog how risky the call is). Nil otherwise.
	Tool *ToolInfo
	// Args are the tool's arguments, or the prompt's, as JSON; nil when the
	// request has none.
	Args json.RawMessage
	// Meta is the _meta the agent sent with a tools/call, without its
	// progress token: passed on to a downstream server as it is (found by
	// an interop test: it was dropped).
	Meta map[string]any
	// Progress sends a progress notification to the caller; nil when the
	// caller gave no progress token.
	Progress func(progress, total float64, message string)
	// Peer is the gateway's handle on the agent's MCP client (for sampling
	// and elicitation requests a source makes while it handles this
	// request); its type belongs to the transport. Nil when there is none.
	Peer any
}

// Target names what a request is for, without the caller: the unit that
// authorization and listings reason about.
type Target struct {
	Kind   string `json:"kind"`
	Server string `json:"server"`
	Name   string `json:"name"`
}

// Target returns the request's target.
func (r *Request) Target() Target { return Target{Kind: r.Kind, Server: r.Server, Name: r.Name} }

// Verdict outcomes.
const (
	// Allow: the stage has no objection (for the rules: auto-approve).
	Allow = "allow"
	// Ask: a person must approve the call.
	Ask = "ask"
	// Deny: the call is refused.
	Deny = "deny"
)

// Verdict is what a stage says of a request.
type Verdict struct {
	Outcome string `json:"outcome"` // Allow, Ask or Deny
	// Code is the machine-readable reason of a denial (EDenied,
	// "not_subscribed", ...).
	Code string `json:"code,omitempty"`
	// Reason says why, for people and agents.
	Reason string `json:"reason"`
	// Hint says what would change the outcome.
	Hint string `json:"hint,omitempty"`
	// By names who decided: "rules", "pins", "builtin:shell-exec", ...
	By string `json:"by,omitempty"`
	// RuleID and RuleSetVersion are set when a rule decided (or when no rule
	// matched a given rule-set version).
	RuleID         string `json:"ruleId,omitempty"`
	RuleSetVersion int64  `json:"ruleSetVersion,omitempty"`
	// Forced is set on an Ask that a policy (not a rule) demands: no rule
	// change may release such a call; only a person decides it.
	Forced bool `json:"forced,omitempty"`
}

// Err turns a denial into the *Error the agent receives.
func (v Verdict) Err() *Error {
	code := v.Code
	if code == "" {
		code = EDenied
	}
	return &Error{Code: code, Message: v.Reason, Hint: v.Hint}
}

// Refusal returns a Deny verdict carrying err's code, message and hint.
func Refusal(by string, err error) Verdict {
	v := Verdict{Outcome: Deny, By: by, Code: ErrorCode(err), Reason: ErrorMessage(err)}
	var e *Error
	if errors.As(err, &e) {
		v.Hint = e.Hint
	}
	return v
}

// ApprovalOutcome is how a person's approval of a call ended.
type ApprovalOutcome struct {
	ApprovalID string `json:"approvalId"`
	Approved   bool   `json:"approved"`
	// Decision is DecisionApproved, DecisionDeclined, DecisionTimeout or
	// DecisionExpired.
	Decision string `json:"decision"`
	// Reason is, for a decline, the person's reason when they gave one.
	Reason string `json:"reason"`
	By     string `json:"by,omitempty"`
	// WaitedMs is how long the call waited.
	WaitedMs int64 `json:"waitedMs"`
	// Code is the error code the agent gets when the call was not approved.
	Code string `json:"code,omitempty"`
}

// SplitExposed splits an exposed name "server__tool" at the first
// separator; ok is false when there is none.
func SplitExposed(name string) (server, tool string, ok bool) {
	return strings.Cut(name, NameSeparator)
}

// NameSeparator joins a server id and a tool, prompt or resource name into
// the name agents see.
const NameSeparator = "__"
