package airlock_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// startAt starts Airlock on addr (a restart on the address its agents know).
func startAt(t *testing.T, addr string, o airlock.Options) *airlock.Instance {
	t.Helper()
	o.Addr = addr
	o.UI = fstest.MapFS{"index.html": {Data: []byte("<title>Airlock</title>")}}
	in, err := airlock.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Close)
	return in
}

// post sends one JSON-RPC request on session sid with token and returns
// the HTTP status.
func post(t *testing.T, endpoint, token, sid, body string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// An agent's session outlives a restart of Airlock: its client carries on
// with the session it has, as if nothing happened. (Claude Code does not
// open a new session when told its old one is not found, as the protocol
// has it do: its Airlock tools stopped working until it was restarted.)
// Only the credential that opened the session may carry it on, and a
// session its client ended is not carried on.
func TestSessionOutlivesRestart(t *testing.T) {
	dir := t.TempDir()
	servers := func() map[string]*mcp.Server {
		return map[string]*mcp.Server{"everything": testutil.NewTestServer().Server}
	}
	in := startWith(t, airlock.Options{DataDir: dir, InProcess: servers()})
	allowAll(t, in)
	other, err := in.API.Agents.Create(authz.AgentInput{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(in.Info.MCPURL)
	sess := connect(t, in)
	waitTool(t, sess, "everything__echo")
	if res := echo(t, sess, "before"); res.IsError {
		t.Fatalf("echo before the restart: %s", textOf(res))
	}
	sid := sess.ID()
	in.Close()

	in2 := startAt(t, u.Host, airlock.Options{DataDir: dir, InProcess: servers()})
	waitTool(t, sess, "everything__echo")
	if res := echo(t, sess, "after the restart"); res.IsError || !strings.Contains(textOf(res), "after the restart") {
		t.Fatalf("echo on the same session after a restart = %q", textOf(res))
	}
	if sess.ID() != sid {
		t.Errorf("the client's session id changed: %s → %s", sid, sess.ID())
	}
	recs, _ := in2.API.Activity.List(core.ActivityFilter{Server: "everything", Limit: 1})
	if len(recs) != 1 || recs[0].Session != sid || recs[0].Client != "test-agent 1" && !strings.HasPrefix(recs[0].Client, "test-agent") {
		t.Errorf("the call after the restart is recorded as %+v, want session %s of client test-agent", recs, sid)
	}

	// Another agent's credential may not take the session over.
	ping := `{"jsonrpc":"2.0","id":99,"method":"ping"}`
	if got := post(t, in.Info.MCPURL, other.Token, sid, ping); got != http.StatusForbidden {
		t.Errorf("the session with another agent's token = HTTP %d, want 403", got)
	}

	// A session its client ended stays ended.
	sess.Close()
	in2.Close()
	in3 := startAt(t, u.Host, airlock.Options{DataDir: dir, InProcess: servers()})
	if got := post(t, in3.Info.MCPURL, in3.Info.AgentToken, sid, ping); got != http.StatusNotFound {
		t.Errorf("a session its client ended, after a restart = HTTP %d, want 404", got)
	}
}
