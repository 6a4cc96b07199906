package authz_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
)

// team is a project with a manager and a worker assigned to it.
type team struct {
	*env
	project  authz.Project
	mgr, wrk member
}

func newTeam(t *testing.T, tune ...func(*authz.Options)) *team {
	e := newEnv(t, tune...)
	p := e.project(t, "alpha")
	mgr := e.agent(t, authz.AgentInput{Name: "mgr", Kind: authz.KindManager, Projects: []string{"alpha"}})
	wrk := e.agent(t, authz.AgentInput{Name: "wrk", Kind: authz.KindWorker, Parent: "mgr", Projects: []string{p.ID}})
	return &team{env: e, project: p, mgr: mgr, wrk: wrk}
}

func TestAuthenticateAndResolve(t *testing.T) {
	tm := newTeam(t)
	sess, err := tm.svc.Authenticate("wrk", tm.wrk.Passkey, "alpha", core.PurposeChat)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sess.Token, authz.SessionPrefix) || sess.Record.Purpose != core.PurposeChat || sess.Record.ProjectID != tm.project.ID {
		t.Errorf("session %+v", sess)
	}
	if got := sess.Record.ExpiresAt.Sub(tm.clock.Now()); got != authz.DefaultSessionTTL {
		t.Errorf("session lives %v; want %v", got, authz.DefaultSessionTTL)
	}
	tm.svc.SessionClient("m1", core.ClientInfo{Name: "claude-code", Version: "2.1"})
	// Bound by authenticate on the MCP session: every field is filled.
	if err := tm.svc.Bind("m1", sess.Record.ID); err != nil {
		t.Fatal(err)
	}
	got, err := tm.svc.Resolve("m1", authz.Identity{}, "")
	if err != nil {
		t.Fatal(err)
	}
	want := core.Caller{AgentID: tm.wrk.id(), AgentName: "wrk", Kind: authz.KindWorker, Role: authz.RoleDefault, Session: "m1",
		AuthSession: sess.Record.ID, Purpose: core.PurposeChat, ProjectID: tm.project.ID, Client: core.ClientInfo{Name: "claude-code", Version: "2.1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bound caller (-want +got):\n%s", diff)
	}
	// The session token as an argument, on another MCP session.
	got, err = tm.svc.Resolve("m2", authz.Identity{}, sess.Token)
	if err != nil || got.AuthSession != sess.Record.ID || got.Purpose != core.PurposeChat {
		t.Errorf("session_token argument: %+v %v", got, err)
	}
	// The session token as Bearer on a connection.
	id, err := tm.svc.IdentifyToken(sess.Token)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(authz.Identity{AgentID: tm.wrk.id(), AgentName: "wrk", Via: authz.ViaSessionToken, AuthSession: sess.Record.ID,
		Purpose: core.PurposeChat, ProjectID: tm.project.ID}, id); diff != "" {
		t.Errorf("identity of a session token (-want +got):\n%s", diff)
	}
	got, err = tm.svc.Resolve("m3", id, "")
	if err != nil || got.AuthSession != sess.Record.ID {
		t.Errorf("session token on the connection: %+v %v", got, err)
	}
	// The connection's URL cannot change a session's purpose.
	id.Purpose = core.PurposeTask
	if _, err := tm.svc.Resolve("m3b", id, ""); core.ErrorCode(err) != core.EInvalid {
		t.Errorf("purpose override of a session: %v", err)
	}
	// The binding wins over a session_token argument and the connection.
	mgrConn, err := tm.svc.IdentifyToken(tm.mgr.Token)
	if err != nil {
		t.Fatal(err)
	}
	mgrSess, err := tm.svc.Authenticate(tm.mgr.id(), tm.mgr.Passkey, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tm.svc.Resolve("m4", mgrConn, ""); err != nil || got.AgentID != tm.mgr.id() || got.Purpose != core.PurposeTask || got.AuthSession != "" {
		t.Errorf("agent token connection: %+v %v", got, err)
	}
	if got, err := tm.svc.Resolve("m4", mgrConn, mgrSess.Token); err != nil || got.AuthSession != mgrSess.Record.ID {
		t.Errorf("session_token over the connection: %+v %v", got, err)
	}
	if err := tm.svc.Bind("m4", sess.Record.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := tm.svc.Resolve("m4", mgrConn, mgrSess.Token); err != nil || got.AuthSession != sess.Record.ID {
		t.Errorf("binding over everything: %+v %v", got, err)
	}
	tm.svc.Unbind("m4")
	if got, _ := tm.svc.Resolve("m4", mgrConn, ""); got.AgentID != tm.mgr.id() {
		t.Errorf("after unbind: %+v", got)
	}
	// Nothing at all: unauthenticated, the MCP session still named.
	if got, err := tm.svc.Resolve("m5", authz.Identity{}, ""); err != nil || !cmp.Equal(core.Caller{Session: "m5"}, got) {
		t.Errorf("unauthenticated: %+v %v", got, err)
	}
}

func TestConnectionPurposeAndProject(t *testing.T) {
	tm := newTeam(t)
	base, err := tm.svc.IdentifyToken(tm.wrk.Token)
	if err != nil {
		t.Fatal(err)
	}
	other := tm.env.project(t, "beta")
	cases := []struct {
		name, purpose, project string
		wantPurpose, wantProj  string
		code                   string
	}{
		{"default", "", "", core.PurposeTask, "", ""},
		{"chat", core.PurposeChat, "", core.PurposeChat, "", ""},
		{"project by name", "", "alpha", core.PurposeTask, tm.project.ID, ""},
		{"project by id", core.PurposeChat, tm.project.ID, core.PurposeChat, tm.project.ID, ""},
		{"invalid purpose", "play", "", "", "", core.EInvalid},
		{"unknown project", "", "nope", "", "", authz.EProjectNotFound},
		{"not assigned", "", other.Name, "", "", authz.EAgentNotAssigned},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := base
			id.Purpose, id.ProjectID = c.purpose, c.project
			got, err := tm.svc.Resolve("m-"+c.name, id, "")
			if core.ErrorCode(err) != c.code {
				t.Fatalf("error %v; want code %q", err, c.code)
			}
			if c.code == "" && (got.Purpose != c.wantPurpose || got.ProjectID != c.wantProj) {
				t.Errorf("purpose %q project %q; want %q %q", got.Purpose, got.ProjectID, c.wantPurpose, c.wantProj)
			}
		})
	}
	_, err = tm.svc.Resolve("m-na", authz.Identity{AgentID: tm.wrk.id(), Via: authz.ViaAgentToken, ProjectID: "beta"}, "")
	if want := "Agent '" + tm.wrk.id() + "' is not assigned to project 'beta'. Assign the agent to the project first."; core.ErrorMessage(err) != want {
		t.Errorf("message %q; want %q", core.ErrorMessage(err), want)
	}
}

