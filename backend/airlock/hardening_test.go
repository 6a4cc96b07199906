package airlock_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/bridge"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Every file Airlock keeps in its data directory is the user's alone (0600,
// the directory 0700): they hold the audit log, tokens and rules.
func TestDataDirFilesArePrivate(t *testing.T) {
	in, sess := setup(t, airlock.Options{})
	allowAll(t, in)
	if res := echo(t, sess, "hello"); res.IsError {
		t.Fatal(textOf(res))
	}
	dir := in.Info.DataDir
	in.Close()
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := d.Info()
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %o, want %o", path, fi.Mode().Perm(), want)
		}
		return nil
	})
	for _, f := range []string{store.FileName, filepath.Join(store.JournalDir, store.JournalFileName), "airlock.lock"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("expected %s in the data directory: %v", f, err)
		}
	}
}

// A request whose audit record cannot be made durable is refused
// (audit_unavailable): on a "full disk" no call runs without a record, and
// Airlock says why.
func TestAuditFailsClosed(t *testing.T) {
	runChildIfAsked(true)
	dir := t.TempDir()
	ch := startChild(t, "TestAuditFailsClosed", dir, childFsizeEnv+"=65536")
	c := mcp.NewClient(&mcp.Implementation{Name: "a", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ch.url, HTTPClient: &http.Client{Transport: bearer{ch.token}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	waitTool(t, sess, "test__echo")
	var answered []string
	refused, lastRefused := 0, false
	for i := range 200 {
		msg := fmt.Sprintf("call %03d %s", i, strings.Repeat("x", 300))
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "test__echo", Arguments: map[string]any{"message": msg}})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		switch {
		case !res.IsError:
			answered = append(answered, fmt.Sprintf("call %03d ", i))
			lastRefused = false
		case strings.Contains(textOf(res), "["+pipeline.EAuditUnavailable+"]") && strings.Contains(textOf(res), "Hint:"):
			refused++
			lastRefused = true
		default:
			t.Fatalf("call %d: unexpected tool error %s", i, textOf(res))
		}
	}
	if refused == 0 || len(answered) == 0 {
		t.Fatalf("%d calls answered, %d refused: the limit did not bite, or nothing ran", len(answered), refused)
	}
	var status struct {
		LastFailure *struct{ Error string } `json:"lastFailure"`
	}
	ch.rpc(t, "System.AuditStatus", &status)
	// The failure stays shown until a write works again.
	switch {
	case lastRefused && (status.LastFailure == nil || !strings.Contains(status.LastFailure.Error, "audit journal")):
		t.Errorf("AuditStatus = %+v after a refused call, want the failing write named for the UI", status.LastFailure)
	case !lastRefused && status.LastFailure != nil:
		t.Errorf("AuditStatus = %+v after an answered call, want no failure (writes work again)", status.LastFailure)
	}
	ch.kill()

	// With room again, Activity shows every call an agent got an answer to.
	in := start(t, dir)
	recs, err := in.API.Activity.Export(core.ActivityFilter{Tool: "echo"}, "json")
	if err != nil {
		t.Fatal(err)
	}
	for _, prefix := range answered {
		if !strings.Contains(recs, prefix) {
			t.Errorf("%q was answered but has no audit record", prefix)
		}
	}
	t.Logf("%d calls answered and recorded, %d refused for want of an audit record", len(answered), refused)
}

// However big a request, its audit record is bounded: Activity stays small
// and fast.
func TestAuditIsBounded(t *testing.T) {
	in, sess := setup(t, airlock.Options{})
	huge := strings.Repeat("n", 3<<20)
	for range 5 {
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: huge, Arguments: map[string]any{"blob": strings.Repeat("a", 512<<10)}})
		if err != nil || !res.IsError {
			t.Fatalf("a call to an unknown 3 MiB name: %v %+v", err, res)
		}
	}
	recs, err := in.API.Activity.List(core.ActivityFilter{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(recs)
	if len(recs) != 5 || len(b) > 64<<10 {
		t.Errorf("Activity returned %d records in %d bytes, want 5 records in at most 64 KiB", len(recs), len(b))
	}
	full, err := in.API.Activity.Get(recs[0].ID)
	if err != nil || len(full.Tool) > pipeline.MaxAuditName+16 || len(full.Arguments) > pipeline.MaxAuditArgs+16 {
		t.Errorf("a whole record has a %d-byte tool and %d-byte arguments: %v", len(full.Tool), len(full.Arguments), err)
	}
	in.Close()
	fi, err := os.Stat(filepath.Join(in.Info.DataDir, store.FileName))
	if err != nil || fi.Size() > 4<<20 {
		t.Errorf("airlock.db is %d bytes after 5 huge requests (%v), want it small", fi.Size(), err)
	}
}

// After a crash every call that was waiting for approval is recorded as
// expired — however many there were — each in its own audit record.
func TestRecoveryCoversEveryWaitingCall(t *testing.T) {
	dir := t.TempDir()
	const waiting = 1100
	db, err := store.Open(filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	audit, err := store.OpenAuditLog(db, filepath.Join(dir, store.JournalFileName), nil)
	if err != nil {
		t.Fatal(err)
	}
	approvals := store.NewApprovals(db)
	now := time.Now().UTC()
	for i := range waiting {
		rec := &core.AuditRecord{Time: now, Kind: core.KindToolCall, Agent: "agent", Server: "everything", Tool: "echo", Status: core.StatusRunning}
		if err := audit.Begin(rec); err != nil {
			t.Fatal(err)
		}
		a := hitl.Approval{ID: fmt.Sprintf("a%04d", i), AuditID: rec.ID, Kind: core.KindToolCall, Agent: "agent", Server: "everything",
			Tool: "echo", Arguments: json.RawMessage(`{}`), Status: hitl.StatusPending, CreatedAt: now, Deadline: now.Add(time.Minute)}
		if err := approvals.SaveApproval(a); err != nil {
			t.Fatal(err)
		}
	}
	// A crash: the journal is not closed cleanly (Close would flush it; the
	// records also stay in the journal file, which the next start replays).
	db.Close()

	in := start(t, dir)
	expired, err := in.API.Activity.Export(core.ActivityFilter{Decision: core.DecisionExpired}, "json")
	if err != nil {
		t.Fatal(err)
	}
	var recs []core.AuditRecord
	json.Unmarshal([]byte(expired), &recs)
	if len(recs) != waiting {
		t.Fatalf("%d calls recorded as expired after the crash, want all %d", len(recs), waiting)
	}
	running, _ := in.API.Activity.List(core.ActivityFilter{Limit: 10})
	for _, r := range running {
		if r.Status == core.StatusRunning {
			t.Errorf("record %d still running after recovery", r.ID)
		}
	}
	if p, _ := in.API.Approvals.Pending(); len(p) != 0 {
		t.Errorf("%d approvals still pending", len(p))
	}
}

// After a crash, a call that a person approved and that was running when
// Airlock died is recorded as approved by them and interrupted, not as an
// error nobody decided (found by a bad-input test: the audit lost who let
// the command through).
func TestRecoveryKeepsWhoApprovedAnInterruptedCall(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	audit, err := store.OpenAuditLog(db, filepath.Join(dir, store.JournalFileName), nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	approvedRec := &core.AuditRecord{Time: now, Kind: core.KindToolCall, Agent: "agent", Server: "shell-exec", Tool: "shell_exec", Status: core.StatusRunning}
	plainRec := &core.AuditRecord{Time: now, Kind: core.KindToolCall, Agent: "agent", Server: "everything", Tool: "echo", Status: core.StatusRunning}
	// An auto-approved call, as the journal stage records it: after the
	// rules decided (an interrupted one used to lose its rule).
	allowedRec := &core.AuditRecord{Time: now, Kind: core.KindToolCall, Agent: "agent", Server: "everything", Tool: "echo", Status: core.StatusRunning,
		Decision: core.DecisionAllow, Reason: "rule r-echo allows it", RuleID: "r-echo", RuleSetVersion: 4}
	for _, r := range []*core.AuditRecord{approvedRec, plainRec, allowedRec} {
		if err := audit.Begin(r); err != nil {
			t.Fatal(err)
		}
	}
	decided := now.Add(3 * time.Second)
	a := hitl.Approval{ID: "ap1", AuditID: approvedRec.ID, Kind: core.KindToolCall, Agent: "agent", Server: "shell-exec", Tool: "shell_exec",
		Arguments: json.RawMessage(`{}`), Status: hitl.StatusApproved, DecidedBy: "ui", DecidedAt: &decided, CreatedAt: now, Deadline: now.Add(time.Minute)}
	if err := store.NewApprovals(db).SaveApproval(a); err != nil {
		t.Fatal(err)
	}
	db.Close() // a crash: the journal is replayed at the next start

	in := start(t, dir)
	got, err := in.API.Activity.Get(approvedRec.ID)
	if err != nil {
		t.Fatalf("record %d: %v", approvedRec.ID, err)
	}
	if got.Decision != core.DecisionApproved || got.Approver != "ui" || got.ErrorCode != "interrupted" || got.WaitMs != 3000 ||
		!strings.Contains(got.Error, "approved by ui and sent on") {
		t.Errorf("the approved, interrupted call is recorded as %s by %q (%s, waited %d ms): %s; want approved by ui, interrupted, 3000 ms",
			got.Decision, got.Approver, got.ErrorCode, got.WaitMs, got.Error)
	}
	other, _ := in.API.Activity.Get(plainRec.ID)
	if other.Decision != core.DecisionError || other.ErrorCode != "interrupted" || other.Approver != "" {
		t.Errorf("the other interrupted call is recorded as %s by %q (%s)", other.Decision, other.Approver, other.ErrorCode)
	}
	allowed, _ := in.API.Activity.Get(allowedRec.ID)
	if allowed.Decision != core.DecisionAllow || allowed.RuleID != "r-echo" || allowed.RuleSetVersion != 4 || allowed.ErrorCode != "interrupted" ||
		!strings.Contains(allowed.Error, "allowed by rule r-echo;") {
		t.Errorf("the auto-approved, interrupted call is recorded as %s by rule %q v%d (%s): %s; want allowed by rule r-echo v4, interrupted",
			allowed.Decision, allowed.RuleID, allowed.RuleSetVersion, allowed.ErrorCode, allowed.Error)
	}
}

// A call whose client hung up leaves the approval queue (and never runs
// if someone approves it later).
func TestHungUpClientLeavesQueue(t *testing.T) {
	in, _ := setup(t, airlock.Options{})
	// A raw client, so that the test hangs up exactly like a killed agent:
	// the connection closes with the call outstanding.
	post := func(ctx context.Context, sid, body string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", in.Info.MCPURL, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+in.Info.AgentToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		return http.DefaultClient.Do(req)
	}
	resp, err := post(context.Background(), "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	resp.Body.Close()
	if r, err := post(context.Background(), sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err == nil {
		r.Body.Close()
	}
	ctx, hangUp := context.WithCancel(context.Background())
	go func() {
		if r, err := post(ctx, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"everything__echo","arguments":{"message":"are you there?"}}}`); err == nil {
			r.Body.Close()
		}
	}()
	abandonWaitingCall(t, in, hangUp, "a client that hung up")
}

// A legacy SSE client's POSTs end at once, so only its event stream says
// it is there: when the stream ends (the client went away), its call
// waiting for approval leaves the queue and is recorded as cancelled, as
// for a Streamable HTTP client that hangs up (found by a new-user test:
// approving it later ran the tool for nobody).
func TestGoneSSEClientLeavesQueue(t *testing.T) {
	in, _ := setup(t, airlock.Options{})
	base := strings.TrimSuffix(in.Info.MCPURL, "/mcp")
	c := mcp.NewClient(&mcp.Implementation{Name: "sse-agent", Version: "1"}, nil)
	// The event stream lives as long as this context: cancelling it is the
	// client going away.
	alive, goAway := context.WithCancel(context.Background())
	defer goAway()
	sess, err := c.Connect(alive, &mcp.SSEClientTransport{Endpoint: base + "/sse",
		HTTPClient: &http.Client{Transport: bearer{in.Info.AgentToken}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	go sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "still there?"}})
	abandonWaitingCall(t, in, goAway, "an SSE client")
}

// A stdio client of the bridge that goes away (killed: its pipes close)
// takes its calls with it: the call waiting for approval leaves the queue
// and is recorded as cancelled, instead of running for nobody when someone
// approves it (found by a new-user test). A client that only closes stdin
// still gets its answers (TestBridgeOverStdio).
func TestGoneBridgeClientLeavesQueue(t *testing.T) {
	in, _ := setup(t, airlock.Options{})
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdinR.Close()
	defer stdoutW.Close()
	b := &bridge.Bridge{URL: in.Info.MCPURL, Token: in.Info.AgentToken}
	errc := make(chan error, 1)
	go func() { errc <- b.Run(context.Background(), stdinR, stdoutW) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "stdio-agent", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: stdoutR, Writer: stdinW}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	go sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "anyone?"}})
	// The client is killed: both ends of its pipes close.
	abandonWaitingCall(t, in, func() { stdoutR.Close(); stdinW.Close() }, "a bridge client")
	select {
	case <-errc:
	case <-time.After(10 * time.Second):
		t.Error("the bridge did not end when its client went away")
	}
}

// abandonWaitingCall waits until one call waits for approval, runs goAway
// (the client going away), and checks that the call then leaves the queue
// and is recorded as cancelled.
func abandonWaitingCall(t *testing.T, in *airlock.Instance, goAway func(), client string) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, func() bool {
		p, _ := in.API.Approvals.Pending()
		return len(p) == 1
	}, "the call never waited for approval")
	goAway()
	testutil.Eventually(t, 10*time.Second, func() bool {
		p, _ := in.API.Approvals.Pending()
		return len(p) == 0
	}, "the call of %s that went away stayed in the approval queue", client)
	var recs []core.AuditRecord
	testutil.Eventually(t, 10*time.Second, func() bool {
		recs, _ = in.API.Activity.List(core.ActivityFilter{Tool: "echo"})
		return len(recs) == 1 && recs[0].ErrorCode == pipeline.ECancelled
	}, "the abandoned call is not recorded as cancelled: %+v", &recs)
}
