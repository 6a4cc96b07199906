package api

import (
	"encoding/json"
	"slices"
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
	// Kind is the request kind: tools/call (the default), prompts/get or
	// resources/read.
	Kind      string `json:"kind,omitempty"`
	ServerID  string `json:"serverId"`
	ToolName  string `json:"toolName"`
	Arguments string `json:"arguments"` // JSON text; empty means {}
	AgentID   string `json:"agentId,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
}

// TestResult is TestRule's answer: the decision, the rule that made it (nil
// when none matched) and why each rule above it did not match.
type TestResult struct {
	Decision core.Verdict       `json:"decision"`
	Fired    *hitl.Rule         `json:"fired"`
	Skipped  []hitl.SkippedRule `json:"skipped"`
}

// TestRule says which rule would decide a call and why the rules above it
// did not match — the same code as `airlock rules test`.
func (a *API) TestRule(tc TestCall) (TestResult, error) {
	ex, err := a.explain(tc)
	if err != nil {
		return TestResult{}, err
	}
	if ex.Skipped == nil {
		ex.Skipped = []hitl.SkippedRule{}
	}
	return TestResult{Decision: ex.Verdict, Fired: ex.Fired, Skipped: ex.Skipped}, nil
}

func (a *API) explain(tc TestCall) (hitl.Explanation, error) {
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
	kind := tc.Kind
	if kind == "" {
		kind = core.KindToolCall
	}
	return a.d.Rules.Explain(&core.Request{Kind: kind, Caller: core.Caller{AgentID: tc.AgentID, Session: tc.SessionID},
		Server: tc.ServerID, Name: tc.ToolName, Args: args}), nil
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

// uiDecider names who decided in the UI, as the agent and Activity read it.
const uiDecider = "the user in Airlock"

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

// MoveRule moves a rule one place up (delta -1) or down (+1) in evaluation
// order. It changes only that rule's priority when that is enough; when
// equal priorities leave no room, it renumbers the rules (10 apart, in the
// new order) so that the order is exactly the one asked for.
func (a *API) MoveRule(id string, delta int) ([]hitl.Rule, error) {
	if delta != -1 && delta != 1 {
		return nil, core.Errorf(core.EInvalid, "move by -1 (up) or 1 (down), not %d", delta)
	}
	all := a.d.Rules.List()
	k := slices.IndexFunc(all, func(r hitl.Rule) bool { return r.ID == id })
	if k < 0 {
		return nil, core.Errorf(core.ENotFound, "rule %s not found", id)
	}
	// Rules of other kinds never decide the same requests: a rule moves
	// among the rules of its own kind.
	kind := all[k].Kind
	var rules []hitl.Rule
	for _, r := range all {
		if r.Kind == kind {
			rules = append(rules, r)
		}
	}
	i := slices.IndexFunc(rules, func(r hitl.Rule) bool { return r.ID == id })
	j := i + delta
	if j < 0 || j >= len(rules) {
		return nil, core.Errorf(core.EInvalid, "rule %s is already %s among the %s rules", id, map[int]string{-1: "first", 1: "last"}[delta], kind)
	}
	want := slices.Clone(rules)
	want[i], want[j] = want[j], want[i]
	ids := func(rs []hitl.Rule) []string {
		out := make([]string, len(rs))
		for k, r := range rs {
			out[k] = r.ID
		}
		return out
	}
	orderIf := func(prio int) []string {
		trial := slices.Clone(rules)
		trial[i].Priority = prio
		hitl.SortRules(trial)
		return ids(trial)
	}
	n := rules[j].Priority
	for _, prio := range []int{n, n - delta} { // the neighbour's priority, then one past it
		if slices.Equal(orderIf(prio), ids(want)) {
			in := rules[i].Input()
			in.Priority = prio
			if _, err := a.d.Rules.Update(id, in); err != nil {
				return nil, err
			}
			return a.d.Rules.List(), nil
		}
	}
	for k, r := range want {
		prio := (len(want) - k) * 10
		if r.Priority == prio {
			continue
		}
		in := r.Input()
		in.Priority = prio
		if _, err := a.d.Rules.Update(r.ID, in); err != nil {
			return nil, err
		}
	}
	return a.d.Rules.List(), nil
}
