package hitl

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/google/go-cmp/cmp"
)

func sp(s string) *string { return &s }

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// mkRule builds a rule for engine tests; created orders rules of equal
// priority and specificity.
func mkRule(id string, prio int, auto bool, server, tool, pattern string, created int) Rule {
	r := Rule{ID: id, Priority: prio, AutoApprove: auto, CreatedAt: t0.Add(time.Duration(created) * time.Second)}
	if server != "" {
		r.ServerID = sp(server)
	}
	if tool != "" {
		r.ToolName = sp(tool)
	}
	if pattern != "" {
		r.ToolPattern = sp(pattern)
	}
	return r
}

func mustEngine(t *testing.T, rules ...Rule) *Engine {
	t.Helper()
	e := NewEngine()
	if _, err := e.Load(rules); err != nil {
		t.Fatalf("Load: %v", err)
	}
	return e
}

type want struct {
	auto bool
	rule string
}

func TestTieBreaks(t *testing.T) {
	tests := []struct {
		name  string
		rules []Rule
		call  Call
		want  want
	}{
		{"higher priority wins over specificity",
			[]Rule{mkRule("name", 1, true, "s", "t", "", 0), mkRule("global", 2, false, "", "", "", 1)},
			Call{Server: "s", Tool: "t"}, want{false, "global"}},
		{"equal priority: tool name before pattern",
			[]Rule{mkRule("pat", 5, false, "s", "", "t*", 0), mkRule("name", 5, true, "s", "t", "", 1)},
			Call{Server: "s", Tool: "t"}, want{true, "name"}},
		{"equal priority: pattern before server only",
			[]Rule{mkRule("srv", 5, false, "s", "", "", 0), mkRule("pat", 5, true, "", "", "t*", 1)},
			Call{Server: "s", Tool: "t"}, want{true, "pat"}},
		{"equal priority: server only before global",
			[]Rule{mkRule("global", 5, false, "", "", "", 0), mkRule("srv", 5, true, "s", "", "", 1)},
			Call{Server: "s", Tool: "t"}, want{true, "srv"}},
		{"equal priority and specificity: older first",
			[]Rule{mkRule("newer", 5, false, "s", "", "", 2), mkRule("older", 5, true, "s", "", "", 1)},
			Call{Server: "s", Tool: "t"}, want{true, "older"}},
		{"same creation time: smaller id first",
			[]Rule{mkRule("b", 5, false, "s", "", "", 1), mkRule("a", 5, true, "s", "", "", 1)},
			Call{Server: "s", Tool: "t"}, want{true, "a"}},
		{"no rule matches: ask",
			[]Rule{mkRule("other", 5, true, "other", "", "", 1)},
			Call{Server: "s", Tool: "t"}, want{false, ""}},
		{"tool name is exact and case-sensitive",
			[]Rule{mkRule("name", 5, true, "", "read_file", "", 1)},
			Call{Server: "s", Tool: "READ_FILE"}, want{false, ""}},
		{"server id is exact",
			[]Rule{mkRule("srv", 5, true, "fs", "", "", 1)},
			Call{Server: "FS", Tool: "x"}, want{false, ""}},
		{"every set field must match",
			[]Rule{mkRule("both", 5, true, "fs", "", "read_*", 1)},
			Call{Server: "other", Tool: "read_file"}, want{false, ""}},
		{"a tool-only rule applies on every server",
			[]Rule{mkRule("tool", 5, true, "", "ping", "", 1)},
			Call{Server: "anything", Tool: "ping"}, want{true, "tool"}},
		{"negative priorities sort below zero",
			[]Rule{mkRule("neg", -5, true, "", "", "", 1), mkRule("zero", 0, false, "s", "", "", 2)},
			Call{Server: "s", Tool: "t"}, want{false, "zero"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustEngine(t, tt.rules...).DecideAt(tt.call.Request(), tt.call.At())
			if diff := cmp.Diff(tt.want, want{(d.Outcome == core.Allow), d.RuleID}, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("decision (-want +got):\n%s\nreason: %s", diff, d.Reason)
			}
		})
	}
}

