package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The secrets a remote server takes in its URL (userinfo, a path segment,
// the query) are in none of its errors: not in the tool error an agent
// gets, not in the audit, not in the status the Servers screen shows,
// which still names the host.
func TestURLSecretsStayOutOfErrorsStatusAndAudit(t *testing.T) {
	secrets := []string{"us3r-t0ken", "sk-ak-path-0123456789", "q-secret-42"}
	srv := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, struct{}{}, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	host := strings.TrimPrefix(hs.URL, "http://")
	u := "http://" + secrets[0] + "@" + host + "/mcp/" + secrets[1] + "?key=" + secrets[2]
	e := newEnv(t, catalog.Options{BackoffMin: 20 * time.Millisecond, BackoffMax: 50 * time.Millisecond},
		core.ServerConfig{ID: "remote", URL: u})
	sess := e.connect(t, nil)
	ctx := context.Background()
	if res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "remote__echo", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Fatalf("first call: %v, %+v", err, res)
	}
	hs.CloseClientConnections()
	hs.Close()
	leaks := func(what, s string) {
		t.Helper()
		for _, secret := range secrets {
			if strings.Contains(s, secret) {
				t.Errorf("%s holds the URL's secret %q: %s", what, secret, s)
			}
		}
	}
	var told string
	testutil.Eventually(t, 10*time.Second, func() bool {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "remote__echo", Arguments: map[string]any{}})
		if err != nil {
			told = err.Error()
			return true
		}
		told = text(t, res)
		return res.IsError
	}, "no refused call")
	leaks("the agent's tool error", told)

	// A server that cannot be reached from its start: its state, for the
	// person and for agents.
	down := core.ServerConfig{ID: "down", URL: u}
	e.cat.Apply([]core.ServerConfig{{ID: "remote", URL: u}, down})
	var st core.ServerStatus
	testutil.Eventually(t, 10*time.Second, func() bool {
		st, _ = e.cat.ServerStatus("down")
		return st.LastError != ""
	}, "the server never shown down with an error")
	leaks("the status", st.LastError)
	if !strings.Contains(st.LastError, "http://"+host+"/…") {
		t.Errorf("the status %q does not name the server's host %s", st.LastError, host)
	}
	_, err := e.cat.Dispatch(ctx, &core.Request{Kind: core.KindToolCall, Server: "down", Name: "echo"})
	if err == nil {
		t.Fatal("a call to a server that is down succeeded")
	}
	leaks("the error of a call to the server while it is down", err.Error())

	var recs []core.AuditRecord
	testutil.Eventually(t, 10*time.Second, func() bool {
		recs, err = e.audit.List(core.ActivityFilter{Server: "remote", Full: true})
		return err == nil && len(recs) >= 2
	}, "the refused call never reached the audit: %v", err)
	for _, r := range recs {
		leaks("the audit record", r.Error)
	}
}

// What a server's process last wrote to stderr is its own log, which may
// hold anything (here, the key it was given); every agent may call the
// server. It is shown to the person (the status, the stderr tail), and no
// agent is told it.
func TestServerStderrIsForThePersonOnly(t *testing.T) {
	const secret = "sk-live-from-stderr"
	opts := catalog.Options{BackoffMin: 20 * time.Millisecond, BackoffMax: 50 * time.Millisecond, MaxCrashes: 2, StableAfter: time.Hour}
	// One never starts; the other crashes on a call.
	crasher := core.ServerConfig{ID: "crasher", Command: writeScript(t, "echo 'Error: key "+secret+" refused' >&2\nexit 3\n")}
	dier := core.ServerConfig{ID: "dier", Command: writeScript(t,
		reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"dier","version":"1"}}`)+
			"read initialized\n"+
			reply(`{"tools":[{"name":"die","inputSchema":{"type":"object"}}]}`)+
			"read req\necho 'Error: key "+secret+" refused' >&2\nexit 1\n")}
	e := newEnv(t, opts, dier)
	e.cat.Apply([]core.ServerConfig{dier, crasher})
	sess := e.connect(t, nil)
	ctx := context.Background()

	testutil.Eventually(t, 30*time.Second, func() bool {
		st, _ := e.cat.ServerStatus("crasher")
		return st.State == core.StateFailed
	}, "crasher never marked failed: %+v", e.cat.Status())
	st, _ := e.cat.ServerStatus("crasher")
	if !strings.Contains(st.LastError, "stderr: Error: key "+secret) {
		t.Errorf("the person is not shown what the server wrote: status %q", st.LastError)
	}
	_, err := e.cat.Dispatch(ctx, &core.Request{Kind: core.KindToolCall, Server: "crasher", Name: "x"})
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("a call to the failed server = %v, want how it ended without what it wrote on stderr", err)
	}

	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "dier__die", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); !res.IsError || strings.Contains(got, secret) {
		t.Errorf("a call that the server crashed on = %q (isError %v), want an error without what it wrote on stderr", got, res.IsError)
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		st, _ := e.cat.ServerStatus("dier")
		return strings.Contains(strings.Join(st.StderrTail, "\n"), secret)
	}, "the person is not shown what the crashed server wrote: %+v", e.cat.Status())
}
