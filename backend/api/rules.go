package api

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
)

// Rules is the Rules screen: the human-in-the-loop rules, their test panel
// and import/export.
type Rules struct{ d Deps }

// Precedence says in which order rules are evaluated, for the screen.
func (a *Rules) Precedence() (string, error) { return hitl.PrecedenceText, nil }

// List returns the rules in evaluation order.
func (a *Rules) List() ([]hitl.Rule, error) {
	rules := a.d.Rules.List()
	if rules == nil {
		rules = []hitl.Rule{}
	}
	return rules, nil
}

// Create adds a rule; it applies to connected agents at once.
func (a *Rules) Create(in hitl.RuleInput) (hitl.Rule, error) { return a.d.Rules.Create(in) }

// Update replaces a rule; it applies to connected agents at once.
func (a *Rules) Update(id string, in hitl.RuleInput) (hitl.Rule, error) {
	return a.d.Rules.Update(id, in)
}

// RuleLint is what the rule form shows while a person writes a rule.
type RuleLint struct {
	// Input is the rule as it would be saved (a name written as agents see
	// it, server__tool, split into server and tool).
	Input    hitl.RuleInput `json:"input"`
	Warnings []string       `json:"warnings"`
}

// Lint checks a rule being written: invalid input is an error (as Create
// would give); what looks wrong but is allowed comes back as warnings
// (an unknown server, a name written as agents see it).
func (a *Rules) Lint(in hitl.RuleInput) (RuleLint, error) {
	out, warnings, err := a.d.Rules.Lint(in)
	if err != nil {
		return RuleLint{}, err
	}
	if warnings == nil {
		warnings = []string{}
	}
	return RuleLint{Input: out, Warnings: warnings}, nil
}

// Delete removes a rule.
func (a *Rules) Delete(id string) error { return a.d.Rules.Delete(id) }

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

// Test says which rule would decide a call and why the rules above it
// did not match — the same code as `airlock rules test`.
func (a *Rules) Test(tc TestCall) (TestResult, error) {
	ex, err := a.explain(tc)
	if err != nil {
		return TestResult{}, err
	}
	if ex.Skipped == nil {
		ex.Skipped = []hitl.SkippedRule{}
	}
	return TestResult{Decision: ex.Verdict, Fired: ex.Fired, Skipped: ex.Skipped}, nil
}

func (a *Rules) explain(tc TestCall) (hitl.Explanation, error) {
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
	agent := strings.TrimSpace(tc.AgentID)
	if agent != "" {
		// The panel takes the agent's name, as the rule form does.
		id, err := a.d.Rules.AgentID(agent)
		if err != nil {
			return hitl.Explanation{}, err
		}
		agent = id
	}
	return a.d.Rules.Explain(&core.Request{Kind: kind, Caller: core.Caller{AgentID: agent, Session: tc.SessionID},
		Server: tc.ServerID, Name: tc.ToolName, Args: args}), nil
}

// Shadowed lists rules that can never fire.
func (a *Rules) Shadowed() ([]hitl.ShadowInfo, error) {
	s := a.d.Rules.Shadowed()
	if s == nil {
		s = []hitl.ShadowInfo{}
	}
	return s, nil
}

// Export returns every rule as a rules file.
func (a *Rules) Export() (string, error) {
	b, err := a.d.Rules.Export()
	return string(b), err
}

// Import loads a rules file, all or nothing; replace drops the others.
func (a *Rules) Import(text string, replace bool) (int, error) {
	return a.d.Rules.Import([]byte(text), replace)
}

// State returns the rule-set version and, when the rules file's last
// edit was rejected, why (the last good rules stay in force).
func (a *Rules) State() (hitl.RulesChanged, error) {
	st := hitl.RulesChanged{Version: a.d.Rules.Version()}
	if err := a.d.Rules.FileError(); err != nil {
		st.FileError = err.Error()
	}
	return st, nil
}

// Move moves a rule one place up (delta -1) or down (+1) in evaluation
// order. It changes only that rule's priority when that is enough; when
// equal priorities leave no room, it renumbers the rules (10 apart, in the
// new order) so that the order is exactly the one asked for.
func (a *Rules) Move(id string, delta int) ([]hitl.Rule, error) {
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
	prio := map[string]int{}
	for _, p := range []int{n, n - delta} { // the neighbour's priority, then one past it
		if slices.Equal(orderIf(p), ids(want)) {
			prio[id] = p
			break
		}
	}
	if len(prio) == 0 {
		for k, r := range want {
			prio[r.ID] = (len(want) - k) * 10
		}
	}
	// One change, all or none (an expired rule among them included).
	if err := a.d.Rules.SetPriorities(prio); err != nil {
		return nil, err
	}
	return a.d.Rules.List(), nil
}
