package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
)

// TestMigrate0006Upgrade upgrades a database made by 0004 (the schema before
// agents existed) that holds rules and audit records: they stay, and the
// agents tables appear with the owner, the agent "default" and the two
// roles.
func TestMigrate0006Upgrade(t *testing.T) {
	gdb, path := migratedTo(t, "0004_client")
	if gdb.Migrator().HasTable("agents") {
		t.Fatal("0004 already has agents")
	}
	old := &store.DB{DB: gdb, Path: path}
	now := time.Now().UTC()
	// A rule written with the 0004 schema's columns (not the live
	// repository's, which may know later columns).
	if err := gdb.Exec("INSERT INTO tool_permission_rules (id, auto_approve, priority, conditions, created_at, updated_at) VALUES (?,?,?,?,?,?)",
		"r1", 1, 0, "[]", now, now).Error; err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(gdb); err != nil {
		t.Fatalf("migrate to newest: %v", err)
	}
	rules, err := store.NewRules(old).ListRules()
	kept := false
	for _, r := range rules {
		kept = kept || (r.ID == "r1" && r.AutoApprove)
	}
	if err != nil || !kept {
		t.Errorf("rule r1 lost in the upgrade: %+v, %v", rules, err)
	}
	ag := store.NewAgents(old)
	agents, err := ag.ListAgents()
	if err != nil {
		t.Fatal(err)
	}
	type short struct{ ID, Name, Kind, Parent, Status, Role string }
	var got []short
	for _, a := range agents {
		got = append(got, short{a.ID, a.Name, a.Kind, a.ParentID, a.Status, a.Role})
	}
	want := []short{
		{authz.OwnerID, "owner", authz.KindOwner, "", authz.StatusActive, authz.RoleSuperuser},
		{authz.DefaultAgentID, "default", authz.KindManager, authz.OwnerID, authz.StatusActive, authz.RoleSuperuser},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("agents after upgrade (-want +got):\n%s", diff)
	}
	roles, err := ag.ListRoles()
	if err != nil {
		t.Fatal(err)
	}
	type roleShort struct {
		Name               string
		Default, Superuser bool
	}
	var gotRoles []roleShort
	for _, r := range roles {
		gotRoles = append(gotRoles, roleShort{r.Name, r.IsDefault, r.IsSuperuser})
	}
	if diff := cmp.Diff([]roleShort{{"default", true, false}, {"superuser", false, true}}, gotRoles); diff != "" {
		t.Errorf("roles after upgrade (-want +got):\n%s", diff)
	}
}

func TestAgentsStoreConstraints(t *testing.T) {
	db := mustOpen(t)
	ag := store.NewAgents(db)
	now := time.Now().UTC().Truncate(time.Microsecond)
	a := authz.Agent{ID: "ag_1", Name: "w1", Kind: authz.KindWorker, ParentID: authz.OwnerID, Status: authz.StatusActive,
		Role: authz.RoleDefault, Projects: []string{}, DisabledTools: []authz.ToolRef{}, CreatedAt: now, UpdatedAt: now}
	if err := ag.CreateAgent(a, [32]byte{1}, nil); err != nil {
		t.Fatal(err)
	}
	v1, _ := ag.AgentsVersion()

	cases := []struct {
		name string
		do   func() error
		code string
	}{
		{"duplicate name", func() error {
			b := a
			b.ID = "ag_2"
			return ag.CreateAgent(b, [32]byte{}, nil)
		}, core.EConflict},
		{"bad kind", func() error {
			b := a
			b.ID, b.Name, b.Kind = "ag_3", "w3", "boss"
			return ag.CreateAgent(b, [32]byte{}, nil)
		}, core.EInternal},
		{"unknown role", func() error {
			b := a
			b.ID, b.Name, b.Role = "ag_4", "w4", "nope"
			return ag.CreateAgent(b, [32]byte{}, nil)
		}, core.EConflict},
		{"unknown parent", func() error {
			b := a
			b.ID, b.Name, b.ParentID = "ag_5", "w5", "ag_missing"
			return ag.CreateAgent(b, [32]byte{}, nil)
		}, core.EConflict},
		{"delete parent with child", func() error { return ag.DeleteAgent(authz.OwnerID) }, core.EConflict},
		{"delete role in use", func() error { return ag.DeleteRole(authz.RoleDefault) }, core.EConflict},
		{"unknown project", func() error {
			b := a
			b.Projects = []string{"pj_missing"}
			return ag.UpdateAgent(b)
		}, core.EConflict},
		// The hierarchy holds in the database too, against another
		// process's change between the service's check and the write (a
		// regression test: two processes made a worker under a worker).
		{"under a worker", func() error {
			b := a
			b.ID, b.Name, b.ParentID = "ag_6", "w6", "ag_1"
			return ag.CreateAgent(b, [32]byte{}, nil)
		}, core.EInvalid},
		{"its own parent", func() error {
			b := a
			b.Kind, b.ParentID = authz.KindManager, "ag_1"
			return ag.UpdateAgent(b)
		}, core.EInvalid},
		{"a parent becomes a worker", func() error {
			o, err := ag.GetAgent(authz.OwnerID)
			if err != nil {
				return err
			}
			o.Kind = authz.KindWorker
			return ag.UpdateAgent(o)
		}, core.EInvalid},
		{"second default role", func() error {
			return db.Exec("UPDATE roles SET is_default = 1").Error
		}, core.EInternal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.do()
			if err == nil {
				t.Fatalf("no error; want %s", c.code)
			}
			if got := core.ErrorCode(err); got != c.code {
				t.Errorf("code %q (%v); want %q", got, err, c.code)
			}
		})
	}
	if v2, _ := ag.AgentsVersion(); v2 != v1 {
		t.Errorf("failed changes bumped the version from %d to %d", v1, v2)
	}
	got, err := ag.GetAgent("ag_1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, got); diff != "" {
		t.Errorf("agent changed by failed writes (-want +got):\n%s", diff)
	}
}

