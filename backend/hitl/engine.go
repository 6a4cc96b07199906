package hitl

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
)

// NoMatchReason is the reason of a decision no rule made.
const NoMatchReason = "no rule matched: approval required (safe default)"

// Explanation is a decision with the work shown: the rule that fired and,
// for every rule evaluated before it, why it did not match.
type Explanation struct {
	core.Verdict
	Fired   *Rule         `json:"fired"`
	Skipped []SkippedRule `json:"skipped"`
}

// SkippedRule is a rule above the one that fired, with the reason it did
// not match.
type SkippedRule struct {
	Rule Rule   `json:"rule"`
	Why  string `json:"why"`
}

// ShadowInfo flags a rule that can never fire because a rule evaluated
// before it matches every call it matches.
type ShadowInfo struct {
	RuleID   string `json:"ruleId"`
	ByRuleID string `json:"byRuleId"`
	Why      string `json:"why"`
}

// Engine decides calls against a compiled rule set. The set is immutable and
// replaced as a whole by Load, so Decide never locks and every decision is
// made against exactly one version.
type Engine struct {
	mu  sync.Mutex // serialises Load, so versions increase with the swaps
	set atomic.Pointer[ruleSet]
}

// NewEngine returns an engine with no rules (version 0): every call asks.
func NewEngine() *Engine {
	e := &Engine{}
	e.set.Store(&ruleSet{})
	return e
}

// Load validates and compiles rules and swaps them in atomically, returning
// the new version. On error nothing changes.
func (e *Engine) Load(rules []Rule) (int64, error) {
	return e.LoadVersion(rules, 0)
}

// LoadVersion is Load that numbers the new set version (the stored rule-set
// version, so that every process names a rule set alike) when that is above
// the current one; otherwise the current one plus one.
func (e *Engine) LoadVersion(rules []Rule, version int64) (int64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v := e.set.Load().version + 1
	if version > v {
		v = version
	}
	set, err := compileSet(rules, v)
	if err != nil {
		return 0, err
	}
	e.set.Store(set)
	return set.version, nil
}

// Version is the version of the rule set in force.
func (e *Engine) Version() int64 { return e.set.Load().version }

// Rules returns the rules in force, in evaluation order.
func (e *Engine) Rules() []Rule {
	s := e.set.Load()
	out := make([]Rule, len(s.rules))
	for i, c := range s.rules {
		out[i] = c.rule
	}
	return out
}

// Rule returns the rule in force with the given id.
func (e *Engine) Rule(id string) (Rule, bool) {
	c, ok := e.set.Load().byID[id]
	if !ok {
		return Rule{}, false
	}
	return c.rule, true
}

// Decide applies seed 002's rules to r now: rules in evaluation order (see
// PrecedenceText), the first one that matches decides (core.Allow to
// auto-approve, core.Ask to ask), and when none matches a person is asked.
func (e *Engine) Decide(r *core.Request) core.Verdict { return e.DecideAt(r, time.Now()) }

// DecideAt is Decide at the given time (rules may expire).
func (e *Engine) DecideAt(r *core.Request, now time.Time) core.Verdict {
	s := e.set.Load()
	q := query{r: r, kind: RuleKind(r.Kind), now: now}
	a := args{raw: r.Args}
	if c := s.first(&q, &a); c != nil {
		return c.verdict(s.version)
	}
	return core.Verdict{Outcome: core.Ask, By: VerdictBy, RuleSetVersion: s.version, Reason: NoMatchReason}
}

// VerdictBy is the By of the rules' verdicts.
const VerdictBy = "rules"

func (c *compiled) verdict(version int64) core.Verdict {
	v := core.Verdict{Outcome: core.Ask, By: VerdictBy, RuleID: c.rule.ID, RuleSetVersion: version, Reason: c.reason}
	if c.rule.AutoApprove {
		v.Outcome = core.Allow
	}
	return v
}

// query is a request as the matcher reads it.
type query struct {
	r    *core.Request
	kind string
	now  time.Time
}

// Explain decides r like DecideAt and says why each rule above the one
// that fired did not match. The settings page's test panel and
// `airlock rules test` both use it.
func (e *Engine) Explain(r *core.Request, now time.Time) Explanation {
	s := e.set.Load()
	q := query{r: r, kind: RuleKind(r.Kind), now: now}
	a := args{raw: r.Args}
	ex := Explanation{Verdict: core.Verdict{Outcome: core.Ask, By: VerdictBy, RuleSetVersion: s.version, Reason: NoMatchReason}, Skipped: []SkippedRule{}}
	for _, c := range s.rules {
		if c.rule.Kind != q.kind {
			continue // rules for other kinds of request are not candidates
		}
		ok, why := c.match(&q, &a, true)
		if ok {
			r := c.rule
			ex.Fired = &r
			ex.Verdict = c.verdict(s.version)
			break
		}
		ex.Skipped = append(ex.Skipped, SkippedRule{Rule: c.rule, Why: why})
	}
	return ex
}

