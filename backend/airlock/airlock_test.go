package airlock_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/api"
	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/bridge"
	"github.com/airlock-dev/airlock/backend/cli"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/instance"
	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeServers writes a servers.json with the given servers into dir.
func writeServers(t testing.TB, dir string, servers ...core.ServerConfig) {
	t.Helper()
	m := map[string]any{}
	for _, s := range servers {
		e := map[string]any{"command": s.Command, "args": s.Args}
		if s.Sandbox {
			e["sandbox"] = true
		}
		m[s.ID] = e
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": m})
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "servers.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func start(t testing.TB, dir string) *airlock.Instance {
	t.Helper()
	in, err := airlock.Start(context.Background(), airlock.Options{DataDir: dir, Addr: "127.0.0.1:0", UI: fstest.MapFS{"index.html": {Data: []byte("<title>Airlock</title>")}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Close)
	return in
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func connect(t testing.TB, in *airlock.Instance) *mcp.ClientSession {
	t.Helper()
	return connectWith(t, in, "2025-11-25")
}

// connectWith connects a client of the given protocol revision with the
// shared agent token.
func connectWith(t testing.TB, in *airlock.Instance, protocol string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: in.Info.MCPURL, HTTPClient: &http.Client{Transport: bearer{in.Info.AgentToken}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func waitTool(t testing.TB, sess *mcp.ClientSession, name string) {
	t.Helper()
	testutil.Eventually(t, 60*time.Second, func() bool {
		res, err := sess.ListTools(context.Background(), nil)
		if err != nil {
			return false
		}
		for _, tl := range res.Tools {
			if tl.Name == name {
				return true
			}
		}
		return false
	}, "tool %s never listed", name)
}

func allowAll(t testing.TB, in *airlock.Instance) {
	t.Helper()
	if _, err := in.API.Rules.Create(hitl.RuleInput{AutoApprove: true, Priority: 0}); err != nil {
		t.Fatal(err)
	}
}

func echo(t testing.TB, sess *mcp.ClientSession, msg string) *mcp.CallToolResult {
	t.Helper()
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": msg}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestServeEndToEnd(t *testing.T) {
	in, sess := setup(t, airlock.Options{})
	allowAll(t, in)
	if res := echo(t, sess, "through airlock"); res.IsError || !strings.Contains(textOf(res), "through airlock") {
		t.Fatalf("echo = %q", textOf(res))
	}
	recs, err := in.API.Activity.List(core.ActivityFilter{Server: "everything"})
	if err != nil || len(recs) != 1 || recs[0].Decision != core.DecisionAllow {
		t.Fatalf("activity = %+v, %v; want one allowed call", recs, err)
	}
	if recs[0].RuleID == "" {
		t.Errorf("activity record does not name the rule that allowed it: %+v", recs[0])
	}
}

func TestNoRuleMeansAsk(t *testing.T) {
	dir := t.TempDir()
	writeServers(t, dir, testutil.EverythingServer(t, "everything"))
	in := start(t, dir)
	sess := connect(t, in)
	waitTool(t, sess, "everything__echo")
	done := make(chan *mcp.CallToolResult)
	go func() { done <- echo(t, sess, "needs a person") }()
	var pending []hitl.Approval
	testutil.Eventually(t, 10*time.Second, func() bool {
		pending, _ = in.API.Approvals.Pending()
		return len(pending) == 1
	}, "the call never waited for approval")
	if pending[0].ExposedName != "everything__echo" || pending[0].Server != "everything" {
		t.Errorf("pending approval = %+v", pending[0])
	}
	if err := in.API.Approvals.Approve(pending[0].ID); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.IsError || !strings.Contains(textOf(res), "needs a person") {
		t.Fatalf("approved call result = %q", textOf(res))
	}
	if err := in.API.Approvals.Approve(pending[0].ID); core.ErrorCode(err) == "" {
		t.Error("approving the same call twice succeeded")
	}
}

func TestHTTPSecurity(t *testing.T) {
	in := start(t, t.TempDir())
	base := "http://" + in.Addr
	do := func(method, path string, hdr map[string]string) int {
		body := "[]"
		if b, ok := hdr["Body"]; ok {
			body = b
			delete(hdr, "Body")
		}
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	ui := "Bearer " + in.UIToken
	// The UI token as a cookie, as earlier versions set it: no credential
	// now (browsers send a host's cookies to every port of it).
	cookie := api.UICookie(in.Addr) + "=" + in.UIToken
	ticket := func() string {
		req, _ := http.NewRequest("POST", base+"/api/events/ticket", nil)
		req.Header.Set("Authorization", ui)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got struct{ Ticket string }
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || got.Ticket == "" {
			t.Fatalf("ticket: status %d, %v", resp.StatusCode, err)
		}
		return got.Ticket
	}
	spent := ticket()
	if got := do("GET", "/api/events?topics=x&ticket="+spent, nil); got != 200 {
		t.Errorf("events with a ticket: status %d, want 200", got)
	}
	worker, err := in.API.Agents.Create(authz.AgentInput{Name: "plain-worker", Kind: authz.KindWorker})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		method string
		path   string
		hdr    map[string]string
		want   int
	}{
		{"rpc without token", "POST", "/api/rpc/Servers.List", nil, 401},
		{"rpc with UI token", "POST", "/api/rpc/Servers.List", map[string]string{"Authorization": ui}, 200},
		{"rpc with the UI token as a cookie", "POST", "/api/rpc/Servers.List", map[string]string{"Cookie": cookie}, 401},
		{"ticket without token", "POST", "/api/events/ticket", nil, 401},
		{"ticket with the UI token as a cookie", "POST", "/api/events/ticket", map[string]string{"Cookie": cookie}, 401},
		{"events with the UI token as a cookie", "GET", "/api/events", map[string]string{"Cookie": cookie}, 401},
		{"events with a spent ticket", "GET", "/api/events?ticket=" + spent, nil, 401},
		{"events with a made-up ticket", "GET", "/api/events?ticket=nope", nil, 401},
		{"rpc with agent token", "POST", "/api/rpc/Servers.List", map[string]string{"Authorization": "Bearer " + in.Info.AgentToken}, 401},
		{"rpc from another site", "POST", "/api/rpc/Servers.List", map[string]string{"Authorization": ui, "Origin": "http://evil.example"}, 403},
		{"rebinding host", "POST", "/api/rpc/Servers.List", map[string]string{"Authorization": ui, "Host": "evil.example"}, 403},
		{"unknown method", "POST", "/api/rpc/NoSuch", map[string]string{"Authorization": ui}, 404},
		{"rpc body not JSON", "POST", "/api/rpc/Servers.Remove", map[string]string{"Authorization": ui, "Body": "{nope"}, 400},
		{"rpc argument of the wrong type", "POST", "/api/rpc/Servers.Remove", map[string]string{"Authorization": ui, "Body": "[42]"}, 400},
		{"rpc too many arguments", "POST", "/api/rpc/Servers.List", map[string]string{"Authorization": ui, "Body": "[1]"}, 400},
		{"rpc unknown server", "POST", "/api/rpc/Servers.Remove", map[string]string{"Authorization": ui, "Body": `["ghost"]`}, 404},
		{"rpc non-integer priority", "POST", "/api/rpc/Rules.Create", map[string]string{"Authorization": ui, "Body": `[{"priority":"high"}]`}, 400},
		{"mcp with UI token", "POST", "/mcp", map[string]string{"Authorization": "Bearer " + in.UIToken}, 401},
		{"events without token", "GET", "/api/events", nil, 401},
		// The page is the UI's code, no secret; it asks the API with the
		// token the link gave it.
		{"ui without token", "GET", "/", nil, 200},
		{"ui with wrong token", "GET", "/?token=nope", nil, 401},
		{"ui with the link's token", "GET", "/?token=" + in.UIToken, nil, 200},
		{"profiles without token", "GET", "/debug/pprof/", nil, 401},
		{"profiles with UI token", "GET", "/debug/pprof/", map[string]string{"Authorization": ui}, 401},
		{"profiles with agent token", "GET", "/debug/pprof/", map[string]string{"Authorization": "Bearer " + in.Info.AgentToken}, 200},
		{"heap profile with agent token", "GET", "/debug/pprof/heap", map[string]string{"Authorization": "Bearer " + in.Info.AgentToken}, 200},
		{"runtime counters with agent token", "GET", "/debug/vars", map[string]string{"Authorization": "Bearer " + in.Info.AgentToken}, 200},
		// A profile or goroutine dump shows what every agent is doing: not
		// for an agent without a superuser role (found by a new-user test).
		{"profiles with a worker's token", "GET", "/debug/pprof/goroutine?debug=2", map[string]string{"Authorization": "Bearer " + worker.Token}, 403},
		{"runtime counters with a worker's token", "GET", "/debug/vars", map[string]string{"Authorization": "Bearer " + worker.Token}, 403},
		{"profiles from a rebinding host", "GET", "/debug/pprof/", map[string]string{"Authorization": "Bearer " + in.Info.AgentToken, "Host": "evil.example"}, 403},
	}
	for _, c := range cases {
		if got := do(c.method, c.path, c.hdr); got != c.want {
			t.Errorf("%s: status %d, want %d", c.name, got, c.want)
		}
	}
	// No other page may frame the signed-in UI, which approves calls
	// (found in a security review).
	req, _ := http.NewRequest("GET", base+"/", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("the UI may be framed: X-Frame-Options %q, CSP %q", resp.Header.Get("X-Frame-Options"), resp.Header.Get("Content-Security-Policy"))
	}
}

func TestBridgeOverStdio(t *testing.T) {
	dir := t.TempDir()
	writeServers(t, dir, testutil.EverythingServer(t, "everything"))
	in := start(t, dir)
	allowAll(t, in)

	// A real MCP client speaks stdio to the bridge through pipes.
	clientToBridge, bridgeIn := io.Pipe()
	bridgeOut, bridgeToClient := io.Pipe()
	b := &bridge.Bridge{URL: in.Info.MCPURL, Token: in.Info.AgentToken}
	errc := make(chan error, 1)
	go func() { errc <- b.Run(context.Background(), clientToBridge, bridgeToClient); bridgeToClient.Close() }()
	changed := make(chan struct{}, 10)
	c := mcp.NewClient(&mcp.Implementation{Name: "stdio-agent", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	sess, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: bridgeOut, Writer: bridgeIn}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	waitTool(t, sess, "everything__echo")
	if res := echo(t, sess, "via stdio"); !strings.Contains(textOf(res), "via stdio") {
		t.Fatalf("echo via bridge = %q", textOf(res))
	}
	// Server-initiated notifications reach the stdio client too.
	if _, err := in.API.Servers.Add(testutil.EverythingServer(t, "second")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("tools/list_changed never reached the stdio client through the bridge")
	}
	sess.Close()
	bridgeIn.Close()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("bridge ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("bridge did not end when stdin closed")
	}
}

func TestBridgeWithoutAirlockFailsAtOnce(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/mcp"
	srv.Close() // nothing listens there now
	b := &bridge.Bridge{URL: url, Token: "x"}
	err := b.Run(context.Background(), strings.NewReader(""), io.Discard)
	if core.ErrorCode(err) != core.EUnavailable || !strings.Contains(err.Error(), "airlock serve") {
		t.Fatalf("bridge with no Airlock: %v, want %s telling how to start one", err, core.EUnavailable)
	}
}

// TestAuditSurvivesKill9 runs Airlock in a child process, makes a call, kills
// the child with SIGKILL and checks that the call is in the audit log.
func TestAuditSurvivesKill9(t *testing.T) {
	runChildIfAsked(true)
	dir := t.TempDir()
	ch := startChild(t, "TestAuditSurvivesKill9", dir)
	c := mcp.NewClient(&mcp.Implementation{Name: "a", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ch.url, HTTPClient: &http.Client{Transport: bearer{ch.token}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	waitTool(t, sess, "test__echo")
	for i := range 5 {
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "test__echo", Arguments: map[string]any{"message": fmt.Sprintf("before kill %d", i)}})
		if err != nil || res.IsError {
			t.Fatalf("echo failed: %v %+v", err, res)
		}
	}
	ch.kill()

	// What the user sees in Activity after starting Airlock again.
	in := start(t, dir)
	recs, err := in.API.Activity.List(core.ActivityFilter{Tool: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 {
		t.Fatalf("after kill -9 and a restart Activity has %d echo calls, want all 5 the agent saw answered", len(recs))
	}
}

func TestJournalModeIsWAL(t *testing.T) {
	db := testutil.MustOpenDB(t)
	mode, err := db.JournalMode()
	if err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
}

func TestTokenRotationTakesEffect(t *testing.T) {
	dir := t.TempDir()
	in := start(t, dir)
	old := in.Info.AgentToken
	status := func(tok string) int {
		req, _ := http.NewRequest("POST", in.Info.MCPURL, strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if status(old) == http.StatusUnauthorized {
		t.Fatal("the current token was refused")
	}
	// What `airlock token --rotate` does: a new token in the file and the
	// database, then the running Airlock is told.
	var out bytes.Buffer
	if err := cli.TokenCmd(dir, []string{"--rotate"}, &out); err != nil {
		t.Fatal(err)
	}
	rotated := strings.TrimSpace(out.String())
	if err := instance.NotifyChanged(dir); err != nil {
		t.Fatal(err)
	}
	// At once: the very next request with the old token is refused.
	if status(old) != http.StatusUnauthorized || status(rotated) == http.StatusUnauthorized {
		t.Fatal("after `airlock token --rotate` the running Airlock still takes the old token")
	}
	if info, _ := in.API.System.Info(); info.AgentToken != rotated {
		t.Errorf("the UI's Connect dialog still shows the old token after a rotation")
	}
}

func TestSecondInstanceOnSameDataDirIsRefused(t *testing.T) {
	dir := t.TempDir()
	start(t, dir)
	_, err := airlock.Start(context.Background(), airlock.Options{DataDir: dir, Addr: "127.0.0.1:0"})
	if core.ErrorCode(err) != core.EConflict || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("second Start on the same data dir: %v, want %s saying one is already running", err, core.EConflict)
	}
}

func TestSecondLaunchFocusesTheFirst(t *testing.T) {
	dir := t.TempDir()
	focused := make(chan struct{}, 1)
	in, err := airlock.Start(context.Background(), airlock.Options{DataDir: dir, Addr: "127.0.0.1:0", OnFocus: func() { focused <- struct{}{} }})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := instance.FocusRunning(dir); err != nil {
		t.Fatal(err)
	}
	select {
	case <-focused:
	default:
		t.Fatal("the running instance was not asked to focus")
	}
	// The focus endpoint takes only its own token.
	req, _ := http.NewRequest("POST", "http://"+in.Addr+"/instance/focus", nil)
	req.Header.Set("Authorization", "Bearer "+in.Info.AgentToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("focus with the agent token: status %d, want 401", resp.StatusCode)
	}
}

// A server added with `airlock servers add` while Airlock runs reaches the
// agents already connected, as one added in the Servers screen does.
func TestCLIServerAddReachesConnectedAgent(t *testing.T) {
	dir := t.TempDir()
	in := start(t, dir)
	allowAll(t, in)
	sess := connect(t, in)
	cfg := testutil.EverythingServer(t, "everything")
	args := append([]string{"add", "everything", "--"}, append([]string{cfg.Command}, cfg.Args...)...)
	var out, errOut strings.Builder
	if err := cli.Servers(context.Background(), dir, args, strings.NewReader(""), &out, &errOut); err != nil {
		t.Fatalf("servers add: %v: %s", err, errOut.String())
	}
	waitTool(t, sess, "everything__echo")
	if res := echo(t, sess, "added from the CLI"); !strings.Contains(textOf(res), "added from the CLI") {
		t.Fatalf("echo = %q", textOf(res))
	}
}

func TestAllowedHostsReachTheUI(t *testing.T) {
	in, err := airlock.Start(context.Background(), airlock.Options{DataDir: t.TempDir(), Addr: "127.0.0.1:0", AllowedHosts: []string{"airlock.example"}})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	status := func(host string) int {
		req, _ := http.NewRequest("POST", "http://"+in.Addr+"/api/rpc/Servers.List", strings.NewReader("[]"))
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+in.UIToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status("airlock.example:4750"); got != 200 {
		t.Errorf("allowed host: status %d, want 200", got)
	}
	if got := status("other.example:4750"); got != 403 {
		t.Errorf("host not allowed: status %d, want 403", got)
	}
}

func TestExportActivity(t *testing.T) {
	in, sess := setup(t, airlock.Options{})
	allowAll(t, in)
	echo(t, sess, `one, "quoted"`)
	echo(t, sess, "two")
	js, err := in.API.Activity.Export(core.ActivityFilter{}, "json")
	if err != nil {
		t.Fatal(err)
	}
	var recs []core.AuditRecord
	if err := json.Unmarshal([]byte(js), &recs); err != nil || len(recs) != 2 {
		t.Fatalf("json export: %v, %d records, want 2", err, len(recs))
	}
	csvText, err := in.API.Activity.Export(core.ActivityFilter{Tool: "echo"}, "csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(csvText)).ReadAll()
	col := func(name string) int { return slices.Index(rows[0], name) }
	if err != nil || len(rows) != 3 || rows[0][0] != "id" || col("tool") < 0 || rows[1][col("tool")] != "echo" || rows[1][col("kind")] != core.KindToolCall {
		t.Fatalf("csv export: %v, rows %q", err, rows)
	}
	if got := rows[2][col("arguments")]; !strings.Contains(got, `one, \"quoted\"`) {
		t.Errorf("csv arguments column = %q, want the first call's arguments intact", got)
	}
	if rows[1][col("client")] != "test-agent" || rows[1][col("client_version")] != "1" {
		t.Errorf("csv client columns = %q %q, want the client's name and version apart", rows[1][col("client")], rows[1][col("client_version")])
	}
	if _, err := in.API.Activity.Export(core.ActivityFilter{}, "xml"); core.ErrorCode(err) != core.EInvalid {
		t.Errorf("unknown format: %v, want %s", err, core.EInvalid)
	}
}

// The settings page's test panel reads the answer as JSON over the UI's RPC.
func TestTestRuleOverRPC(t *testing.T) {
	in := start(t, t.TempDir())
	server := "everything"
	r, err := in.API.Rules.Create(hitl.RuleInput{ServerID: &server, AutoApprove: true, Priority: 5})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", "http://"+in.Addr+"/api/rpc/Rules.Test", strings.NewReader(`[{"serverId":"everything","toolName":"echo","arguments":"{\"message\":\"x\"}"}]`))
	req.Header.Set("Authorization", "Bearer "+in.UIToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Decision struct {
			Outcome string `json:"outcome"`
			RuleID  string `json:"ruleId"`
			Reason  string `json:"reason"`
		} `json:"decision"`
		Fired   *struct{ ID string } `json:"fired"`
		Skipped []any                `json:"skipped"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Decision.Outcome != core.Allow || got.Decision.RuleID != r.ID || got.Fired == nil || got.Fired.ID != r.ID || got.Skipped == nil {
		t.Fatalf("TestRule over RPC = %+v, want decision.outcome allow by %s, fired set, skipped a list", got, r.ID)
	}
}

// TestAirlockRefusesToProxyItself: a server entry pointing at Airlock's own
// MCP endpoint (easy to import from a client config set up for Airlock) is
// refused with a clear error instead of listing its own tools again,
// prefixed, at every listing, without end (found by a new-user test:
// 5,000 tools and climbing memory in 20 s).
func TestAirlockRefusesToProxyItself(t *testing.T) {
	in := start(t, t.TempDir())
	if _, err := in.API.Servers.Add(core.ServerConfig{ID: "me", URL: in.Info.MCPURL, Headers: map[string]string{"Authorization": "Bearer " + in.Info.AgentToken}}); err != nil {
		t.Fatal(err)
	}
	var st core.ServerStatus
	testutil.Eventually(t, 30*time.Second, func() bool {
		views, _ := in.API.Servers.List()
		for _, v := range views {
			if v.Config.ID == "me" {
				st = v.Status
			}
		}
		return st.State == core.StateFailed || strings.Contains(st.LastError, "is an Airlock")
	}, "a server that is Airlock itself was not refused: %+v", st)
	if !strings.Contains(st.LastError, "this server is an Airlock") || len(st.Tools) != 0 {
		t.Errorf("status = %s, %d tools; want the reason and no tools", st.LastError, len(st.Tools))
	}
}

// `airlock servers restart ID` restarts a server of the running Airlock,
// a failed one too (found by a new-user test: a URL server that was down
// at start stayed failed, and only the UI could restart it).
func TestServersRestartCLI(t *testing.T) {
	dir := t.TempDir()
	in := start(t, dir)
	if _, err := in.API.Servers.Add(core.ServerConfig{ID: "late", URL: "http://127.0.0.1:1/mcp"}); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := cli.Servers(context.Background(), dir, args, strings.NewReader(""), &out, &errOut)
		return out.String(), err
	}
	if out, err := run("restart", "late"); err != nil || !strings.Contains(out, "restarted server late") {
		t.Errorf("restart late: %v\n%s", err, out)
	}
	// list --json carries what the table shows: the live state.
	var listed []struct {
		ID     string `json:"id"`
		Status *struct {
			State string `json:"state"`
		} `json:"status"`
	}
	out, err := run("list", "--json")
	if err != nil || json.Unmarshal([]byte(out), &listed) != nil || len(listed) != 1 || listed[0].ID != "late" || listed[0].Status == nil || listed[0].Status.State == "" {
		t.Errorf("servers list --json: %v\n%s", err, out)
	}
	if _, err := run("restart", "ghost"); core.ErrorCode(err) != core.ENotFound {
		t.Errorf("restart of an unknown server: %v, want %s", err, core.ENotFound)
	}
	var stdout, stderr bytes.Buffer
	if err := cli.Servers(context.Background(), t.TempDir(), []string{"restart", "late"}, strings.NewReader(""), &stdout, &stderr); core.ErrorCode(err) != core.EUnavailable {
		t.Errorf("restart without a running Airlock: %v, want %s", err, core.EUnavailable)
	}
}

// A command an agent ran may have changed the modes of Airlock's files, or
// made folders at the names Airlock uses (the shell sandbox keeps it from
// reading and writing them, not from that; found by a review). The next
// start undoes both, and starts.
func TestStartTidiesTheDataDirectory(t *testing.T) {
	dir := t.TempDir()
	in := start(t, dir)
	in.Close()
	for _, p := range []string{"airlock.lock", "airlock.db-wal", "servers.json"} {
		os.Remove(filepath.Join(dir, p))
		if err := os.Mkdir(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"agent-token", "rules.json", "airlock.db"} {
		if err := os.Chmod(filepath.Join(dir, p), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "journal"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	in = start(t, dir)
	defer in.Close()
	for p, want := range map[string]os.FileMode{".": 0o700, "journal": 0o700, "agent-token": 0o600, "rules.json": 0o600, "airlock.db": 0o600} {
		if fi, err := os.Stat(filepath.Join(dir, p)); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s after the start: %v, %v; want %v", p, fi.Mode(), err, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "servers.json")); err == nil && fi.IsDir() {
		t.Errorf("servers.json is still a folder")
	}
}

// A server you added is never handed a path in Airlock's data directory
// (a file server given the home folder would read the agents' token for an
// agent that asked): such a call is refused, and nobody is asked.
func TestServersAreNotGivenTheDataDirectory(t *testing.T) {
	dir := t.TempDir()
	writeServers(t, dir, testutil.EverythingServer(t, "everything"))
	in := start(t, dir)
	allowAll(t, in)
	sess := connect(t, in)
	waitTool(t, sess, "everything__echo")
	// The folder holding it counts too: moving that moves the data directory.
	for _, msg := range []string{dir + "/agent-token", "cat " + dir, `{"path":"` + dir + `/rules.json"}`, filepath.Dir(dir)} {
		res := echo(t, sess, msg)
		if !res.IsError || !strings.Contains(textOf(res), "path_protected") || strings.Contains(textOf(res), "Echo:") {
			t.Errorf("echo %q = %q; want a path_protected refusal", msg, textOf(res))
		}
	}
	// Its neighbours, and paths that only begin like it, pass.
	for _, msg := range []string{dir + "-notes/x", filepath.Dir(filepath.Dir(dir)), "hello"} {
		if res := echo(t, sess, msg); res.IsError || !strings.Contains(textOf(res), "Echo: "+msg) {
			t.Errorf("echo %q = %q; want it echoed", msg, textOf(res))
		}
	}
	if pending, _ := in.API.Approvals.Pending(); len(pending) != 0 {
		t.Errorf("a person was asked: %+v", pending)
	}
	recs, err := in.API.Activity.List(core.ActivityFilter{Server: "everything", Decision: core.DecisionDenied})
	if err != nil || len(recs) != 4 {
		t.Errorf("activity has %d refused calls (%v), want 4", len(recs), err)
	}
}

// The shell sandbox lets a command make folders anywhere, in the data
// directory too, and folders in those (`mkdir -p`; see backend/sandbox).
// Tidy removes an empty folder at a name Airlock uses, but one holding a
// folder is taken for Airlock's own and kept. airlock.db-journal and
// audit.journal never exist while Airlock runs (the database is in WAL
// mode; the journal lives in journal/), so a command an agent runs can make
// them at any time, no process outliving Airlock needed; -wal and -shm can
// be made once Airlock has stopped. Every next start then fails (or
// panics, for -shm) until the user finds and removes the folder.
func TestStartTidiesNonEmptyFoldersSquattingAName(t *testing.T) {
	for _, name := range []string{"airlock.db-journal", "audit.journal", "airlock.db-wal", "airlock.db-shm"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			in := start(t, dir)
			in.Close()
			if err := os.MkdirAll(filepath.Join(dir, name, "x"), 0o755); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Start panicked with a folder holding a folder at %s: %v", name, r)
				}
			}()
			in, err := airlock.Start(context.Background(), airlock.Options{DataDir: dir, Addr: "127.0.0.1:0", UI: fstest.MapFS{"index.html": {Data: []byte("<title>Airlock</title>")}}})
			if err != nil {
				t.Fatalf("Start with a folder holding a folder at %s: %v", name, err)
			}
			in.Close()
		})
	}
}

// End to end, with the server the guard is for: server-filesystem given
// the home folder, the data directory in ~/.config/airlock, and an agent
// that every call is approved for. It reads the agents' token by spellings
// the guard does not recognise: relative to the served folder, with a
// double slash or .. in the absolute path, or with a JSON escape.
func TestFileServerIsNotGivenTheDataDirectoryByAnotherSpelling(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".config", "airlock")
	writeServers(t, dir, testutil.FilesystemServer(t, "fs", home))
	in := start(t, dir)
	allowAll(t, in)
	sess := connect(t, in)
	waitTool(t, sess, "fs__read_text_file")
	token, err := os.ReadFile(filepath.Join(dir, "agent-token"))
	if err != nil || len(strings.TrimSpace(string(token))) == 0 {
		t.Fatalf("agent-token: %q, %v", token, err)
	}
	h := filepath.ToSlash(home)
	for _, args := range []string{
		`{"path":".config/airlock/agent-token"}`,
		`{"path":"` + h + `//.config/airlock/agent-token"}`,
		`{"path":"` + h + `/.config/../.config/airlock/agent-token"}`,
		`{"path":"` + h + `/.config/\u0061irlock/agent-token"}`,
	} {
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "fs__read_text_file", Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		if got := textOf(res); strings.Contains(got, strings.TrimSpace(string(token))) {
			t.Errorf("read_text_file %s through Airlock returned the agents' token: %q", args, got)
		}
	}
}

// A server you added with sandbox set runs in the kernel sandbox shell_exec
// runs in. The guard reads what a call says; a link that already exists in
// the served folder says nothing of the data directory, and server-
// filesystem follows it (into a folder it serves, as far as it can tell).
// Unsandboxed, the agents' token comes back; sandboxed, the kernel refuses.
func TestSandboxedServerIsKeptOutOfTheDataDirectory(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".config", "airlock")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(home, "settings")); err != nil {
		t.Fatal(err)
	}
	open := testutil.FilesystemServer(t, "open", home)
	boxed := testutil.FilesystemServer(t, "boxed", home)
	boxed.Sandbox = true
	writeServers(t, dir, open, boxed)
	in := start(t, dir)
	ov, _ := in.API.Builtin.Get()
	if !ov.Sandbox.Enforced {
		t.Skipf("the kernel enforces no sandbox here: %s", ov.Sandbox.Reason)
	}
	allowAll(t, in)
	sess := connect(t, in)
	waitTool(t, sess, "open__read_text_file")
	waitTool(t, sess, "boxed__read_text_file")
	token, err := os.ReadFile(filepath.Join(dir, "agent-token"))
	if err != nil || len(strings.TrimSpace(string(token))) == 0 {
		t.Fatalf("agent-token: %q, %v", token, err)
	}
	read := func(server string) string {
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: server + "__read_text_file", Arguments: map[string]any{"path": filepath.Join(home, "settings", "agent-token")}})
		if err != nil {
			t.Fatal(err)
		}
		return textOf(res)
	}
	if got := read("open"); !strings.Contains(got, strings.TrimSpace(string(token))) {
		t.Fatalf("the unsandboxed server did not read the token through the link (%q): this test no longer shows what the sandbox adds", got)
	}
	if got := read("boxed"); strings.Contains(got, strings.TrimSpace(string(token))) || !strings.Contains(strings.ToLower(got), "permission denied") {
		t.Errorf("the sandboxed server answered %q; want the kernel's refusal, without the token", got)
	}
}
