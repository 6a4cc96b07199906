package authz_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
)

func boolp(b bool) *bool { return &b }

// TestDownstreamMatrix walks status × server grant × role tool permission ×
// toggle, for an ordinary role and for superuser, over tools, prompts and
// resources, and checks the seed's precedence: suspended → not_subscribed →
// user_disabled → allowed; prompts and resources follow the server grant
// alone; superuser has every grant through the same decision.
func TestDownstreamMatrix(t *testing.T) {
	e := newEnv(t)
	if _, err := e.svc.CreateRole(authz.RoleInput{Name: "dev"}); err != nil {
		t.Fatal(err)
	}
	w := e.agent(t, authz.AgentInput{Name: "bob", Role: "dev"})
	const srv, tool = "github", "create_issue"
	link := func(tab, title string) string {
		return fmt.Sprintf("open Airlock → Agents → bob → %s (#/agents/%s?tab=%s)", title, w.id(), tab)
	}
	for _, superuser := range []bool{false, true} {
		role := "dev"
		if superuser {
			role = authz.RoleSuperuser
		}
		if _, err := e.svc.UpdateAgent("bob", authz.AgentUpdate{Role: &role}); err != nil {
			t.Fatal(err)
		}
		for _, status := range []string{authz.StatusActive, authz.StatusSuspended, authz.StatusDisabled} {
			for _, grant := range []bool{false, true} {
				for _, perm := range []string{"none", "allow", "deny"} {
					for _, enabled := range []bool{true, false} {
						name := fmt.Sprintf("superuser=%v/%s/grant=%v/perm=%s/enabled=%v", superuser, status, grant, perm, enabled)
						if _, err := e.svc.SetStatus("bob", status); err != nil {
							t.Fatal(err)
						}
						if grant {
							if _, err := e.svc.GrantServer(role, srv); err != nil {
								t.Fatal(err)
							}
						} else if _, err := e.svc.RevokeServer(role, srv); err != nil && core.ErrorCode(err) != core.ENotFound {
							t.Fatal(err)
						}
						var p *bool
						if perm != "none" {
							p = boolp(perm == "allow")
						}
						if _, err := e.svc.SetRoleTool(role, srv, tool, p); err != nil {
							t.Fatal(err)
						}
						if _, err := e.svc.SetToolEnabled("bob", srv, tool, enabled); err != nil {
							t.Fatal(err)
						}
						caller, _ := e.resolve(t, "m-"+name, w.Token, "")

						// The expected decision, rule by rule as seed 003 orders them.
						var wantTool, wantOther *core.Error
						switch {
						case status != authz.StatusActive:
							wantTool = &core.Error{Code: "suspended", Message: "account is " + status, Hint: "resume agent 'bob': " + link("status", "Status")}
							wantOther = wantTool
						default:
							serverOK := superuser || grant
							toolOK := serverOK
							if perm != "none" && !superuser {
								toolOK = perm == "allow"
							}
							if !serverOK {
								wantOther = &core.Error{Code: "not_subscribed", Message: "Role '" + role + "' of agent 'bob' has no grant for server 'github'",
									Hint: "grant server 'github' to role '" + role + "', or give agent 'bob' another role: " + link("role", "Role")}
							}
							switch {
							case !toolOK && perm == "deny":
								wantTool = &core.Error{Code: "not_subscribed", Message: "Role '" + role + "' of agent 'bob' does not permit tool 'create_issue' of server 'github'",
									Hint: "allow tool 'create_issue' of server 'github' in role '" + role + "', or give agent 'bob' another role: " + link("role", "Role")}
							case !toolOK:
								wantTool = wantOther
							case !enabled:
								wantTool = &core.Error{Code: "user_disabled", Message: "Tool 'create_issue' of server 'github' is switched off for agent 'bob'",
									Hint: "switch it on: " + link("tools", "Tools")}
							}
						}
						if diff := cmp.Diff(wantTool, e.svc.Refusal(&caller, toolTarget(srv, tool))); diff != "" {
							t.Errorf("%s: tool (-want +got):\n%s", name, diff)
						}
						for _, kind := range []string{core.KindPromptGet, core.KindResourceRead} {
							got := e.svc.Refusal(&caller, core.Target{Kind: kind, Server: srv, Name: tool})
							if diff := cmp.Diff(wantOther, got); diff != "" {
								t.Errorf("%s: %s (-want +got):\n%s", name, kind, diff)
							}
						}
						// Another tool of the server: no permission, no toggle.
						other := e.svc.Refusal(&caller, toolTarget(srv, "list_issues"))
						if diff := cmp.Diff(wantOther, other); diff != "" {
							t.Errorf("%s: untouched tool (-want +got):\n%s", name, diff)
						}
					}
				}
			}
		}
	}
}