// Shadowed lists the rules that can never fire because a rule evaluated
// before them matches every call they match (for example a global rule
// without conditions above them, or a rule for the same server with the
// pattern "*"). Such a rule is harmless when it makes the same decision, but
// it is still dead and usually a mistake in the priorities.
func (e *Engine) Shadowed() []ShadowInfo {
	s := e.set.Load()
	out := []ShadowInfo{}
	for j, b := range s.rules {
		for _, a := range s.rules[:j] {
			if why, ok := covers(a, b); ok {
				out = append(out, ShadowInfo{RuleID: b.rule.ID, ByRuleID: a.rule.ID, Why: why})
				break
			}
		}
	}
	return out
}

// ruleSet is one immutable compiled version of the rules.
type ruleSet struct {
	version int64
	rules   []*compiled // evaluation order
	byID    map[string]*compiled
	// Indexes: every rule is in exactly one of them, each slice in
	// evaluation order. A call can only match rules under its own server and
	// tool keys, so Decide merges at most four short lists.
	byServerTool map[serverTool][]*compiled // server and tool name set
	byServer     map[string][]*compiled     // server set, no tool name
	byTool       map[string][]*compiled     // tool name set, no server
	rest         []*compiled                // neither: patterns and global rules
}

type serverTool struct{ server, tool string }

type compiled struct {
	rule    Rule
	rank    int
	pattern *wildcard
	conds   []compiledCond
	reason  string // the verdict's reason when this rule fires
	verb    string
}

// label names the rule as the Rules screen and the CLI list number it:
// by its place in evaluation order, with its id.
func (c *compiled) label() string { return fmt.Sprintf("rule #%d [%s]", c.rank+1, c.rule.ID) }

func compileSet(rules []Rule, version int64) (*ruleSet, error) {
	sorted := append([]Rule(nil), rules...)
	SortRules(sorted)
	s := &ruleSet{
		version:      version,
		byID:         make(map[string]*compiled, len(sorted)),
		byServerTool: map[serverTool][]*compiled{},
		byServer:     map[string][]*compiled{},
		byTool:       map[string][]*compiled{},
	}
	for i, r := range sorted {
		c, err := compileRule(r)
		if err != nil {
			return nil, err
		}
		if _, dup := s.byID[r.ID]; dup {
			return nil, core.Errorf(core.EInvalid, "duplicate rule id %q", r.ID)
		}
		c.rank = i
		c.reason = fmt.Sprintf("%s (%s) %s", c.label(), c.rule.Describe(), c.verb)
		s.rules = append(s.rules, c)
		s.byID[r.ID] = c
		switch {
		case r.ServerID != nil && r.ToolName != nil:
			k := serverTool{*r.ServerID, *r.ToolName}
			s.byServerTool[k] = append(s.byServerTool[k], c)
		case r.ServerID != nil:
			s.byServer[*r.ServerID] = append(s.byServer[*r.ServerID], c)
		case r.ToolName != nil:
			s.byTool[*r.ToolName] = append(s.byTool[*r.ToolName], c)
		default:
			s.rest = append(s.rest, c)
		}
	}
	return s, nil
}

// compileRule validates r and prepares it for matching.
func compileRule(r Rule) (*compiled, error) {
	if err := validateID(r.ID); err != nil {
		return nil, err
	}
	in, err := r.Input().normalize()
	if err != nil {
		return nil, core.Errorf(core.EInvalid, "rule %s: %s", r.ID, core.ErrorMessage(err))
	}
	c := &compiled{rule: in.build(r.ID, r.CreatedAt, r.UpdatedAt)}
	if in.ToolPattern != nil {
		c.pattern = compileWildcard(*in.ToolPattern)
	}
	for _, cond := range in.Conditions {
		cc, err := compileCondition(cond)
		if err != nil {
			return nil, err
		}
		c.conds = append(c.conds, cc)
	}
	c.verb = "requires approval"
	if r.AutoApprove {
		c.verb = "auto-approves"
	}
	return c, nil
}

// first returns the first rule in evaluation order that matches call.
func (s *ruleSet) first(q *query, a *args) *compiled {
	l0 := s.byServerTool[serverTool{q.r.Server, q.r.Name}]
	l1 := s.byServer[q.r.Server]
	l2 := s.byTool[q.r.Name]
	l3 := s.rest
	for {
		var best *compiled
		pick := -1
		if len(l0) > 0 {
			best, pick = l0[0], 0
		}
		if len(l1) > 0 && (best == nil || l1[0].rank < best.rank) {
			best, pick = l1[0], 1
		}
		if len(l2) > 0 && (best == nil || l2[0].rank < best.rank) {
			best, pick = l2[0], 2
		}
		if len(l3) > 0 && (best == nil || l3[0].rank < best.rank) {
			best, pick = l3[0], 3
		}
		switch pick {
		case -1:
			return nil
		case 0:
			l0 = l0[1:]
		case 1:
			l1 = l1[1:]
		case 2:
			l2 = l2[1:]
		case 3:
			l3 = l3[1:]
		}
		if ok, _ := best.match(q, a, false); ok {
			return best
		}
	}
}

