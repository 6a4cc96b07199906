package api

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
)

// ListRules returns the rules in evaluation order.
func (a *API) ListRules() ([]hitl.Rule, error) {
	rules := a.d.Rules.List()
	if rules == nil {
		rules = []hitl.Rule{}
	}
	return rules, nil
}

// CreateRule adds a rule; it applies to connected agents at once.
func (a *API) CreateRule(in hitl.RuleInput) (hitl.Rule, error) { return a.d.Rules.Create(in) }

// UpdateRule replaces a rule; it applies to connected agents at once.
func (a *API) UpdateRule(id string, in hitl.RuleInput) (hitl.Rule, error) {
	return a.d.Rules.Update(id, in)
}

// DeleteRule removes a rule.
func (a *API) DeleteRule(id string) error { return a.d.Rules.Delete(id) }

// TestCall is a call to try against the rules on the settings page.
type TestCall struct {
	ServerID  string `json:"serverId"`
	ToolName  string `json:"toolName"`
	Arguments string `json:"arguments"` // JSON text; empty means {}
	AgentID   string `json:"agentId,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
}

// TestRule says which rule would decide a call and why the rules above it
// did not match — the same code as `airlock rules test`.
func (a *API) TestRule(tc TestCall) (hitl.Explanation, error) {
	args := json.RawMessage(strings.TrimSpace(tc.Arguments))
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) {
		return hitl.Explanation{}, core.Errorf(core.EInvalid, "arguments are not valid JSON")
	}
	if tc.ServerID == "" || tc.ToolName == "" {
		return hitl.Explanation{}, core.Errorf(core.EInvalid, "server and tool are required to test a call")
	}
	return a.d.Rules.Explain(hitl.Call{Agent: tc.AgentID, Session: tc.SessionID, Server: tc.ServerID, Tool: tc.ToolName, Args: args}), nil
}

// ShadowedRules lists rules that can never fire.
func (a *API) ShadowedRules() ([]hitl.ShadowInfo, error) {
	s := a.d.Rules.Shadowed()
	if s == nil {
		s = []hitl.ShadowInfo{}
	}
	return s, nil
}

// ExportRules returns every rule as a rules file.
func (a *API) ExportRules() (string, error) {
	b, err := a.d.Rules.Export()
	return string(b), err
}

// ImportRules loads a rules file, all or nothing; replace drops the others.
func (a *API) ImportRules(text string, replace bool) (int, error) {
	return a.d.Rules.Import([]byte(text), replace)
}

// ListApprovals returns the calls waiting for a person, oldest first.
func (a *API) ListApprovals() ([]hitl.Approval, error) {
	p := a.d.Broker.Pending()
	if p == nil {
		p = []hitl.Approval{}
	}
	return p, nil
}

const uiDecider = "you (Airlock UI)"

// Approve lets a waiting call through, once.
func (a *API) Approve(id string) error { return a.d.Broker.Approve(id, uiDecider) }

// Decline refuses a waiting call; reason goes back to the agent.
func (a *API) Decline(id, reason string) error { return a.d.Broker.Decline(id, reason, uiDecider) }

// ApproveAndAddRule approves a waiting call and adds an auto-approve rule of
// the given breadth (tool, tool_args, server) and expiry (none, 1h, 8h, 24h).
func (a *API) ApproveAndAddRule(id, breadth, expiry string) error {
	_, err := a.d.Broker.ApproveAndAddRule(id, breadth, expiry, uiDecider)
	return err
}

// Settings are the user's preferences.
type Settings struct {
	ApprovalTimeoutSeconds int `json:"approvalTimeoutSeconds"`
}

// ApprovalTimeoutKey is where the approval timeout is stored.
const ApprovalTimeoutKey = "approval_timeout"

// GetSettings returns the settings.
func (a *API) GetSettings() (Settings, error) {
	return Settings{ApprovalTimeoutSeconds: int(a.d.Broker.Timeout() / time.Second)}, nil
}

// SetSettings stores and applies the settings.
func (a *API) SetSettings(s Settings) error {
	if s.ApprovalTimeoutSeconds < 5 || s.ApprovalTimeoutSeconds > 24*3600 {
		return core.Errorf(core.EInvalid, "approval timeout must be between 5 seconds and 24 hours, got %d s", s.ApprovalTimeoutSeconds)
	}
	d := time.Duration(s.ApprovalTimeoutSeconds) * time.Second
	if err := a.d.Broker.SetTimeout(d); err != nil {
		return err
	}
	return a.d.DB.SetSetting(ApprovalTimeoutKey, d.String())
}

// GetRulesState returns the rule-set version and, when the rules file's last
// edit was rejected, why (the last good rules stay in force).
func (a *API) GetRulesState() (hitl.RulesChanged, error) {
	st := hitl.RulesChanged{Version: a.d.Rules.Version()}
	if err := a.d.Rules.FileError(); err != nil {
		st.FileError = err.Error()
	}
	return st, nil
}
