package authz_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
)

func strp(s string) *string { return &s }

// TestManagementBadInput: every refused change says why and changes
// nothing (neither the rows nor the version other processes poll).
func TestManagementBadInput(t *testing.T) {
	tm := newTeam(t)
	agents := store.NewAgents(tm.db)
	cases := []struct {
		name string
		do   func() error
		code string
		msg  string
	}{
		{"cycle through a descendant", func() error {
			_, err := tm.svc.UpdateAgent("mgr", authz.AgentUpdate{Parent: strp("wrk")})
			return err
		}, core.EInvalid, "agent 'mgr' cannot be placed under 'wrk': 'wrk' is below 'mgr', which would make a cycle"},
		// The hierarchy goes owner → coordinators → managers → workers
		// (found by a new-user test: a manager went under a worker).
		{"manager under a worker", func() error {
			_, err := tm.svc.CreateAgent(authz.AgentInput{Name: "m2", Kind: authz.KindManager, Parent: "wrk"})
			return err
		}, core.EInvalid, "'wrk' is a worker, and a worker has no agents under it"},
		{"worker under a worker", func() error {
			_, err := tm.svc.CreateAgent(authz.AgentInput{Name: "w2", Parent: "wrk"})
			return err
		}, core.EInvalid, "'wrk' is a worker, and a worker has no agents under it"},
		{"coordinator under a manager", func() error {
			_, err := tm.svc.CreateAgent(authz.AgentInput{Name: "c2", Kind: authz.KindCoordinator, Parent: "mgr"})
			return err
		}, core.EInvalid, "a coordinator cannot report to a manager ('mgr'): the hierarchy goes owner → coordinators → managers → workers"},
		{"a parent becomes a worker", func() error {
			_, err := tm.svc.UpdateAgent("mgr", authz.AgentUpdate{Kind: strp(authz.KindWorker)})
			return err
		}, core.EInvalid, "'mgr' cannot become a worker: 'wrk' (a worker) reports to it"},
		{"an agent outranks its parent", func() error {
			_, err := tm.svc.UpdateAgent("wrk", authz.AgentUpdate{Kind: strp(authz.KindCoordinator)})
			return err
		}, core.EInvalid, "a coordinator cannot report to a manager ('mgr'): the hierarchy goes owner → coordinators → managers → workers"},
		{"own parent", func() error {
			_, err := tm.svc.UpdateAgent("wrk", authz.AgentUpdate{Parent: strp("wrk")})
			return err
		}, core.EInvalid, "agent 'wrk' cannot be its own parent"},
		{"unknown parent", func() error {
			_, err := tm.svc.UpdateAgent("wrk", authz.AgentUpdate{Parent: strp("ghost")})
			return err
		}, core.EInvalid, `parent agent "ghost" does not exist`},
		{"parent for the owner", func() error {
			_, err := tm.svc.UpdateAgent("owner", authz.AgentUpdate{Parent: strp("mgr")})
			return err
		}, core.EInvalid, "the owner is the top of the hierarchy and has no parent"},
		{"delete with children", func() error { return tm.svc.DeleteAgent("mgr") }, core.EConflict,
			"agent 'mgr' has 1 child agent(s) (wrk); move or delete them first"},
		{"delete the owner", func() error { return tm.svc.DeleteAgent("owner") }, core.EInvalid, "the owner cannot be deleted"},
		// The owner is the person at the UI (found by a new-user test).
		{"role for the owner", func() error {
			_, err := tm.svc.UpdateAgent("owner", authz.AgentUpdate{Role: strp(authz.RoleDefault)})
			return err
		}, core.EInvalid, "the owner's role cannot change: it is you, acting through the UI and the CLI"},
		{"delete unknown", func() error { return tm.svc.DeleteAgent("ghost") }, core.ENotFound, "Agent not found: ghost"},
		{"second owner", func() error {
			_, err := tm.svc.CreateAgent(authz.AgentInput{Name: "boss", Kind: authz.KindOwner})
			return err
		}, core.EInvalid, "there is only one owner; choose kind coordinator, manager or worker"},
		{"owner kind change", func() error {
			_, err := tm.svc.UpdateAgent("owner", authz.AgentUpdate{Kind: strp(authz.KindWorker)})
			return err
		}, core.EInvalid, "the owner's kind cannot change, and there is only one owner"},
		{"unknown kind", func() error {
			_, err := tm.svc.CreateAgent(authz.AgentInput{Name: "x", Kind: "boss"})
			return err
		}, core.EInvalid, `unknown agent kind "boss" (want owner, coordinator, manager, worker)`},
		{"taken name", func() error {
			_, err := tm.svc.CreateAgent(authz.AgentInput{Name: "wrk"})
			return err
		}, core.EConflict, `an agent named "wrk" exists already`},
		{"rename onto a taken name", func() error {
			_, err := tm.svc.UpdateAgent("wrk", authz.AgentUpdate{Name: strp("mgr")})
			return err
		}, core.EConflict, `an agent named "mgr" exists already`},
		{"bad name", func() error {
			_, err := tm.svc.CreateAgent(authz.AgentInput{Name: "two words"})
			return err
		}, core.EInvalid, `agent name "two words" must be 1-64 ASCII letters (a-z, A-Z), digits, '.', '_' or '-', starting with a letter or digit`},
		{"id-shaped name", func() error {
			_, err := tm.svc.CreateAgent(authz.AgentInput{Name: "ag_123"})
			return err
		}, core.EInvalid, `agent name "ag_123" must not start with "ag_" (that is how ids start)`},
		{"unknown role", func() error {
			_, err := tm.svc.CreateAgent(authz.AgentInput{Name: "x", Role: "nope"})
			return err
		}, core.EInvalid, `role "nope" does not exist`},
		{"unknown project", func() error {
			_, err := tm.svc.CreateAgent(authz.AgentInput{Name: "x", Projects: []string{"nope"}})
			return err
		}, core.EInvalid, `project "nope" does not exist`},
		{"bad status", func() error { _, err := tm.svc.SetStatus("wrk", "asleep"); return err }, core.EInvalid,
			`unknown agent status "asleep" (want active, suspended, disabled)`},
		{"assign unknown project", func() error { _, err := tm.svc.Assign("wrk", "nope"); return err }, core.EInvalid, `project "nope" does not exist`},
		{"delete default role", func() error { return tm.svc.DeleteRole(authz.RoleDefault) }, core.EConflict,
			"role default is the default role; make another role the default first"},
		{"delete role in use", func() error { return tm.svc.DeleteRole(authz.RoleSuperuser) }, core.EConflict, "role superuser is the role of 2 agent(s)"},
		{"revoke what was never granted", func() error { _, err := tm.svc.RevokeServer(authz.RoleDefault, "github"); return err }, core.ENotFound,
			"role default has no grant for server github"},
		{"grant on unknown role", func() error { _, err := tm.svc.GrantServer("nope", "github"); return err }, core.ENotFound, "Role not found: nope"},
		{"empty server", func() error { _, err := tm.svc.GrantServer(authz.RoleDefault, ""); return err }, core.EInvalid,
			`server "" must be 1-256 characters on one line`},
		{"taken project name", func() error { _, err := tm.svc.CreateProject("alpha", ""); return err }, core.EConflict, `a project named "alpha" exists already`},
		{"project name far too long", func() error { _, err := tm.svc.CreateProject(strings.Repeat("a", 300), ""); return err }, core.EInvalid,
			`project name "` + strings.Repeat("a", 32) + `…" (300 characters) must be 1-64 ASCII letters (a-z, A-Z), digits, '.', '_' or '-', starting with a letter or digit`},
		{"taken role name", func() error { _, err := tm.svc.CreateRole(authz.RoleInput{Name: "default"}); return err }, core.EConflict,
			`a role named "default" exists already`},
	}
	beforeAgents, _ := tm.svc.Agents()
	beforeRoles, _ := tm.svc.Roles()
	beforeProjects, _ := tm.svc.Projects()
	beforeVersion, _ := agents.AgentsVersion()
	var heard [][]string
	tm.svc.OnChange(func(ids []string) { heard = append(heard, ids) })
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.do()
			if diff := cmp.Diff(&errSummary{c.code, c.msg}, summarize(asCore(err))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	afterAgents, _ := tm.svc.Agents()
	afterRoles, _ := tm.svc.Roles()
	afterProjects, _ := tm.svc.Projects()
	afterVersion, _ := agents.AgentsVersion()
	if diff := cmp.Diff(beforeAgents, afterAgents); diff != "" {
		t.Errorf("agents changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(beforeRoles, afterRoles); diff != "" {
		t.Errorf("roles changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(beforeProjects, afterProjects); diff != "" {
		t.Errorf("projects changed (-before +after):\n%s", diff)
	}
	if beforeVersion != afterVersion || heard != nil {
		t.Errorf("version %d → %d, OnChange heard %v", beforeVersion, afterVersion, heard)
	}
}

func TestManagementHappyPath(t *testing.T) {
	tm := newTeam(t)
	// New agents: default role, parent the owner, a token and a passkey.
	c, err := tm.svc.CreateAgent(authz.AgentInput{Name: "solo", Human: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Agent.Role != authz.RoleDefault || c.Agent.ParentID != authz.OwnerID || c.Agent.Kind != authz.KindWorker || !c.Agent.Human {
		t.Errorf("new agent %+v", c.Agent)
	}
	if id, err := tm.svc.IdentifyToken(c.Token); err != nil || id.AgentID != c.Agent.ID {
		t.Errorf("its token: %+v %v", id, err)
	}
	if _, err := tm.svc.Authenticate(c.Agent.ID, c.Passkey, "", ""); err != nil {
		t.Errorf("its passkey: %v", err)
	}
	// Another role as default: the next agent gets it.
	if _, err := tm.svc.CreateRole(authz.RoleInput{Name: "trial", Servers: []string{"everything"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tm.svc.SetDefaultRole("trial"); err != nil {
		t.Fatal(err)
	}
	c2, err := tm.svc.CreateAgent(authz.AgentInput{Name: "newbie"})
	if err != nil {
		t.Fatal(err)
	}
	if c2.Agent.Role != "trial" {
		t.Errorf("role of a new agent %q; want the new default", c2.Agent.Role)
	}
	roles, _ := tm.svc.Roles()
	defaults := 0
	for _, r := range roles {
		if r.IsDefault {
			defaults++
		}
	}
	if defaults != 1 {
		t.Errorf("%d default roles", defaults)
	}
	// Moving a subtree: wrk under the owner as a manager, then mgr under
	// wrk is fine.
	if _, err := tm.svc.UpdateAgent("wrk", authz.AgentUpdate{Parent: strp("owner"), Kind: strp(authz.KindManager)}); err != nil {
		t.Fatal(err)
	}
	if _, err := tm.svc.UpdateAgent("mgr", authz.AgentUpdate{Parent: strp("wrk")}); err != nil {
		t.Errorf("mgr under wrk once wrk left mgr: %v", err)
	}
	// A session opened for the project works there while the agent is
	// assigned, and no more once it is not (found in a security review:
	// it kept working there).
	inAlpha, err := tm.svc.Authenticate("wrk", tm.wrk.Passkey, "alpha", "")
	if err != nil {
		t.Fatal(err)
	}
	bound, err := tm.svc.Authenticate("wrk", tm.wrk.Passkey, "alpha", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tm.svc.Resolve("m-left", authz.Identity{}, ""); err != nil {
		t.Fatal(err)
	}
	if err := tm.svc.Bind("m-left", bound.Record.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := tm.svc.Resolve("", authz.Identity{}, inAlpha.Token); err != nil {
		t.Errorf("a session in its project: %v", err)
	}
	// Unassigning ends nothing but the assignment.
	if a, err := tm.svc.Unassign("wrk", "alpha"); err != nil || len(a.Projects) != 0 {
		t.Errorf("unassign: %+v %v", a, err)
	}
	// Leaving the project ended the session, as logout does (found by a
	// new-user test: a bound session could not even log out).
	if _, err := tm.svc.Resolve("", authz.Identity{}, inAlpha.Token); core.ErrorCode(err) != core.EUnauthorized {
		t.Errorf("a session in a project the agent left: %v, want it ended (%s)", err, core.EUnauthorized)
	}
	// The connection it was bound to falls back to what it carries (here
	// nothing): help, logout and authenticate work there again.
	if c, err := tm.svc.Resolve("m-left", authz.Identity{}, ""); err != nil || c.Authenticated() {
		t.Errorf("the connection of an ended session: %+v %v, want unauthenticated and no error", c, err)
	}
	if _, err := tm.svc.Authenticate("wrk", tm.wrk.Passkey, "alpha", ""); core.ErrorCode(err) != authz.EAgentNotAssigned {
		t.Errorf("authenticate into a project after unassign: %v", err)
	}
	// Deleting an agent ends its sessions and token.
	sess, err := tm.svc.Authenticate("solo", c.Passkey, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := tm.svc.DeleteAgent("solo"); err != nil {
		t.Fatal(err)
	}
	if _, err := tm.svc.IdentifyToken(c.Token); core.ErrorCode(err) != core.EUnauthorized {
		t.Errorf("token of a deleted agent: %v", err)
	}
	if _, err := tm.svc.IdentifyToken(sess.Token); core.ErrorCode(err) != core.EUnauthorized {
		t.Errorf("session of a deleted agent: %v", err)
	}
	if err := tm.svc.DeleteRole("trial"); core.ErrorCode(err) != core.EConflict {
		t.Errorf("deleting the default role: %v", err)
	}
}

// A new passkey ends the sessions opened with the old one, here and in
// another process (the CLI rotates it while Airlock runs): a passkey is
// rotated because it leaked, and those sessions' tokens would otherwise
// work on for a day (found by a new-user test).
func TestRotatedPasskeyEndsItsSessions(t *testing.T) {
	e := newEnv(t, realClock)
	w := e.agent(t, authz.AgentInput{Name: "bob", Role: authz.RoleSuperuser})
	here, err := e.svc.Authenticate("bob", w.Passkey, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Resolve("m1", authz.Identity{}, here.Token); err != nil {
		t.Fatalf("the session before the rotation: %v", err)
	}
	passkey, err := e.svc.RotatePasskey("bob")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Resolve("m2", authz.Identity{}, here.Token); err == nil {
		t.Error("a session opened with the old passkey still works after the rotation")
	}
	// Rotated from another process: the running one reads it at its
	// next reload.
	again, err := e.svc.Authenticate("bob", passkey, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Resolve("m3", authz.Identity{}, again.Token); err != nil {
		t.Fatalf("the new session: %v", err)
	}
	if _, err := newServiceOn(t, e).RotatePasskey("bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Resolve("m4", authz.Identity{}, again.Token); err == nil {
		t.Error("a session still works after another process rotated the passkey")
	}
}
