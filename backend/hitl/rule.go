package hitl

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/backend/core"
)

// Rule is a tool permission rule (seed 002's ToolPermissionRule) plus
// Airlock's additions: argument conditions, agent/session scope and expiry.
//
// A nil ServerID, ToolName or ToolPattern means "any"; a rule with all three
// nil is global. Every field that is set must match for the rule to match.
type Rule struct {
	ID string `json:"id"`
	// Kind is what the rule applies to: KindTool (tool calls; the default,
	// and what every rule of seed 002 is), KindPrompt (prompts/get: ToolName
	// and ToolPattern then name prompts) or KindResource (resources/read:
	// they then match resource URIs).
	Kind        string      `json:"kind"`
	ServerID    *string     `json:"serverId"`
	ToolName    *string     `json:"toolName"`
	ToolPattern *string     `json:"toolPattern"`
	AutoApprove bool        `json:"autoApprove"`
	Priority    int         `json:"priority"`
	Conditions  []Condition `json:"conditions"`
	AgentID     *string     `json:"agentId"`
	SessionID   *string     `json:"sessionId"`
	ExpiresAt   *time.Time  `json:"expiresAt"`
	CreatedAt   time.Time   `json:"createdAt"`
	UpdatedAt   time.Time   `json:"updatedAt"`
}

// Rule kinds: what a rule applies to.
const (
	KindTool        = "tool"
	KindPrompt      = "prompt"
	KindResource    = "resource"
	KindSampling    = "sampling"    // a server asks the agent's model for a message
	KindElicitation = "elicitation" // a server asks the agent's user for input
)

// RuleKind returns the rule kind that applies to a request kind.
func RuleKind(requestKind string) string {
	switch requestKind {
	case core.KindPromptGet:
		return KindPrompt
	case core.KindResourceRead:
		return KindResource
	case core.KindSampling:
		return KindSampling
	case core.KindElicitation:
		return KindElicitation
	}
	return KindTool
}

// Condition tests one value inside a call's arguments.
//
// Path is a JSON path into the arguments object: "$.path", "path",
// "$.options.paths[0]", `$["key.with.dots"]`. Op is one of:
//
//   - equals: the value, as text, equals Value. Strings compare as they are;
//     numbers, booleans and null by their JSON text; objects and arrays by
//     their compact JSON with sorted keys.
//   - glob: the value matches the glob Value, where "**" matches anything,
//     "*" any run without "/" and "?" one character other than "/".
//   - prefix: the value starts with Value.
//   - regex: the value matches the RE2 expression Value anywhere (anchor it
//     with ^…$ to match the whole value).
//   - inside: the value is an absolute path inside the directory Value (or
//     the directory itself), after ".." is applied and symlinks are resolved
//     on both sides, so neither "dir/../x" nor a symlink out of dir passes.
//
// A missing value fails the condition: a rule never auto-approves a call it
// cannot check.
type Condition struct {
	Path  string `json:"path"`
	Op    string `json:"op"`
	Value string `json:"value"`
}

// Condition operators.
const (
	OpEquals = "equals"
	OpGlob   = "glob"
	OpPrefix = "prefix"
	OpRegex  = "regex"
	OpInside = "inside"
)

// Ops lists the condition operators, for forms and help texts.
var Ops = []string{OpEquals, OpGlob, OpPrefix, OpRegex, OpInside}

// PrecedenceText describes the order in which rules are evaluated; the
// settings page and the CLI show it next to the rule list.
const PrecedenceText = "Rules are evaluated from the highest priority down and the first rule that matches decides; " +
	"if none matches, a person is asked. At equal priority the more specific rule goes first " +
	"(tool name > tool pattern > server only > global), then the older rule. " +
	"Tool rules decide tool calls only; prompt, resource, sampling and elicitation rules decide prompts/get, resources/read and the sampling and elicitation requests a server makes during a call, and are listed after them."

// Specificity ranks how narrowly a rule names its tools, for the tie-break
// at equal priority: 3 tool name, 2 tool pattern, 1 server only, 0 global.
func Specificity(r Rule) int {
	switch {
	case r.ToolName != nil:
		return 3
	case r.ToolPattern != nil:
		return 2
	case r.ServerID != nil:
		return 1
	}
	return 0
}

func kindOrder(k string) int {
	switch k {
	case KindPrompt:
		return 1
	case KindResource:
		return 2
	case KindSampling:
		return 3
	case KindElicitation:
		return 4
	}
	return 0
}