func TestAgentsStoreRoundTrip(t *testing.T) {
	db := mustOpen(t)
	ag := store.NewAgents(db)
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	if err := ag.CreateProject(authz.Project{ID: "pj_1", Name: "alpha", CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	a := authz.Agent{ID: "ag_1", Name: "w1", Kind: authz.KindWorker, Human: true, ParentID: authz.DefaultAgentID,
		Status: authz.StatusSuspended, Role: authz.RoleDefault, Compact: true, Projects: []string{"pj_1"},
		DisabledTools: []authz.ToolRef{{Server: "gh", Tool: "delete_repo"}}, CreatedAt: now, UpdatedAt: now}
	tok := authz.TokenRecord{ID: "tk_1", AgentID: "ag_1", Hash: authz.HashSecret("alk_x"), Prefix: "alk_x", CreatedAt: now}
	if err := ag.CreateAgent(a, authz.HashSecret("alp_y"), &tok); err != nil {
		t.Fatal(err)
	}
	got, err := ag.GetAgent("ag_1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, got); diff != "" {
		t.Errorf("agent (-want +got):\n%s", diff)
	}
	if h, err := ag.PasskeyHash("ag_1"); err != nil || h != authz.HashSecret("alp_y") {
		t.Errorf("passkey hash %x, %v", h, err)
	}
	toks, err := ag.ListTokens()
	if err != nil || len(toks) != 1 || toks[0] != tok {
		t.Errorf("tokens %+v, %v; want [%+v]", toks, err, tok)
	}

	r := authz.Role{Name: "dev", Servers: []string{"gh"}, Tools: []authz.ToolPermission{{Server: "gh", Tool: "delete_repo", Allowed: false}},
		IsDefault: true, CreatedAt: now, UpdatedAt: now}
	if err := ag.CreateRole(r); err != nil {
		t.Fatal(err)
	}
	gotRole, err := ag.GetRole("dev")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, gotRole); diff != "" {
		t.Errorf("role (-want +got):\n%s", diff)
	}
	if old, _ := ag.GetRole(authz.RoleDefault); old.IsDefault {
		t.Error("creating a default role left the old default marked")
	}

	sess := authz.SessionRecord{ID: "ses_1", Hash: authz.HashSecret("als_z"), AgentID: "ag_1", ProjectID: "pj_1", Purpose: "chat",
		CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := ag.CreateSession(sess); err != nil {
		t.Fatal(err)
	}
	if got, err := ag.SessionByHash(sess.Hash); err != nil || !cmp.Equal(sess, got) {
		t.Errorf("session by hash %+v, %v", got, err)
	}
	if err := ag.RevokeSession("ses_1", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got, _ := ag.SessionByID("ses_1"); got.RevokedAt == nil || !got.RevokedAt.Equal(now.Add(time.Minute)) {
		t.Errorf("revoked at %v", got.RevokedAt)
	}
	if n, err := ag.PurgeSessions(now.Add(2 * time.Minute)); err != nil || n != 1 {
		t.Errorf("purge: %d, %v", n, err)
	}
	// Deleting the agent takes its token with it.
	if err := ag.DeleteAgent("ag_1"); err != nil {
		t.Fatal(err)
	}
	if toks, _ := ag.ListTokens(); len(toks) != 0 {
		t.Errorf("tokens after delete: %+v", toks)
	}
}

// A cycle is refused in the database too (two processes each moved one
// agent under the other; found by a regression test).
func TestAgentsStoreRefusesCycle(t *testing.T) {
	db := mustOpen(t)
	ag := store.NewAgents(db)
	now := time.Now().UTC().Truncate(time.Microsecond)
	mk := func(id, parent string) authz.Agent {
		a := authz.Agent{ID: id, Name: id, Kind: authz.KindManager, ParentID: parent, Status: authz.StatusActive,
			Role: authz.RoleDefault, Projects: []string{}, DisabledTools: []authz.ToolRef{}, CreatedAt: now, UpdatedAt: now}
		if err := ag.CreateAgent(a, [32]byte{}, nil); err != nil {
			t.Fatal(err)
		}
		return a
	}
	m1 := mk("m1", authz.OwnerID)
	mk("m2", "m1")
	m1.ParentID = "m2"
	if err := ag.UpdateAgent(m1); core.ErrorCode(err) != core.EInvalid || !strings.Contains(core.ErrorMessage(err), "cycle") {
		t.Fatalf("m1 under m2, which is under m1: %v, want a refusal naming the cycle", err)
	}
	if got, _ := ag.GetAgent("m1"); got.ParentID != authz.OwnerID {
		t.Errorf("m1's parent after the refusal = %q", got.ParentID)
	}
}