func TestScopeAndExpiry(t *testing.T) {
	scoped := mkRule("scoped", 10, true, "fs", "", "", 0)
	scoped.AgentID = sp("alice")
	session := mkRule("session", 10, true, "fs", "", "", 1)
	session.SessionID = sp("s1")
	expiring := mkRule("expiring", 10, true, "fs", "", "", 2)
	exp := t0.Add(time.Hour)
	expiring.ExpiresAt = &exp
	e := mustEngine(t, scoped, session, expiring)
	tests := []struct {
		name string
		call Call
		want want
	}{
		{"agent in scope", Call{Agent: "alice", Server: "fs", Tool: "x", Now: t0}, want{true, "scoped"}},
		{"session in scope", Call{Agent: "bob", Session: "s1", Server: "fs", Tool: "x", Now: t0}, want{true, "session"}},
		{"neither scope, not expired", Call{Agent: "bob", Server: "fs", Tool: "x", Now: t0}, want{true, "expiring"}},
		{"expired exactly at ExpiresAt", Call{Agent: "bob", Server: "fs", Tool: "x", Now: exp}, want{false, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := e.DecideAt(tt.call.Request(), tt.call.At())
			if diff := cmp.Diff(tt.want, want{(d.Outcome == core.Allow), d.RuleID}, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConditions(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "project")
	secret := filepath.Join(root, "secret")
	for _, d := range []string{project, secret, filepath.Join(project, "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// project/escape -> ../secret ; project/self -> src (stays inside)
	if err := os.Symlink(secret, filepath.Join(project, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("src", filepath.Join(project, "self")); err != nil {
		t.Fatal(err)
	}
	// a link to the project itself, used as the rule's directory
	linkToProject := filepath.Join(root, "link-to-project")
	if err := os.Symlink(project, linkToProject); err != nil {
		t.Fatal(err)
	}
	// a dangling link out of the project
	if err := os.Symlink(filepath.Join(secret, "not-yet"), filepath.Join(project, "dangling")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		cond Condition
		args string
		want bool
	}{
		{"equals string", Condition{"$.mode", OpEquals, "fast"}, `{"mode":"fast"}`, true},
		{"equals string differs", Condition{"$.mode", OpEquals, "fast"}, `{"mode":"slow"}`, false},
		{"equals number by JSON text", Condition{"count", OpEquals, "5"}, `{"count":5}`, true},
		{"equals bool", Condition{"$.dry", OpEquals, "true"}, `{"dry":true}`, true},
		{"equals object canonical", Condition{"$.o", OpEquals, `{"a":1,"b":2}`}, `{"o":{"b":2,"a":1}}`, true},
		{"missing argument fails", Condition{"$.mode", OpEquals, "fast"}, `{}`, false},
		{"no arguments at all fails", Condition{"$.mode", OpEquals, "fast"}, ``, false},
		{"invalid JSON fails", Condition{"$.mode", OpEquals, "fast"}, `{`, false},
		{"nested path and index", Condition{"$.opts.paths[1]", OpEquals, "b"}, `{"opts":{"paths":["a","b"]}}`, true},
		{"index out of range", Condition{"$.opts.paths[2]", OpEquals, "b"}, `{"opts":{"paths":["a","b"]}}`, false},
		{"quoted key", Condition{`$["a.b"]`, OpEquals, "x"}, `{"a.b":"x"}`, true},
		{"prefix", Condition{"$.url", OpPrefix, "https://api.example.com/"}, `{"url":"https://api.example.com/v1"}`, true},
		{"prefix fails", Condition{"$.url", OpPrefix, "https://api.example.com/"}, `{"url":"https://api.example.com.evil/"}`, false},
		{"glob star stays in segment", Condition{"$.path", OpGlob, "/src/*.go"}, `{"path":"/src/a/b.go"}`, false},
		{"glob double star crosses", Condition{"$.path", OpGlob, "/src/**.go"}, `{"path":"/src/a/b.go"}`, true},
		{"glob question", Condition{"$.path", OpGlob, "/f?.txt"}, `{"path":"/f1.txt"}`, true},
		{"regex", Condition{"$.cmd", OpRegex, `^git (status|log)$`}, `{"cmd":"git status"}`, true},
		{"regex fails", Condition{"$.cmd", OpRegex, `^git (status|log)$`}, `{"cmd":"git push"}`, false},
		{"inside", Condition{"$.path", OpInside, project}, `{"path":"` + filepath.Join(project, "src", "main.go") + `"}`, true},
		{"inside: the directory itself", Condition{"$.path", OpInside, project}, `{"path":"` + project + `"}`, true},
		{"inside: not yet existing file", Condition{"$.path", OpInside, project}, `{"path":"` + filepath.Join(project, "new", "file.txt") + `"}`, true},
		{"inside: .. escape", Condition{"$.path", OpInside, project}, `{"path":"` + project + `/../secret/key"}`, false},
		{"inside: .. that stays inside", Condition{"$.path", OpInside, project}, `{"path":"` + project + `/src/../README"}`, true},
		{"inside: sibling with common prefix", Condition{"$.path", OpInside, project}, `{"path":"` + project + `-evil/x"}`, false},
		{"inside: symlink escape", Condition{"$.path", OpInside, project}, `{"path":"` + filepath.Join(project, "escape", "key") + `"}`, false},
		{"inside: symlink then .. escapes the real parent", Condition{"$.path", OpInside, filepath.Join(project, "src")}, `{"path":"` + filepath.Join(project, "self", "..", "README") + `"}`, false},
		{"inside: dangling symlink escape", Condition{"$.path", OpInside, project}, `{"path":"` + filepath.Join(project, "dangling") + `"}`, false},
		{"inside: symlink staying inside", Condition{"$.path", OpInside, project}, `{"path":"` + filepath.Join(project, "self", "x.go") + `"}`, true},
		{"inside: rule dir is a symlink", Condition{"$.path", OpInside, linkToProject}, `{"path":"` + filepath.Join(project, "src") + `"}`, true},
		{"inside: relative path refused", Condition{"$.path", OpInside, project}, `{"path":"src/main.go"}`, false},
		{"inside: non-string refused", Condition{"$.path", OpInside, project}, `{"path":5}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mkRule("r", 1, true, "", "", "", 0)
			r.Conditions = []Condition{tt.cond}
			e := mustEngine(t, r)
			call := Call{Server: "s", Tool: "t", Args: json.RawMessage(tt.args)}
			if got := e.DecideAt(call.Request(), call.At()).Outcome == core.Allow; got != tt.want {
				t.Errorf("auto-approve = %v, want %v; explanation: %+v", got, tt.want, e.Explain(call.Request(), call.At()).Skipped)
			}
		})
	}
}

func TestValidation(t *testing.T) {
	tests := []struct {
		name    string
		in      RuleInput
		wantErr string // substring; "" means valid
	}{
		{"empty rule is global", RuleInput{}, ""},
		{"blank strings are unset", RuleInput{ServerID: sp("  "), ToolName: sp("")}, ""},
		{"question mark in pattern", RuleInput{ToolPattern: sp("read_?")}, "only * is a wildcard"},
		{"space in pattern", RuleInput{ToolPattern: sp("read file*")}, "no spaces"},
		{"name contradicts pattern", RuleInput{ToolName: sp("read_file"), ToolPattern: sp("delete_*")}, "could never fire"},
		{"bad regex", RuleInput{Conditions: []Condition{{"$.x", OpRegex, "("}}}, "invalid regex"},
		{"unknown op", RuleInput{Conditions: []Condition{{"$.x", "contains", "a"}}}, `unknown condition op "contains"`},
		{"inside needs absolute dir", RuleInput{Conditions: []Condition{{"$.x", OpInside, "rel"}}}, "absolute directory"},
		{"bad path", RuleInput{Conditions: []Condition{{"$.x[", OpEquals, "a"}}}, "missing ']'"},
		{"empty path", RuleInput{Conditions: []Condition{{"", OpEquals, "a"}}}, "empty JSON path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.in.normalize()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("normalize: unexpected error %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("normalize error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestRuleInputJSON(t *testing.T) {
	tests := []struct {
		name, json, wantErr string
		want                RuleInput
	}{
		{"ok", `{"serverId":"fs","priority":100,"autoApprove":true}`, "", RuleInput{ServerID: sp("fs"), Priority: 100, AutoApprove: true}},
		{"integer written as float", `{"priority":1e2}`, "", RuleInput{Priority: 100}},
		{"fractional priority", `{"priority":1.5}`, "priority must be an integer", RuleInput{}},
		{"string priority", `{"priority":"high"}`, "priority must be an integer", RuleInput{}},
		{"typo field", `{"toolpattern":"x*"}`, `unknown rule field "toolpattern"`, RuleInput{}},
		{"id is not input", `{"id":"x"}`, `unknown rule field "id"`, RuleInput{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got RuleInput
			err := json.Unmarshal([]byte(tt.json), &got)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExplain(t *testing.T) {
	exp := t0.Add(-time.Hour)
	expired := mkRule("expired", 300, true, "", "", "", 0)
	expired.ExpiresAt = &exp
	scoped := mkRule("scoped", 250, true, "", "", "", 0)
	scoped.AgentID = sp("alice")
	cond := mkRule("cond", 200, true, "fs", "", "", 0)
	cond.Conditions = []Condition{{"$.path", OpInside, "/tmp"}}
	prompt := mkRule("prompt", 120, false, "fs", "", "", 0)
	prompt.Kind = KindPrompt // not a candidate for a tool call: not listed as skipped
	e := mustEngine(t,
		expired, scoped, cond, prompt,
		mkRule("shell", 150, true, "shell", "", "", 0),
		mkRule("delete", 100, false, "fs", "", "delete_*", 0),
		mkRule("exact", 90, true, "fs", "write_file", "", 0),
		mkRule("read", 80, true, "fs", "", "read_*", 0),
		mkRule("global", 0, false, "", "", "", 0),
	)
	bob := Call{Agent: "bob", Server: "fs", Tool: "read_file", Args: json.RawMessage(`{"path":"/etc/passwd"}`), Now: t0}
	got := e.Explain(bob.Request(), bob.At())
	type skip struct{ ID, Why string }
	var skipped []skip
	for _, s := range got.Skipped {
		skipped = append(skipped, skip{s.Rule.ID, s.Why})
	}
	wantSkipped := []skip{
		{"expired", "expired at 2025-01-02T02:04:05Z"},
		{"scoped", "scoped to agent alice (call is from bob)"},
		{"cond", `condition $.path inside /tmp failed: "/etc/passwd" is outside /tmp`},
		{"shell", "server is fs, rule wants shell"},
		{"delete", "tool read_file does not match pattern delete_*"},
		{"exact", "tool is read_file, rule wants write_file"},
	}
	if diff := cmp.Diff(wantSkipped, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if got.Fired == nil || got.Fired.ID != "read" {
		t.Fatalf("fired = %+v, want rule read", got.Fired)
	}
	wantDecision := core.Verdict{Outcome: core.Allow, By: VerdictBy, RuleID: "read", RuleSetVersion: 1,
		Reason: "rule #7 [read] (priority 80, server fs, pattern read_*) auto-approves"}
	if diff := cmp.Diff(wantDecision, got.Verdict); diff != "" {
		t.Errorf("decision (-want +got):\n%s", diff)
	}
	// Explain and Decide agree.
	if d := e.DecideAt(bob.Request(), bob.At()); d != got.Verdict {
		t.Errorf("Decide = %+v, Explain decided %+v", d, got.Verdict)
	}

	xy := Call{Server: "x", Tool: "y", Now: t0}
	none := e.Explain(xy.Request(), xy.At())
	if none.Verdict.RuleID != "global" || none.Verdict.Reason != "rule #8 [global] (priority 0, global) requires approval" {
		t.Errorf("explain of an unmatched call = %+v", none.Verdict)
	}
	empty := mustEngine(t).Explain(xy.Request(), xy.At())
	if empty.Fired != nil || empty.Reason != NoMatchReason || len(empty.Skipped) != 0 {
		t.Errorf("explain with no rules = %+v", empty)
	}
}

func TestShadowed(t *testing.T) {
	cond := mkRule("cond", 50, true, "fs", "", "", 0)
	cond.Conditions = []Condition{{"$.path", OpPrefix, "/tmp"}}
	condMore := mkRule("cond-more", 40, false, "fs", "read_file", "", 0)
	condMore.Conditions = []Condition{{"$.path", OpPrefix, "/tmp"}, {"$.mode", OpEquals, "x"}}
	exp := t0.Add(time.Hour)
	expiring := mkRule("expiring", 200, true, "", "", "", 0)
	expiring.ExpiresAt = &exp
	scoped := mkRule("scoped", 150, true, "", "", "", 0)
	scoped.AgentID = sp("alice")
	tests := []struct {
		name  string
		rules []Rule
		want  []ShadowInfo
	}{
		{"global above everything", []Rule{mkRule("g", 100, false, "", "", "", 0), mkRule("a", 50, true, "fs", "read_file", "", 0)},
			[]ShadowInfo{{RuleID: "a", ByRuleID: "g"}}},
		{"server star pattern above same server", []Rule{mkRule("star", 100, false, "fs", "", "*", 0), mkRule("a", 50, true, "fs", "", "read_*", 0), mkRule("other", 50, true, "shell", "", "", 0)},
			[]ShadowInfo{{RuleID: "a", ByRuleID: "star"}}},
		{"wider pattern above narrower", []Rule{mkRule("wide", 100, true, "", "", "read_*", 0), mkRule("narrow", 50, false, "", "", "READ_F*", 0), mkRule("name", 40, false, "fs", "read_x", "", 0)},
			[]ShadowInfo{{RuleID: "narrow", ByRuleID: "wide"}, {RuleID: "name", ByRuleID: "wide"}}},
		{"same criteria above", []Rule{mkRule("first", 10, true, "fs", "t", "", 0), mkRule("second", 10, false, "fs", "t", "", 1)},
			[]ShadowInfo{{RuleID: "second", ByRuleID: "first"}}},
		{"conditions above cover a superset of conditions", []Rule{cond, condMore}, []ShadowInfo{{RuleID: "cond-more", ByRuleID: "cond"}}},
		{"conditions below do not shadow", []Rule{condMore, mkRule("srv", 10, true, "fs", "", "", 0)}, []ShadowInfo{}},
		{"an expiring or scoped rule shadows nothing", []Rule{expiring, scoped, mkRule("a", 10, true, "fs", "", "", 0)}, []ShadowInfo{}},
		{"narrower above wider is fine", []Rule{mkRule("a", 100, true, "fs", "read_file", "", 0), mkRule("b", 50, false, "fs", "", "", 0), mkRule("c", 0, false, "", "", "", 0)}, []ShadowInfo{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustEngine(t, tt.rules...).Shadowed()
			for i := range got {
				if got[i].Why == "" {
					t.Errorf("shadow %+v has no reason", got[i])
				}
				got[i].Why = ""
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("shadowed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadIsAllOrNothing(t *testing.T) {
	e := mustEngine(t, mkRule("a", 1, true, "", "", "", 0))
	bad := mkRule("b", 1, true, "", "", "x?", 0)
	if _, err := e.Load([]Rule{mkRule("c", 1, true, "", "", "", 0), bad}); err == nil {
		t.Fatal("Load accepted an invalid pattern")
	}
	if _, err := e.Load([]Rule{mkRule("c", 1, true, "", "", "", 0), mkRule("c", 2, true, "", "", "", 0)}); err == nil {
		t.Fatal("Load accepted a duplicate id")
	}
	if diff := cmp.Diff([]string{"a"}, ids(e.Rules())); diff != "" || e.Version() != 1 {
		t.Errorf("after failed loads: version %d, rules (-want +got):\n%s", e.Version(), diff)
	}
}

func ids(rules []Rule) []string {
	out := []string{}
	for _, r := range rules {
		out = append(out, r.ID)
	}
	return out
}

// A rule that asks asks when its condition cannot be evaluated: a path it
// cannot judge must not slip past it to an auto-approve rule below.
func TestAskRuleConditionsFailClosed(t *testing.T) {
	etc := t.TempDir()
	ask := mkRule("ask-etc", 10, false, "fs", "", "", 0)
	ask.Conditions = []Condition{{"$.path", OpInside, etc}}
	allow := mkRule("allow-fs", 0, true, "fs", "", "", 1)
	e := mustEngine(t, ask, allow)
	tests := []struct {
		name string
		args string
		want want
	}{
		{"inside", `{"path":"` + etc + `/passwd"}`, want{false, "ask-etc"}},
		{"relative path cannot be judged", `{"path":"../../etc/passwd"}`, want{false, "ask-etc"}},
		{"array instead of a path", `{"path":["` + etc + `/passwd"]}`, want{false, "ask-etc"}},
		{"invalid JSON", `{"path":`, want{false, "ask-etc"}},
		{"outside", `{"path":"/srv/data"}`, want{true, "allow-fs"}},
		{"no path argument at all", `{"q":"x"}`, want{true, "allow-fs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := e.Decide(Call{Server: "fs", Tool: "write_file", Args: json.RawMessage(tt.args)}.Request())
			if got := (want{(d.Outcome == core.Allow), d.RuleID}); got != tt.want {
				t.Errorf("decision = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// A person confining an auto-approve rule to a folder writes what Claude
// Code's own path rules look like, `$.path glob /work/proj/**` or
// `$.path prefix /work/proj/`: both auto-approved
// /work/proj/../../etc/shadow, read as text (found by a new-user test;
// `inside` resolves it, but nothing steers the person there, and the form
// offers glob and prefix beside it). A path that climbs out with ".." must
// not pass a glob or prefix of a rule that auto-approves: when in doubt,
// ask.
func TestGlobAndPrefixDoNotAutoApproveDotDotEscapes(t *testing.T) {
	for _, cond := range []Condition{
		{"$.path", OpGlob, "/work/proj/**"},
		{"$.path", OpPrefix, "/work/proj/"},
	} {
		t.Run(string(cond.Op), func(t *testing.T) {
			r := mkRule("r", 1, true, "", "", "", 0)
			r.Conditions = []Condition{cond}
			e := mustEngine(t, r)
			inside := Call{Server: "s", Tool: "t", Args: json.RawMessage(`{"path":"/work/proj/src/main.go"}`)}
			if e.DecideAt(inside.Request(), inside.At()).Outcome != core.Allow {
				t.Fatalf("setup: %s does not auto-approve a file inside", cond)
			}
			escape := Call{Server: "s", Tool: "t", Args: json.RawMessage(`{"path":"/work/proj/../../etc/shadow"}`)}
			if d := e.DecideAt(escape.Request(), escape.At()); d.Outcome == core.Allow {
				t.Errorf("%s auto-approves /work/proj/../../etc/shadow (%s); want it to ask", cond, d.Reason)
			}
		})
	}
}