// Precedes reports whether a is evaluated before b: tool rules before prompt
// rules before resource rules (they never decide the same request), then
// higher priority first,
// then higher Specificity, then older CreatedAt, then smaller ID.
func Precedes(a, b Rule) bool {
	// Rules of different kinds never meet; tool rules are listed first.
	if ka, kb := kindOrder(a.Kind), kindOrder(b.Kind); ka != kb {
		return ka < kb
	}
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if sa, sb := Specificity(a), Specificity(b); sa != sb {
		return sa > sb
	}
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.Before(b.CreatedAt)
	}
	return a.ID < b.ID
}

// SortRules sorts rules into evaluation order (see Precedes).
func SortRules(rules []Rule) {
	sort.SliceStable(rules, func(i, j int) bool { return Precedes(rules[i], rules[j]) })
}

// RuleInput is what a person supplies to create or update a rule. Empty
// strings count as unset. Decoding it from JSON is strict: an unknown field
// (a typo such as "toolpattern" would otherwise silently widen the rule into
// a global one) or a non-integer priority is an EInvalid error.
type RuleInput struct {
	Kind        string      `json:"kind,omitempty"`
	ServerID    *string     `json:"serverId"`
	ToolName    *string     `json:"toolName"`
	ToolPattern *string     `json:"toolPattern"`
	AutoApprove bool        `json:"autoApprove"`
	Priority    int         `json:"priority"`
	Conditions  []Condition `json:"conditions"`
	AgentID     *string     `json:"agentId"`
	SessionID   *string     `json:"sessionId"`
	ExpiresAt   *time.Time  `json:"expiresAt"`
}

// Input returns the fields of r a person can edit.
func (r Rule) Input() RuleInput {
	return RuleInput{
		Kind: r.Kind, ServerID: r.ServerID, ToolName: r.ToolName, ToolPattern: r.ToolPattern,
		AutoApprove: r.AutoApprove, Priority: r.Priority,
		Conditions: append([]Condition(nil), r.Conditions...),
		AgentID:    r.AgentID, SessionID: r.SessionID, ExpiresAt: r.ExpiresAt,
	}
}

// UnmarshalJSON decodes strictly; see RuleInput.
func (in *RuleInput) UnmarshalJSON(data []byte) error {
	r, err := decodeRule(data, false)
	if err != nil {
		return err
	}
	*in = r.Input()
	return nil
}

// ParsePriority parses a priority typed by a person.
func ParsePriority(s string) (int, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if errors.Is(err, strconv.ErrRange) {
		return 0, core.Errorf(core.EInvalid, "priority %s is out of range (%d to %d)", strings.TrimSpace(s), math.MinInt32, math.MaxInt32)
	}
	if err != nil {
		return 0, core.Errorf(core.EInvalid, "priority must be an integer, got %q", s)
	}
	return int(n), nil
}

var ruleFields = map[string]bool{
	"kind": true, "serverId": true, "toolName": true, "toolPattern": true, "autoApprove": true, "priority": true,
	"conditions": true, "agentId": true, "sessionId": true, "expiresAt": true,
}

var ruleMetaFields = map[string]bool{"id": true, "createdAt": true, "updatedAt": true}

// decodeRule decodes one rule object strictly. withMeta also accepts id,
// createdAt and updatedAt (rules files).
func decodeRule(data []byte, withMeta bool) (Rule, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return Rule{}, core.Errorf(core.EInvalid, "a rule must be a JSON object: %v", err)
	}
	var r Rule
	for k, v := range fields {
		if !ruleFields[k] && !(withMeta && ruleMetaFields[k]) {
			return Rule{}, core.Errorf(core.EInvalid, "unknown rule field %q", k)
		}
		var err error
		switch k {
		case "id":
			err = json.Unmarshal(v, &r.ID)
		case "createdAt":
			err = json.Unmarshal(v, &r.CreatedAt)
		case "updatedAt":
			err = json.Unmarshal(v, &r.UpdatedAt)
		case "kind":
			err = json.Unmarshal(v, &r.Kind)
		case "serverId":
			err = json.Unmarshal(v, &r.ServerID)
		case "toolName":
			err = json.Unmarshal(v, &r.ToolName)
		case "toolPattern":
			err = json.Unmarshal(v, &r.ToolPattern)
		case "autoApprove":
			err = json.Unmarshal(v, &r.AutoApprove)
		case "priority":
			r.Priority, err = decodePriority(v)
			if err != nil {
				return Rule{}, err
			}
		case "conditions":
			dec := json.NewDecoder(bytes.NewReader(v))
			dec.DisallowUnknownFields()
			err = dec.Decode(&r.Conditions)
		case "agentId":
			err = json.Unmarshal(v, &r.AgentID)
		case "sessionId":
			err = json.Unmarshal(v, &r.SessionID)
		case "expiresAt":
			err = json.Unmarshal(v, &r.ExpiresAt)
		}
		if err != nil {
			return Rule{}, core.Errorf(core.EInvalid, "rule field %q: %v", k, err)
		}
	}
	return r, nil
}