// TestSessionOwnership: an MCP session belongs to whoever opened it.
func TestSessionOwnership(t *testing.T) {
	tm := newTeam(t)
	wrk, _ := tm.svc.IdentifyToken(tm.wrk.Token)
	mgr, _ := tm.svc.IdentifyToken(tm.mgr.Token)
	if _, err := tm.svc.Resolve("s1", wrk, ""); err != nil {
		t.Fatal(err)
	}
	for name, id := range map[string]authz.Identity{"another agent's token": mgr, "no token": {}} {
		got, err := tm.svc.Resolve("s1", id, "")
		if core.ErrorCode(err) != core.EForbidden {
			t.Errorf("%s on wrk's session: %+v %v", name, got, err)
		}
		if got.Session != "s1" || got.AgentID != id.AgentID {
			t.Errorf("%s: the refused caller %+v should name who tried", name, got)
		}
	}
	// Opened without credentials: a token later is another identity too.
	if _, err := tm.svc.Resolve("s2", authz.Identity{}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := tm.svc.Resolve("s2", mgr, ""); core.ErrorCode(err) != core.EForbidden {
		t.Errorf("token on an anonymous session: %v", err)
	}
	// The owner keeps working; after the session ended, the id is free.
	if _, err := tm.svc.Resolve("s1", wrk, ""); err != nil {
		t.Errorf("owner: %v", err)
	}
	tm.svc.SessionEnded("s1")
	if _, err := tm.svc.Resolve("s1", mgr, ""); err != nil {
		t.Errorf("a new session with an old id: %v", err)
	}
	if got := tm.svc.MCPSessions([]string{tm.mgr.id()}); !cmp.Equal([]string{"s1"}, got) {
		t.Errorf("MCP sessions of mgr: %v", got)
	}
}

func TestLogoutEndsOnlyThatSession(t *testing.T) {
	tm := newTeam(t)
	a, err := tm.svc.Authenticate("wrk", tm.wrk.Passkey, "", "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := tm.svc.Authenticate("wrk", tm.wrk.Passkey, "", core.PurposeChat)
	if err != nil {
		t.Fatal(err)
	}
	if err := tm.svc.Bind("m1", a.Record.ID); err != nil {
		t.Fatal(err)
	}
	caller, err := tm.svc.Resolve("m1", authz.Identity{}, "")
	if err != nil {
		t.Fatal(err)
	}
	// Bound to a second MCP session too: ended from m1, it is told on m2's
	// next request (found by a regression test: m2 went on as its
	// connection's own agent without a word).
	if err := tm.svc.Bind("m2", a.Record.ID); err != nil {
		t.Fatal(err)
	}
	if err := tm.svc.Logout(a.Record.ID, "m1"); err != nil {
		t.Fatal(err)
	}
	if _, err := tm.svc.Resolve("m2", authz.Identity{}, ""); core.ErrorCode(err) != core.EUnauthorized {
		t.Errorf("m2's next request after the logout from m1: %v, want it told", err)
	}
	if got, err := tm.svc.Resolve("m2", authz.Identity{}, ""); err != nil || got.Authenticated() {
		t.Errorf("m2 after it was told: %+v %v (want unbound, unauthenticated)", got, err)
	}
	if _, err := tm.svc.IdentifyToken(a.Token); core.ErrorCode(err) != core.EUnauthorized {
		t.Errorf("the ended session's token: %v", err)
	}
	if err := tm.svc.Refusal(&caller, own("help")); err == nil || err.Code != core.EUnauthorized {
		t.Errorf("a caller resolved before logout: %v", err)
	}
	if got, err := tm.svc.Resolve("m1", authz.Identity{}, ""); err != nil || got.Authenticated() {
		t.Errorf("the MCP session after logout: %+v %v (want unbound, unauthenticated)", got, err)
	}
	if _, err := tm.svc.IdentifyToken(b.Token); err != nil {
		t.Errorf("the other session: %v", err)
	}
	if _, err := tm.svc.IdentifyToken(tm.wrk.Token); err != nil {
		t.Errorf("the agent token: %v", err)
	}
	if err := tm.svc.Logout(a.Record.ID, ""); err != nil {
		t.Errorf("logging out twice: %v", err)
	}
	if err := tm.svc.Logout("ses_nope", ""); core.ErrorCode(err) != core.ENotFound {
		t.Errorf("logout of an unknown session: %v", err)
	}
	// The revocation is in the store: a fresh process refuses the token too.
	fresh := newServiceOn(t, tm.env)
	if _, err := fresh.IdentifyToken(a.Token); core.ErrorCode(err) != core.EUnauthorized {
		t.Errorf("another process: %v", err)
	}
}

// TestBadCredentials: every bad input is refused with its own code and
// message and changes nothing.
func TestBadCredentials(t *testing.T) {
	tm := newTeam(t)
	beta := tm.env.project(t, "beta")
	_ = beta
	before, _ := tm.svc.Agents()
	cases := []struct {
		name                             string
		agent, passkey, project, purpose string
		code, msg                        string
	}{
		// As a wrong passkey: authenticate does not tell who exists.
		{"unknown agent", "ghost", "alp_x", "", "", core.EUnauthorized, "Invalid agent_id or passkey"},
		{"wrong passkey", "wrk", tm.mgr.Passkey, "", "", core.EUnauthorized, "Invalid agent_id or passkey"},
		{"empty passkey", "wrk", "", "", "", core.EUnauthorized, "Invalid agent_id or passkey"},
		{"owner without passkey", "owner", "", "", "", core.EUnauthorized, "Invalid agent_id or passkey"},
		{"unknown project", "wrk", tm.wrk.Passkey, "nope", "", authz.EProjectNotFound, "Project not found: nope"},
		{"not assigned", "wrk", tm.wrk.Passkey, "beta", "", authz.EAgentNotAssigned,
			"Agent '" + tm.wrk.id() + "' is not assigned to project '" + beta.ID + "'. Assign the agent to the project first."},
		{"invalid purpose", "wrk", tm.wrk.Passkey, "", "play", core.EInvalid, "Invalid purpose: play. Valid values: task, chat"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := tm.svc.Authenticate(c.agent, c.passkey, c.project, c.purpose)
			if diff := cmp.Diff(&errSummary{c.code, c.msg}, summarize(asCore(err))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := tm.svc.Suspend("wrk"); err != nil {
		t.Fatal(err)
	}
	_, err := tm.svc.Authenticate("wrk", tm.wrk.Passkey, "", "")
	if diff := cmp.Diff(&errSummary{authz.ReasonSuspended, "account is suspended"}, summarize(asCore(err))); diff != "" {
		t.Errorf("suspended (-want +got):\n%s", diff)
	}
	if _, err := tm.svc.Resume("wrk"); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := tm.db.Raw("SELECT COUNT(*) FROM agent_sessions").Scan(&n).Error; err != nil || n != 0 {
		t.Errorf("%d sessions after only failures (%v)", n, err)
	}
	after, _ := tm.svc.Agents()
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("agents changed by failed logins (-before +after):\n%s", diff)
	}

	// Tokens: forged, malformed, expired.
	forgedAgent := authz.TokenPrefix + strings.Repeat("A", 43)
	forgedSession := authz.SessionPrefix + strings.Repeat("A", 43)
	for _, tok := range []string{forgedAgent, forgedSession, "alk_short", "als_short", "Bearer x", "", tm.wrk.Passkey} {
		if id, err := tm.svc.IdentifyToken(tok); core.ErrorCode(err) != core.EUnauthorized || id.AgentID != "" {
			t.Errorf("token %q: %+v %v", tok, id, err)
		}
		if _, err := tm.svc.Resolve("x", authz.Identity{}, tok); tok != "" && core.ErrorCode(err) != core.EUnauthorized {
			t.Errorf("session_token %q: %v", tok, err)
		}
	}
	sess, err := tm.svc.Authenticate("wrk", tm.wrk.Passkey, "", "")
	if err != nil {
		t.Fatal(err)
	}
	tm.clock.Advance(authz.DefaultSessionTTL)
	_, err = tm.svc.IdentifyToken(sess.Token)
	if diff := cmp.Diff(&errSummary{core.EUnauthorized, "Session token has expired. Please re-authenticate."}, summarize(asCore(err))); diff != "" {
		t.Errorf("expired (-want +got):\n%s", diff)
	}
}

func TestAuthenticateSlowsDownGuessing(t *testing.T) {
	tm := newTeam(t, func(o *authz.Options) {
		o.Limits = authz.Limits{Free: 2, GlobalFree: 10, Base: time.Second, Max: 8 * time.Second, GlobalMax: 4 * time.Second, Forget: time.Hour}
	})
	try := func(agent, passkey string) string {
		_, err := tm.svc.Authenticate(agent, passkey, "", "")
		return core.ErrorCode(err)
	}
	// Two failures (naming the agent by name or by id counts the same),
	// then the next attempt waits one second; each failure after a wait
	// doubles it: two, four, eight (the cap).
	for i, ref := range []string{"wrk", tm.wrk.id()} {
		if got := try(ref, "alp_wrong"); got != core.EUnauthorized {
			t.Fatalf("failure %d: %s", i, got)
		}
	}
	delays := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second}
	for i, d := range delays {
		// A wrong passkey waits...
		if got := try("wrk", "alp_wrong"); got != authz.ETooManyAttempts {
			t.Fatalf("wrong passkey during the delay: %s", got)
		}
		tm.clock.Advance(d - time.Nanosecond)
		if got := try("wrk", "alp_wrong"); got != authz.ETooManyAttempts {
			t.Fatalf("just before %v: %s", d, got)
		}
		tm.clock.Advance(time.Nanosecond)
		if i < len(delays)-1 {
			if got := try("wrk", "alp_wrong"); got != core.EUnauthorized {
				t.Fatalf("wrong passkey after the delay: %s", got)
			}
		}
	}
	// ...the right one never does: failing on purpose (anyone who reaches
	// Airlock can) does not keep the agent out.
	if got := try("wrk", "alp_wrong"); got != core.EUnauthorized && got != authz.ETooManyAttempts {
		t.Fatalf("wrong passkey: %s", got)
	}
	if got := try("wrk", tm.wrk.Passkey); got != "" {
		t.Fatalf("right passkey during the delay: %s", got)
	}
	// Success reset the counter for wrk: two free failures again.
	for i := 0; i < 2; i++ {
		if got := try("wrk", "alp_wrong"); got != core.EUnauthorized {
			t.Fatalf("after reset, failure %d: %s", i, got)
		}
	}
	// Another agent is not slowed by wrk's failures...
	tm.clock.Advance(time.Minute)
	if got := try("mgr", tm.mgr.Passkey); got != "" {
		t.Fatalf("mgr: %s", got)
	}
	// ...until failures over all ids pass the global limit.
	for i := 0; i < 6; i++ {
		try("ghost"+string(rune('a'+i)), "alp_x")
	}
	if got := try("mgr", "alp_wrong"); got != authz.ETooManyAttempts {
		t.Errorf("global slowdown: %s", got)
	}
	if got := try("mgr", tm.mgr.Passkey); got != "" {
		t.Errorf("right passkey during the global slowdown: %s", got)
	}
	tm.clock.Advance(4 * time.Second)
	if got := try("mgr", "alp_wrong"); got != core.EUnauthorized {
		t.Errorf("after the global delay: %s", got)
	}
}

// TestSecretsAtRest: only hashes reach the database files.
func TestSecretsAtRest(t *testing.T) {
	tm := newTeam(t)
	sess, err := tm.svc.Authenticate("wrk", tm.wrk.Passkey, "alpha", "")
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := tm.svc.RotateToken("mgr")
	if err != nil {
		t.Fatal(err)
	}
	passkey, err := tm.svc.RotatePasskey("mgr")
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[string]string{"token": tm.wrk.Token, "passkey": tm.wrk.Passkey, "session token": sess.Token,
		"rotated token": rotated, "rotated passkey": passkey, "old token": tm.mgr.Token}
	files, err := filepath.Glob(filepath.Join(tm.dir, "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no database files: %v", err)
	}
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	h := authz.HashSecret(tm.wrk.Token)
	if !bytes.Contains(all, []byte(hexOf(h[:]))) {
		t.Fatal("the token's hash is not in the database files: the test reads the wrong files")
	}
	for what, s := range secrets {
		raw := strings.SplitN(s, "_", 2)[1]
		if bytes.Contains(all, []byte(raw)) {
			t.Errorf("the %s is stored in plain text", what)
		}
	}
	if _, err := tm.svc.IdentifyToken(tm.mgr.Token); core.ErrorCode(err) != core.EUnauthorized {
		t.Errorf("the token before rotation: %v", err)
	}
	if _, err := tm.svc.Authenticate("mgr", tm.mgr.Passkey, "", ""); core.ErrorCode(err) != core.EUnauthorized {
		t.Errorf("the passkey before rotation: %v", err)
	}
	if _, err := tm.svc.Authenticate("mgr", passkey, "", ""); err != nil {
		t.Errorf("the new passkey: %v", err)
	}
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

func TestSecretMatches(t *testing.T) {
	tok := authz.TokenPrefix + strings.Repeat("Q", 43)
	h := authz.HashSecret(tok)
	cases := map[string]bool{tok: true, tok[:len(tok)-1]: false, tok + "x": false, "": false, strings.ToLower(tok): false}
	for s, want := range cases {
		if got := authz.SecretMatches(h, s); got != want {
			t.Errorf("SecretMatches(%q) = %v; want %v", s, got, want)
		}
	}
}

// Peek, a look that is no request of the agent's (a listing's baseline),
// takes a binding that ended as gone without dropping it: the session's
// next request is told (found by a review: a list change dropped it
// without a word, and closed a session opened with a token for it).
func TestPeekLeavesAnEndedBindingToTheNextRequest(t *testing.T) {
	tm := newTeam(t)
	conn := authz.Identity{AgentID: tm.mgr.Agent.ID, Via: authz.ViaAgentToken}
	if _, err := tm.svc.Resolve("m1", conn, ""); err != nil {
		t.Fatal(err)
	}
	sess, err := tm.svc.Authenticate("wrk", tm.wrk.Passkey, "alpha", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := tm.svc.Bind("m1", sess.Record.ID); err != nil {
		t.Fatal(err)
	}
	if c, err := tm.svc.Peek("m1", conn); err != nil || c.AgentID != tm.wrk.Agent.ID {
		t.Fatalf("Peek of a live binding = %+v, %v; want wrk", c, err)
	}
	tm.clock.Advance(authz.DefaultSessionTTL)
	c, err := tm.svc.Peek("m1", conn)
	if err != nil || c.AgentID != tm.mgr.Agent.ID {
		t.Errorf("Peek of an ended binding = %+v, %v; want the connection's own agent, no error", c, err)
	}
	if tm.svc.Binding("m1") != sess.Record.ID {
		t.Error("Peek dropped the binding")
	}
	if _, err := tm.svc.Resolve("m1", conn, ""); core.ErrorMessage(err) != "Session token has expired. Please re-authenticate." {
		t.Errorf("the next request = %v, want it told the session expired", err)
	}
	if tm.svc.Binding("m1") != "" {
		t.Error("the binding is still there after the request was told")
	}
}