func TestDownstreamUnauthenticatedAndUnknown(t *testing.T) {
	e := newEnv(t)
	anon := mustResolve(t, e, "anon", "", "")
	got := e.svc.Refusal(&anon, toolTarget("github", "x"))
	if diff := cmp.Diff(&errSummary{core.EUnauthorized, "Tool 'x' of server 'github' requires authentication. Call authenticate first."}, summarize(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	got = e.svc.Refusal(&anon, core.Target{Kind: core.KindResourceRead, Server: "fs", Name: "file:///etc/passwd"})
	if got == nil || got.Code != core.EUnauthorized {
		t.Errorf("resource for anon: %v", got)
	}
	ghost := core.Caller{AgentID: "ag_ghost", Session: "m"}
	if got := e.svc.Refusal(&ghost, toolTarget("github", "x")); got == nil || got.Code != core.EUnauthorized {
		t.Errorf("unknown agent: %v", got)
	}
	def := mustResolve(t, e, "m2", "", "")
	def.AgentID = authz.DefaultAgentID
	if got := e.svc.Refusal(&def, core.Target{Kind: "telepathy/read", Server: "github", Name: "x"}); got == nil || got.Code != core.EInvalid {
		t.Errorf("unknown kind: %v", got)
	}
}

// TestCacheTTL: a change made behind the service's back (straight in the
// database) shows only after the TTL; a change through the service shows
// at once.
func TestCacheTTL(t *testing.T) {
	e := newEnv(t)
	w := e.agent(t, authz.AgentInput{Name: "bob"})
	if _, err := e.svc.GrantServer(authz.RoleDefault, "github"); err != nil {
		t.Fatal(err)
	}
	caller := mustResolve(t, e, "m", w.Token, "")
	if err := e.svc.Refusal(&caller, toolTarget("github", "x")); err != nil {
		t.Fatal(err)
	}
	if err := e.db.Exec("DELETE FROM role_server_grants").Error; err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(authz.DefaultCacheTTL - time.Nanosecond)
	if err := e.svc.Refusal(&caller, toolTarget("github", "x")); err != nil {
		t.Errorf("before the TTL the cached decision holds; got %v", err)
	}
	e.clock.Advance(time.Nanosecond)
	if err := e.svc.Refusal(&caller, toolTarget("github", "x")); err == nil || err.Code != authz.ReasonNotSubscribed {
		t.Errorf("after the TTL: %v; want not_subscribed", err)
	}
	// InvalidateAll on demand.
	if err := e.db.Exec("INSERT INTO role_server_grants (role_name, server_id) VALUES ('default', 'github')").Error; err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Refusal(&caller, toolTarget("github", "x")); err == nil {
		t.Error("the re-grant showed before invalidation")
	}
	e.svc.InvalidateAll()
	if err := e.svc.Refusal(&caller, toolTarget("github", "x")); err != nil {
		t.Errorf("after InvalidateAll: %v", err)
	}
}

// TestInvalidationOnEveryChange: each change that affects an agent shows
// at the next check and tells OnChange which agents it touched.
func TestInvalidationOnEveryChange(t *testing.T) {
	e := newEnv(t)
	p := e.project(t, "alpha")
	mgr := e.agent(t, authz.AgentInput{Name: "mgr", Kind: authz.KindManager})
	bob := e.agent(t, authz.AgentInput{Name: "bob", Parent: "mgr"})
	other := e.agent(t, authz.AgentInput{Name: "eve", Role: authz.RoleSuperuser})
	var heard [][]string
	e.svc.OnChange(func(ids []string) { heard = append(heard, ids) })
	caller := mustResolve(t, e, "m", bob.Token, "")
	check := func() *core.Error { return e.svc.Refusal(&caller, toolTarget("github", "x")) }
	code := func(err *core.Error) string {
		if err == nil {
			return "allowed"
		}
		return err.Code
	}
	steps := []struct {
		name  string
		do    func() error
		heard []string
		want  string
	}{
		{"grant server", func() error { _, err := e.svc.GrantServer(authz.RoleDefault, "github"); return err }, []string{bob.id(), mgr.id()}, "allowed"},
		{"withhold tool", func() error {
			_, err := e.svc.SetRoleTool(authz.RoleDefault, "github", "x", boolp(false))
			return err
		}, []string{bob.id(), mgr.id()}, "not_subscribed"},
		{"clear tool permission", func() error { _, err := e.svc.SetRoleTool(authz.RoleDefault, "github", "x", nil); return err }, []string{bob.id(), mgr.id()}, "allowed"},
		{"toggle off", func() error { _, err := e.svc.SetToolEnabled("bob", "github", "x", false); return err }, []string{bob.id()}, "user_disabled"},
		{"toggle on", func() error { _, err := e.svc.SetToolEnabled("bob", "github", "x", true); return err }, []string{bob.id()}, "allowed"},
		{"suspend", func() error { _, err := e.svc.Suspend("bob"); return err }, []string{bob.id()}, "suspended"},
		{"resume", func() error { _, err := e.svc.Resume("bob"); return err }, []string{bob.id()}, "allowed"},
		{"change role", func() error {
			r := "superuser"
			_, err := e.svc.UpdateAgent("bob", authz.AgentUpdate{Role: &r})
			return err
		}, []string{bob.id()}, "allowed"},
		{"revoke from the old role", func() error { _, err := e.svc.RevokeServer(authz.RoleDefault, "github"); return err }, []string{mgr.id()}, "allowed"},
		{"back to default role", func() error {
			r := authz.RoleDefault
			_, err := e.svc.UpdateAgent("bob", authz.AgentUpdate{Role: &r})
			return err
		}, []string{bob.id()}, "not_subscribed"},
		{"parent", func() error {
			p := "owner"
			_, err := e.svc.UpdateAgent("bob", authz.AgentUpdate{Parent: &p})
			return err
		}, []string{bob.id()}, "not_subscribed"},
		{"assign project", func() error { _, err := e.svc.Assign("bob", p.ID); return err }, []string{bob.id()}, "not_subscribed"},
		{"rename project", func() error { _, err := e.svc.UpdateProject(p.ID, "beta", ""); return err }, []string{bob.id()}, "not_subscribed"},
		{"compact", func() error { _, err := e.svc.SetCompact("bob", true); return err }, []string{bob.id()}, "not_subscribed"},
		{"superuser flag", func() error { _, err := e.svc.SetSuperuser(authz.RoleDefault, true); return err }, []string{bob.id(), mgr.id()}, "allowed"},
		{"delete project", func() error { return e.svc.DeleteProject(p.ID, false) }, []string{bob.id()}, "allowed"},
	}
	for _, s := range steps {
		heard = nil
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if diff := cmp.Diff([][]string{sorted(s.heard)}, heard); diff != "" {
			t.Errorf("%s: OnChange (-want +got):\n%s", s.name, diff)
		}
		if got := code(check()); got != s.want {
			t.Errorf("%s: decision %s, want %s", s.name, got, s.want)
		}
	}
	_ = other
}

func sorted(ids []string) []string {
	out := append([]string(nil), ids...)
	sort.Strings(out)
	return out
}

// TestReloadSeesOtherProcess: a second service on the same database (the
// CLI) suspends an agent; the running one notices on Reload.
func TestReloadSeesOtherProcess(t *testing.T) {
	e := newEnv(t)
	bob := e.agent(t, authz.AgentInput{Name: "bob", Role: authz.RoleSuperuser})
	caller := mustResolve(t, e, "m", bob.Token, "")
	if err := e.svc.Refusal(&caller, toolTarget("github", "x")); err != nil {
		t.Fatal(err)
	}
	var heard []string
	e.svc.OnChange(func(ids []string) { heard = append(heard, ids...) })
	if changed, err := e.svc.Reload(); err != nil || changed {
		t.Fatalf("reload without changes: %v %v", changed, err)
	}
	cli := newServiceOn(t, e)
	if _, err := cli.Suspend("bob"); err != nil {
		t.Fatal(err)
	}
	if changed, err := e.svc.Reload(); err != nil || !changed {
		t.Fatalf("reload after the CLI's change: %v %v", changed, err)
	}
	if err := e.svc.Refusal(&caller, toolTarget("github", "x")); err == nil || err.Code != authz.ReasonSuspended {
		t.Errorf("after reload: %v", err)
	}
	if !containsStr(heard, bob.id()) {
		t.Errorf("OnChange heard %v; want bob among them", heard)
	}
	// A token the CLI made works at once after reload.
	tok, err := cli.RotateToken("bob")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Reload(); err != nil {
		t.Fatal(err)
	}
	if id, err := e.svc.IdentifyToken(tok); id.AgentID != bob.id() || core.ErrorCode(err) != authz.ReasonSuspended {
		t.Errorf("identify the CLI's token: %+v %v", id, err)
	}
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestBatchAllOrNothing(t *testing.T) {
	e := newEnv(t)
	if _, err := e.svc.CreateRole(authz.RoleInput{Name: "dev", Servers: []string{"github", "jira"}}); err != nil {
		t.Fatal(err)
	}
	bob := e.agent(t, authz.AgentInput{Name: "bob", Role: "dev", Compact: true})
	if _, err := e.svc.SetToolEnabled("bob", "jira", "create_issue", false); err != nil {
		t.Fatal(err)
	}
	caller := mustResolve(t, e, "m", bob.Token, "")
	ok := []core.Target{toolTarget("github", "get_issue"), toolTarget("jira", "search")}
	if d := e.svc.CheckBatch(&caller, ok); d != nil {
		t.Errorf("allowed batch refused: %+v", d)
	}
	mixed := []core.Target{toolTarget("github", "get_issue"), toolTarget("notion", "create_page"), toolTarget("jira", "create_issue")}
	denied := e.svc.CheckBatch(&caller, mixed)
	b, err := json.Marshal(authz.NewBatchError(denied))
	if err != nil {
		t.Fatal(err)
	}
	link := func(tab, title string) string {
		return fmt.Sprintf("open Airlock → Agents → bob → %s (#/agents/%s?tab=%s)", title, bob.id(), tab)
	}
	want := `{"error":{"message":"2 tool(s) not permitted","denied_tools":[` +
		`{"tool":"notion:create_page","reason":"not_subscribed","message":"Role 'dev' of agent 'bob' has no grant for server 'notion'","hint":"grant server 'notion' to role 'dev', or give agent 'bob' another role: ` + link("role", "Role") + `"},` +
		`{"tool":"jira:create_issue","reason":"user_disabled","message":"Tool 'create_issue' of server 'jira' is switched off for agent 'bob'","hint":"switch it on: ` + link("tools", "Tools") + `"}]}}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("batch refusal (-want +got):\n%s", diff)
	}
	ce := authz.NewBatchError(denied).CoreError()
	if ce.Code != core.EDenied || ce.Message != "2 tool(s) not permitted" || !containsAll(ce.Hint, "notion:create_page: not_subscribed", "jira:create_issue: user_disabled") {
		t.Errorf("core error: %+v", ce)
	}
	// Compact mode and its meta-tools.
	if !e.svc.Compact(&caller) {
		t.Error("bob is in compact mode")
	}
	for _, mt := range []string{"get_module_schema", "call", "batch"} {
		if err := e.svc.Refusal(&caller, own(mt)); err != nil {
			t.Errorf("%s in compact mode: %v", mt, err)
		}
	}
	tools := []core.Target{toolTarget("jira", "create_issue"), toolTarget("jira", "search"), toolTarget("github", "get_issue")}
	got, err := e.svc.ModuleTools(&caller, "jira", tools)
	if err != nil || len(got) != 1 || got[0].Name != "search" {
		t.Errorf("module jira: %v %v", got, err)
	}
	_, err = e.svc.ModuleTools(&caller, "notion", []core.Target{toolTarget("notion", "create_page")})
	if diff := cmp.Diff(&errSummary{"not_subscribed", "no access to module: notion"}, summarize(asCore(err))); diff != "" {
		t.Errorf("module without allowed tools (-want +got):\n%s", diff)
	}
}

func asCore(err error) *core.Error {
	if err == nil {
		return nil
	}
	return err.(*core.Error)
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