func decodePriority(v json.RawMessage) (int, error) {
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return 0, core.Errorf(core.EInvalid, "priority must be an integer, got %s", v)
	}
	switch t := x.(type) {
	case json.Number:
		n = t
	case nil:
		return 0, nil
	default:
		return 0, core.Errorf(core.EInvalid, "priority must be an integer, got %s", v)
	}
	i, err := strconv.ParseInt(n.String(), 10, 32)
	if err != nil {
		// 1e2 and 100.0 are integers written oddly; accept them.
		f, ferr := strconv.ParseFloat(n.String(), 64)
		if ferr == nil && f == math.Trunc(f) && (f > math.MaxInt32 || f < math.MinInt32) {
			return 0, core.Errorf(core.EInvalid, "priority %s is out of range (%d to %d)", n, math.MinInt32, math.MaxInt32)
		}
		if ferr != nil || f != math.Trunc(f) {
			return 0, core.Errorf(core.EInvalid, "priority must be an integer, got %s", n)
		}
		i = int64(f)
	}
	return int(i), nil
}

// newID returns a random rule or approval id: 16 hex characters.
func newID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // never happens on supported platforms
	}
	return hex.EncodeToString(b[:])
}

const maxFieldLen = 256

// normalize trims the optional strings of in (empty → nil) and validates
// every field. It never looks at the clock; expiry in the past is checked by
// the callers that create rules from a person's input.
func (in RuleInput) normalize() (RuleInput, error) {
	var err error
	switch k := strings.ToLower(strings.TrimSpace(in.Kind)); k {
	case "", KindTool, "tools", core.KindToolCall:
		in.Kind = KindTool
	case KindPrompt, "prompts", core.KindPromptGet:
		in.Kind = KindPrompt
	case KindResource, "resources", core.KindResourceRead:
		in.Kind = KindResource
	case KindSampling, core.KindSampling:
		in.Kind = KindSampling
	case KindElicitation, core.KindElicitation:
		in.Kind = KindElicitation
	default:
		return in, core.Errorf(core.EInvalid, "unknown rule kind %q (use tool, prompt, resource, sampling or elicitation)", in.Kind)
	}
	if in.ServerID, err = optional("serverId", in.ServerID); err != nil {
		return in, err
	}
	if in.ToolName, err = optional("toolName", in.ToolName); err != nil {
		return in, err
	}
	if in.ToolPattern, err = optional("toolPattern", in.ToolPattern); err != nil {
		return in, err
	}
	if in.AgentID, err = optional("agentId", in.AgentID); err != nil {
		return in, err
	}
	if in.SessionID, err = optional("sessionId", in.SessionID); err != nil {
		return in, err
	}
	if in.Priority > math.MaxInt32 || in.Priority < math.MinInt32 {
		return in, core.Errorf(core.EInvalid, "priority %d is out of range", in.Priority)
	}
	if in.ToolPattern != nil {
		if err := validatePattern(*in.ToolPattern); err != nil {
			return in, err
		}
		if in.ToolName != nil && !compileWildcard(*in.ToolPattern).Match(*in.ToolName) {
			return in, core.Errorf(core.EInvalid,
				"toolName %q does not match toolPattern %q: the rule could never fire; set only one of them",
				*in.ToolName, *in.ToolPattern)
		}
	}
	conds := make([]Condition, 0, len(in.Conditions))
	for i, c := range in.Conditions {
		c.Path = strings.TrimSpace(c.Path)
		c.Op = strings.ToLower(strings.TrimSpace(c.Op))
		if _, err := compileCondition(c); err != nil {
			return in, core.Errorf(core.EInvalid, "condition %d: %s", i+1, core.ErrorMessage(err))
		}
		conds = append(conds, c)
	}
	in.Conditions = conds
	return in, nil
}