// match is the one definition of "rule matches call", used by Decide (with
// explain false: no reason text is built) and Explain.
func (c *compiled) match(q *query, a *args, explain bool) (bool, string) {
	r := &c.rule
	call := q.r
	// Each test returns early without building text unless explaining: the
	// formatting would allocate on the hot path.
	if r.Kind != q.kind {
		if !explain {
			return false, ""
		}
		return false, fmt.Sprintf("the rule is for %ss, this is a %s request", r.Kind, q.kind)
	}
	if r.ServerID != nil && *r.ServerID != call.Server {
		if !explain {
			return false, ""
		}
		return false, fmt.Sprintf("server is %s, rule wants %s", orNone(call.Server), *r.ServerID)
	}
	if r.ToolName != nil && *r.ToolName != call.Name {
		if !explain {
			return false, ""
		}
		return false, fmt.Sprintf("%s is %s, rule wants %s", q.kind, orNone(call.Name), *r.ToolName)
	}
	if c.pattern != nil && !c.pattern.Match(call.Name) {
		if !explain {
			return false, ""
		}
		return false, fmt.Sprintf("%s %s does not match pattern %s", q.kind, orNone(call.Name), *r.ToolPattern)
	}
	if r.AgentID != nil && *r.AgentID != call.Caller.AgentID {
		if !explain {
			return false, ""
		}
		return false, fmt.Sprintf("scoped to agent %s (call is from %s)", *r.AgentID, orNone(call.Caller.AgentID))
	}
	if r.SessionID != nil && *r.SessionID != call.Caller.Session {
		if !explain {
			return false, ""
		}
		return false, fmt.Sprintf("scoped to session %s (call is in %s)", *r.SessionID, orNone(call.Caller.Session))
	}
	if r.ExpiresAt != nil && !q.now.Before(*r.ExpiresAt) {
		if !explain {
			return false, ""
		}
		return false, fmt.Sprintf("expired at %s", r.ExpiresAt.UTC().Format(time.RFC3339))
	}
	for i := range c.conds {
		ok, undecided, why := c.conds[i].eval(a, explain)
		if ok || (undecided && !r.AutoApprove) {
			continue // a rule that asks asks when in doubt
		}
		return false, why
	}
	return true, ""
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// covers reports whether a, evaluated before b, matches every call b
// matches, so b can never fire. It is conservative: when in doubt it says
// no, so a rule is never flagged wrongly.
func covers(a, b *compiled) (string, bool) {
	ra, rb := &a.rule, &b.rule
	if ra.Kind != rb.Kind {
		return "", false
	}
	if ra.ExpiresAt != nil && (rb.ExpiresAt == nil || ra.ExpiresAt.Before(*rb.ExpiresAt)) {
		return "", false
	}
	if !sameOrAny(ra.AgentID, rb.AgentID) || !sameOrAny(ra.SessionID, rb.SessionID) || !sameOrAny(ra.ServerID, rb.ServerID) {
		return "", false
	}
	if !sameOrAny(ra.ToolName, rb.ToolName) {
		return "", false
	}
	if a.pattern != nil {
		switch {
		case a.pattern.any:
		case rb.ToolName != nil:
			if !a.pattern.Match(*rb.ToolName) {
				return "", false
			}
		case b.pattern != nil:
			if !patternIncludes(a.pattern.raw, b.pattern.raw) {
				return "", false
			}
		default:
			return "", false
		}
	}
	// Every condition of a must also be a condition of b.
	for _, ca := range ra.Conditions {
		found := false
		for _, cb := range rb.Conditions {
			if ca == cb {
				found = true
				break
			}
		}
		if !found {
			return "", false
		}
	}
	why := fmt.Sprintf("%s (%s) comes first and matches every call this rule matches", a.label(), ra.Describe())
	if ra.AutoApprove == rb.AutoApprove {
		why += "; both make the same decision, so this rule is redundant"
	}
	return why, true
}

func sameOrAny(a, b *string) bool { return a == nil || (b != nil && *a == *b) }

// patternIncludes reports whether every name matching pattern q also
// matches pattern p: p's stars may absorb any part of q (literals and
// stars), p's literals must meet equal literals of q.
func patternIncludes(p, q string) bool {
	pr, qr := []rune(p), []rune(q)
	// memo[i][j]: does p[i:] include q[j:]?
	memo := make([][]int8, len(pr)+1)
	for i := range memo {
		memo[i] = make([]int8, len(qr)+1)
	}
	var inc func(i, j int) bool
	inc = func(i, j int) bool {
		if m := memo[i][j]; m != 0 {
			return m > 0
		}
		var ok bool
		switch {
		case i == len(pr):
			ok = j == len(qr)
		case pr[i] == '*':
			ok = inc(i+1, j) || (j < len(qr) && inc(i, j+1))
		case j < len(qr) && qr[j] != '*' && equalFoldRune(pr[i], qr[j]):
			ok = inc(i+1, j+1)
		}
		memo[i][j] = -1
		if ok {
			memo[i][j] = 1
		}
		return ok
	}
	return inc(0, 0)
}
