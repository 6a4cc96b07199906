package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pins"
	"github.com/airlock-dev/airlock/backend/store"
)

type dbCommand func(context.Context, *store.DB, []string, io.Writer, io.Writer) error

var (
	agentsCmd dbCommand = func(ctx context.Context, db *store.DB, args []string, stdout, stderr io.Writer) error {
		known := func() []string {
			return append(append([]string(nil), core.ReservedServerIDs...), "github", "everything")
		}
		return RunAgents(ctx, db, known, args, stdout, stderr)
	}
	rolesCmd dbCommand = func(ctx context.Context, db *store.DB, args []string, stdout, stderr io.Writer) error {
		return RunRoles(ctx, db, func() []string { return []string{"airlock", "github", "jira", "notion", "slack"} }, args, stdout, stderr)
	}
)

func runCmd(t *testing.T, run dbCommand, db *store.DB, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), db, args, &out, &errOut)
	return out.String(), err
}

func mustRun(t *testing.T, run dbCommand, db *store.DB, args ...string) string {
	t.Helper()
	out, err := runCmd(t, run, db, args...)
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	return out
}

// TestAgentsDisableToolChecksTheTool: a misspelt server or tool is refused
// (it would switch off nothing), naming what exists; a server that never
// listed its tools takes any name; switching on is always allowed.
func TestAgentsDisableToolChecksTheTool(t *testing.T) {
	db := rulesDB(t)
	if err := store.NewPins(db).Save(pins.Pin{ServerID: "everything", ToolName: "echo", Definition: "{}"}); err != nil {
		t.Fatal(err)
	}
	if err := store.NewPins(db).Save(pins.Pin{ServerID: "everything", ToolName: "add", Definition: "{}"}); err != nil {
		t.Fatal(err)
	}
	mustRun(t, agentsCmd, db, "add", "wrk")
	for _, c := range []struct{ arg, code, says string }{
		{"evrything/echo", core.ENotFound, `no server "evrything" (servers: file-read, file-write, shell-exec, github, everything)`},
		{"everything/ecoh", core.ENotFound, `server "everything" has no tool "ecoh" (its tools: add, echo)`},
		{"shell-exec/shell", core.ENotFound, `server "shell-exec" has no tool "shell" (its tools: shell_exec)`},
		{"airlock/create_task", core.EInvalid, "Airlock's own tools cannot be switched off per agent"},
	} {
		_, err := runCmd(t, agentsCmd, db, "update", "wrk", "--disable-tool", c.arg)
		if core.ErrorCode(err) != c.code || err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("--disable-tool %s: %v, want %s saying %q", c.arg, err, c.code, c.says)
		}
	}
	mustRun(t, agentsCmd, db, "update", "wrk", "--disable-tool", "everything__echo", "--disable-tool", "github/anything",
		"--disable-tool", "shell-exec/shell_exec", "--enable-tool", "gone/old")
	var a authz.Agent
	if err := json.Unmarshal([]byte(mustRun(t, agentsCmd, db, "update", "wrk", "--json")), &a); err != nil {
		t.Fatal(err)
	}
	want := []authz.ToolRef{{Server: "everything", Tool: "echo"}, {Server: "github", Tool: "anything"}, {Server: "shell-exec", Tool: "shell_exec"}}
	if diff := cmp.Diff(want, a.DisabledTools); diff != "" {
		t.Errorf("switched off (-want +got):\n%s", diff)
	}
}