func optional(name string, p *string) (*string, error) {
	if p == nil {
		return nil, nil
	}
	s := strings.TrimSpace(*p)
	if s == "" {
		return nil, nil
	}
	if len(s) > maxFieldLen {
		return nil, core.Errorf(core.EInvalid, "%s is longer than %d characters", name, maxFieldLen)
	}
	if !utf8.ValidString(s) {
		return nil, core.Errorf(core.EInvalid, "%s is not valid UTF-8", name)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return nil, core.Errorf(core.EInvalid, "%s contains a control character", name)
		}
	}
	return &s, nil
}

// validatePattern accepts a tool pattern: tool-name characters and "*".
// Characters other wildcard dialects use ("?", "[", "{") are refused rather
// than taken literally, so a pattern never silently means less than its
// author thought.
func validatePattern(p string) error {
	for _, r := range p {
		switch {
		case r == '?' || r == '[' || r == ']' || r == '{' || r == '}':
			return core.Errorf(core.EInvalid, "invalid toolPattern %q: only * is a wildcard (it matches any run of characters)", p)
		case unicode.IsSpace(r) || unicode.IsControl(r):
			return core.Errorf(core.EInvalid, "invalid toolPattern %q: tool names contain no spaces or control characters", p)
		}
	}
	return nil
}

// build turns validated input into a rule.
func (in RuleInput) build(id string, created, updated time.Time) Rule {
	conds := in.Conditions
	if conds == nil {
		conds = []Condition{}
	}
	return Rule{
		ID: id, Kind: in.Kind, ServerID: in.ServerID, ToolName: in.ToolName, ToolPattern: in.ToolPattern,
		AutoApprove: in.AutoApprove, Priority: in.Priority, Conditions: conds,
		AgentID: in.AgentID, SessionID: in.SessionID, ExpiresAt: in.ExpiresAt,
		CreatedAt: created, UpdatedAt: updated,
	}
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

func validateID(id string) error {
	if !idPattern.MatchString(id) {
		return core.Errorf(core.EInvalid, "invalid rule id %q: use 1-64 letters, digits, '.', '_' or '-'", id)
	}
	return nil
}

// Describe is a short human description of what the rule matches, e.g.
// "priority 100, server filesystem, pattern read_*".
func (r Rule) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "priority %d", r.Priority)
	noun := "tool"
	switch r.Kind {
	case KindPrompt:
		noun = "prompt"
		b.WriteString(", prompts")
	case KindResource:
		noun = "resource"
		b.WriteString(", resources")
	case KindSampling:
		noun = "request"
		b.WriteString(", sampling")
	case KindElicitation:
		noun = "request"
		b.WriteString(", elicitation")
	}
	if r.ServerID != nil {
		b.WriteString(", server " + *r.ServerID)
	}
	if r.ToolName != nil {
		b.WriteString(", " + noun + " " + *r.ToolName)
	}
	if r.ToolPattern != nil {
		b.WriteString(", pattern " + *r.ToolPattern)
	}
	if r.ServerID == nil && r.ToolName == nil && r.ToolPattern == nil {
		b.WriteString(", global")
	}
	for _, c := range r.Conditions {
		b.WriteString(", when " + c.String())
	}
	if r.AgentID != nil {
		b.WriteString(", agent " + *r.AgentID)
	}
	if r.SessionID != nil {
		b.WriteString(", session " + *r.SessionID)
	}
	if r.ExpiresAt != nil {
		b.WriteString(", expires " + r.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return b.String()
}

// String renders the condition as "PATH OP VALUE", the CLI's --when syntax.
func (c Condition) String() string { return c.Path + " " + c.Op + " " + c.Value }

// ParseCondition parses the CLI's "PATH OP VALUE" (VALUE may contain spaces).
func ParseCondition(s string) (Condition, error) {
	s = strings.TrimSpace(s)
	path, rest, ok := strings.Cut(s, " ")
	if !ok {
		return Condition{}, core.Errorf(core.EInvalid, "condition %q: want PATH OP VALUE, e.g. '$.path inside /home/me/project'", s)
	}
	rest = strings.TrimSpace(rest)
	op, value, _ := strings.Cut(rest, " ")
	c := Condition{Path: path, Op: strings.ToLower(op), Value: strings.TrimSpace(value)}
	if _, err := compileCondition(c); err != nil {
		return Condition{}, err
	}
	return c, nil
}