func TestAgentsCLI(t *testing.T) {
	db := rulesDB(t)
	mustRun(t, rolesCmd, db, "add", "dev", "--grant", "github", "--description", "developers")
	out := mustRun(t, agentsCmd, db, "add", "mgr", "--kind", "manager", "--role", "dev")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "id: ag_") || !strings.HasPrefix(lines[1], "token: alk_") || !strings.HasPrefix(lines[2], "passkey: alp_") {
		t.Fatalf("add printed:\n%s", out)
	}
	mgrID := strings.TrimPrefix(lines[0], "id: ")
	token := strings.TrimPrefix(lines[1], "token: ")

	// The printed token is the agent's: a running Airlock (another service
	// on the same database) identifies it.
	svc, err := authz.New(store.NewAgents(db), authz.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := svc.IdentifyToken(token); err != nil || id.AgentID != mgrID || id.AgentName != "mgr" {
		t.Fatalf("identify the printed token: %+v %v", id, err)
	}

	var created authz.CreatedAgent
	if err := json.Unmarshal([]byte(mustRun(t, agentsCmd, db, "add", "wrk", "--parent", "mgr", "--json")), &created); err != nil {
		t.Fatal(err)
	}
	if created.Agent.ParentID != mgrID || created.Agent.Role != authz.RoleDefault || created.Token == "" || created.Passkey == "" {
		t.Errorf("add --json: %+v", created)
	}

	mustRun(t, agentsCmd, db, "update", "wrk", "--role", "dev", "--compact", "--disable-tool", "github/delete_repo") // bare --compact is true
	mustRun(t, agentsCmd, db, "suspend", "mgr")
	var list []authz.Agent
	if err := json.Unmarshal([]byte(mustRun(t, agentsCmd, db, "list", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	type short struct {
		Name, Kind, Status, Role string
		Compact                  bool
		Off                      []authz.ToolRef
	}
	var got []short
	for _, a := range list {
		got = append(got, short{a.Name, a.Kind, a.Status, a.Role, a.Compact, a.DisabledTools})
	}
	want := []short{
		{"owner", "owner", "active", "superuser", false, []authz.ToolRef{}},
		{"default", "manager", "active", "superuser", false, []authz.ToolRef{}},
		{"mgr", "manager", "suspended", "dev", false, []authz.ToolRef{}},
		{"wrk", "worker", "active", "dev", true, []authz.ToolRef{{Server: "github", Tool: "delete_repo"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("list --json (-want +got):\n%s", diff)
	}
	text := mustRun(t, agentsCmd, db, "list")
	for _, s := range []string{"mgr", "suspended", "off: github/delete_repo", "compact"} {
		if !strings.Contains(text, s) {
			t.Errorf("list lacks %q:\n%s", s, text)
		}
	}
	if _, err := svc.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.IdentifyToken(token); core.ErrorCode(err) != authz.ReasonSuspended {
		t.Errorf("token of the suspended agent: %v", err)
	}
	mustRun(t, agentsCmd, db, "resume", "mgr")

	// token: the list shows no secret; --rotate prints a new one, the old stops.
	if out := mustRun(t, agentsCmd, db, "token", "mgr"); strings.Contains(out, token) || !strings.Contains(out, token[:10]) {
		t.Errorf("token list:\n%s", out)
	}
	newTok := strings.TrimSpace(mustRun(t, agentsCmd, db, "token", "mgr", "--rotate"))
	if _, err := svc.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.IdentifyToken(token); core.ErrorCode(err) != core.EUnauthorized {
		t.Errorf("old token after rotate: %v", err)
	}
	if id, err := svc.IdentifyToken(newTok); err != nil || id.AgentID != mgrID {
		t.Errorf("new token: %+v %v", id, err)
	}
	pk := strings.TrimSpace(mustRun(t, agentsCmd, db, "passkey", "wrk"))
	if _, err := svc.Authenticate("wrk", pk, "", ""); err != nil {
		t.Errorf("the new passkey: %v", err)
	}

	// Errors carry codes; nothing is deleted when one name is wrong.
	for _, c := range []struct {
		args []string
		code string
	}{
		{[]string{"rm", "mgr"}, core.EConflict},          // has a child
		{[]string{"rm", "wrk", "ghost"}, core.ENotFound}, // checked before deleting wrk
		{[]string{"update", "mgr", "--parent", "wrk"}, core.EInvalid},
		{[]string{"add", "x", "--kind", "boss"}, core.EInvalid},
		{[]string{"add"}, core.EInvalid},
		{[]string{"update", "wrk", "--compact", "maybe"}, core.EInvalid},
		{[]string{"frobnicate"}, core.EInvalid},
	} {
		if _, err := runCmd(t, agentsCmd, db, c.args...); core.ErrorCode(err) != c.code {
			t.Errorf("agents %s: %v; want code %s", strings.Join(c.args, " "), err, c.code)
		}
	}
	mustRun(t, agentsCmd, db, "rm", "wrk")
	mustRun(t, agentsCmd, db, "rm", "mgr")
	if out := mustRun(t, agentsCmd, db, "list"); strings.Contains(out, "wrk") {
		t.Errorf("after rm:\n%s", out)
	}
	if out := mustRun(t, agentsCmd, db, "-h"); !strings.Contains(out, "usage: airlock agents") {
		t.Errorf("help:\n%s", out)
	}
}

func TestRolesCLI(t *testing.T) {
	db := rulesDB(t)
	mustRun(t, rolesCmd, db, "add", "dev", "--grant", "github", "--grant", "jira")
	mustRun(t, rolesCmd, db, "grant", "dev", "notion")
	mustRun(t, rolesCmd, db, "revoke", "dev", "jira")
	mustRun(t, rolesCmd, db, "revoke", "dev", "github", "--tool", "delete_repo")
	mustRun(t, rolesCmd, db, "grant", "dev", "slack", "--tool", "post")
	// A server nobody configured is granted with a warning (a typo grants
	// nothing; found by a new-user test).
	var out, errOut bytes.Buffer
	if err := rolesCmd(context.Background(), db, []string{"grant", "dev", "githb"}, &out, &errOut); err != nil || !strings.Contains(errOut.String(), `no server named "githb" is configured`) {
		t.Errorf("grant of an unknown server: %v, stderr %q", err, errOut.String())
	}
	mustRun(t, rolesCmd, db, "revoke", "dev", "githb")
	errOut.Reset()
	if err := rolesCmd(context.Background(), db, []string{"grant", "dev", "notion"}, &out, &errOut); err != nil || errOut.Len() != 0 {
		t.Errorf("grant of a known server: %v, stderr %q", err, errOut.String())
	}
	// A tool exception alone (here for a typo'd tool) goes with roles revoke
	// ROLE SERVER: there was no way to remove one (found by a new-user test).
	mustRun(t, rolesCmd, db, "grant", "dev", "jira", "--tool", "nosuchtool")
	mustRun(t, rolesCmd, db, "revoke", "dev", "jira")
	if out := mustRun(t, rolesCmd, db, "list"); strings.Contains(out, "nosuchtool") {
		t.Errorf("the tool exception is still there:\n%s", out)
	}
	// Granting the server again says the withheld tool stays withheld.
	if out := mustRun(t, rolesCmd, db, "grant", "dev", "github"); !strings.Contains(out, "tool github/delete_repo stays withheld; 'airlock roles grant dev github --tool delete_repo' allows it") {
		t.Errorf("grant of a server with a withheld tool printed:\n%s", out)
	}
	mustRun(t, rolesCmd, db, "default", "dev")
	var roles []authz.Role
	if err := json.Unmarshal([]byte(mustRun(t, rolesCmd, db, "list", "--json")), &roles); err != nil {
		t.Fatal(err)
	}
	var dev authz.Role
	for _, r := range roles {
		if r.Name == "dev" {
			dev = r
		}
		if r.Name == authz.RoleDefault && r.IsDefault {
			t.Error("the old default role is still default")
		}
	}
	if diff := cmp.Diff([]string{"github", "notion"}, dev.Servers); diff != "" || !dev.IsDefault {
		t.Errorf("dev servers (-want +got):\n%s (default %v)", diff, dev.IsDefault)
	}
	wantTools := []authz.ToolPermission{{Server: "github", Tool: "delete_repo", Allowed: false}, {Server: "slack", Tool: "post", Allowed: true}}
	if diff := cmp.Diff(wantTools, dev.Tools); diff != "" {
		t.Errorf("dev tools (-want +got):\n%s", diff)
	}
	text := mustRun(t, rolesCmd, db, "list")
	for _, s := range []string{"github,notion", "-github/delete_repo", "+slack/post", "superuser"} {
		if !strings.Contains(text, s) {
			t.Errorf("list lacks %q:\n%s", s, text)
		}
	}
	// A new agent gets the new default role.
	var created authz.CreatedAgent
	if err := json.Unmarshal([]byte(mustRun(t, agentsCmd, db, "add", "bob", "--json")), &created); err != nil {
		t.Fatal(err)
	}
	if created.Agent.Role != "dev" {
		t.Errorf("new agent's role %q", created.Agent.Role)
	}
	for _, c := range []struct {
		args []string
		code string
	}{
		{[]string{"add", "dev"}, core.EConflict},
		{[]string{"grant", "nope", "github"}, core.ENotFound},
		{[]string{"revoke", "dev", "jira"}, core.ENotFound},
		{[]string{"grant", "dev"}, core.EInvalid},
		{[]string{"rm", "dev"}, core.EConflict},
		{[]string{"rm", "superuser"}, core.EConflict},
	} {
		if _, err := runCmd(t, rolesCmd, db, c.args...); core.ErrorCode(err) != c.code {
			t.Errorf("roles %s: %v; want code %s", strings.Join(c.args, " "), err, c.code)
		}
	}
	mustRun(t, rolesCmd, db, "add", "temp")
	mustRun(t, rolesCmd, db, "rm", "temp")
}

// agents rm with several names deletes all or none: one with agents under
// it that are not in the list refuses the whole command (found by a
// regression test: the first was deleted, the second refused); a parent
// listed with its children goes after them.
func TestAgentsRemoveAllOrNone(t *testing.T) {
	db := rulesDB(t)
	mustRun(t, agentsCmd, db, "add", "mgr", "--kind", "manager")
	mustRun(t, agentsCmd, db, "add", "w1", "--parent", "mgr")
	mustRun(t, agentsCmd, db, "add", "w2")
	if _, err := runCmd(t, agentsCmd, db, "rm", "w2", "mgr"); core.ErrorCode(err) != core.EConflict || !strings.Contains(core.ErrorMessage(err), "'w1', not in this list") {
		t.Fatalf("rm w2 mgr: %v, want a conflict naming w1", err)
	}
	if out := mustRun(t, agentsCmd, db, "list"); !strings.Contains(out, "w2") {
		t.Fatalf("w2 was deleted by a refused command:\n%s", out)
	}
	mustRun(t, agentsCmd, db, "add", "w3")
	// A parent before its child, unrelated agents between, a name twice
	// (regression test: w2 was deleted, then mgr refused).
	out := mustRun(t, agentsCmd, db, "rm", "w2", "mgr", "w3", "w1", "w1")
	if !strings.Contains(out, "removed w1") || !strings.Contains(out, "removed mgr") || strings.Index(out, "removed w1") > strings.Index(out, "removed mgr") ||
		strings.Count(out, "removed ") != 4 {
		t.Errorf("rm w2 mgr w3 w1 w1 printed:\n%s", out)
	}
}
