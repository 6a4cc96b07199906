package airlock_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/bridge"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// overBridge connects a real MCP client to endpoint through a bridge it
// speaks stdio to (pipes), and returns its session and the bridge's end.
func overBridge(t *testing.T, endpoint, token string, patience time.Duration, o *mcp.ClientOptions) (*mcp.ClientSession, <-chan error) {
	t.Helper()
	clientToBridge, bridgeIn := io.Pipe()
	bridgeOut, bridgeToClient := io.Pipe()
	t.Cleanup(func() { bridgeIn.Close() })
	b := &bridge.Bridge{URL: endpoint, Token: token, Patience: patience}
	errc := make(chan error, 1)
	go func() { errc <- b.Run(context.Background(), clientToBridge, bridgeToClient); bridgeToClient.Close() }()
	c := mcp.NewClient(&mcp.Implementation{Name: "stdio-agent", Version: "1"}, o)
	sess, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: bridgeOut, Writer: bridgeIn}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess, errc
}

// bridgeEnd waits for the bridge to end and returns why.
func bridgeEnd(t *testing.T, errc <-chan error, within time.Duration) error {
	t.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(within):
		t.Fatalf("the bridge kept running %s on", within)
		return nil
	}
}

// lastSession is the session of the last call Airlock recorded.
func lastSession(t *testing.T, in *airlock.Instance) string {
	t.Helper()
	recs, _ := in.API.Activity.List(core.ActivityFilter{Server: "everything", Limit: 1})
	if len(recs) != 1 || recs[0].Session == "" {
		t.Fatalf("recorded calls: %+v, want one with its session", recs)
	}
	return recs[0].Session
}

// A stdio client keeps Airlock across Airlock's restarts: the bridge keeps
// its session, reaches the new Airlock on its own, and the client's calls
// and notifications carry on (the bridge ended, and Claude Desktop does
// not start a server that ended again: found by a new-user test).
func TestBridgeCarriesOnAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	in := startWith(t, airlock.Options{DataDir: dir, InProcess: everythingOnly()})
	allowAll(t, in)
	u, _ := url.Parse(in.Info.MCPURL)
	changed := make(chan struct{}, 100)
	sess, errc := overBridge(t, in.Info.MCPURL, in.Info.AgentToken, time.Minute, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	waitTool(t, sess, "everything__echo")
	if res := echo(t, sess, "before"); res.IsError {
		t.Fatalf("echo before the restart: %s", textOf(res))
	}
	sid := lastSession(t, in)
	in.Close()
	for len(changed) > 0 {
		<-changed
	}

	in2 := startAt(t, u.Host, airlock.Options{DataDir: dir, InProcess: everythingOnly()})
	// The bridge comes back by itself, before its client asks anything.
	testutil.Eventually(t, 20*time.Second, func() bool { return in2.Sessions() == 1 }, "the bridge did not carry its session on")
	// It tells its client that its lists may have changed meanwhile, as
	// Airlock tells a client that comes back itself.
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Error("no tools/list_changed after the restart")
	}
	if res := echo(t, sess, "after the restart"); res.IsError || !strings.Contains(textOf(res), "after the restart") {
		t.Fatalf("echo after the restart = %q", textOf(res))
	}
	if got := lastSession(t, in2); got != sid {
		t.Errorf("the call after the restart ran on session %s, want the bridge's own %s", got, sid)
	}
	// Its event stream is open again: what Airlock sends outside any
	// request reaches the client (a suspension tells it its tools changed).
	for len(changed) > 0 {
		<-changed
	}
	testutil.Eventually(t, 20*time.Second, func() bool {
		if _, err := in2.API.Agents.Suspend("default"); err != nil {
			t.Fatal(err)
		}
		if _, err := in2.API.Agents.Resume("default"); err != nil {
			t.Fatal(err)
		}
		return len(changed) > 0
	}, "no notification reached the client after the restart: the event stream is not open again")
	// And a second restart is as good as the first.
	in2.Close()
	in3 := startAt(t, u.Host, airlock.Options{DataDir: dir, InProcess: everythingOnly()})
	// (A call sent at the very moment Airlock stops may go out on a
	// connection it has just closed, and is then answered as having maybe
	// run: the bridge cannot tell it from one cut off while running.)
	testutil.Eventually(t, 20*time.Second, func() bool { return in3.Sessions() == 1 }, "the bridge did not carry its session on a second time")
	if res := echo(t, sess, "after two"); res.IsError {
		t.Fatalf("echo after a second restart = %q", textOf(res))
	}
	if got := lastSession(t, in3); got != sid {
		t.Errorf("the call after a second restart ran on session %s, want %s", got, sid)
	}
	sess.Close()
	if err := bridgeEnd(t, errc, 10*time.Second); err != nil {
		t.Errorf("the bridge ended with %v when its client closed", err)
	}
}

// relay is a TCP relay in front of Airlock that can go down and come back
// on the same address: to the bridge, an Airlock killed and started
// again. Going down cuts the connections in the middle of what they carry.
type relay struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
}

func newRelay(t *testing.T, target string) *relay {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{addr: ln.Addr().String(), target: target}
	r.serve(ln)
	t.Cleanup(r.down)
	return r
}

func (r *relay) serve(ln net.Listener) {
	r.mu.Lock()
	r.ln = ln
	r.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", r.target)
			if err != nil {
				c.Close()
				continue
			}
			r.mu.Lock()
			r.conns = append(r.conns, c, up)
			r.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
}

// down refuses new connections and cuts those open.
func (r *relay) down() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ln != nil {
		r.ln.Close()
		r.ln = nil
	}
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}

func (r *relay) up(t *testing.T) {
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		t.Fatal(err)
	}
	r.serve(ln)
}

// A call that was running when the connection to Airlock broke is not
// sent again (it may have had effects): its client is told it may have
// run, with the reason code shutting_down. A call made while Airlock is
// away waits for it, and runs once it is back.
func TestBridgeCallCutOffByAirlockGoingAway(t *testing.T) {
	everything := testutil.NewTestServer()
	in := startWith(t, airlock.Options{DataDir: t.TempDir(), InProcess: map[string]*mcp.Server{"everything": everything.Server}})
	allowAll(t, in)
	r := newRelay(t, strings.TrimSuffix(strings.TrimPrefix(in.Info.MCPURL, "http://"), "/mcp"))
	sess, errc := overBridge(t, "http://"+r.addr+"/mcp", in.Info.AgentToken, time.Minute, nil)
	waitTool(t, sess, "everything__hang")

	running := callAsync(sess, &mcp.CallToolParams{Name: "everything__hang"})
	testutil.Eventually(t, 10*time.Second, func() bool { return len(everything.Started()) == 1 }, "the call never reached the tool")
	r.down()
	res := result(t, running)
	if !res.IsError || !strings.Contains(textOf(res), "may have run") || !strings.Contains(textOf(res), "["+core.EShuttingDown+"]") {
		t.Errorf("the cut-off call's result = %q, want a tool error saying it may have run, code %s", textOf(res), core.EShuttingDown)
	}
	if e, _ := res.Meta["airlock/error"].(map[string]any); e["code"] != core.EShuttingDown {
		t.Errorf("the result's airlock/error = %v, want code %s", res.Meta["airlock/error"], core.EShuttingDown)
	}

	waiting := callAsync(sess, echoParams("while away"))
	list := make(chan error, 1)
	go func() { _, err := sess.ListTools(context.Background(), nil); list <- err }()
	r.up(t)
	if res := result(t, waiting); res.IsError || !strings.Contains(textOf(res), "while away") {
		t.Errorf("the call made while Airlock was away = %q, want it run once Airlock is back", textOf(res))
	}
	if err := <-list; err != nil {
		t.Errorf("tools/list made while Airlock was away: %v", err)
	}
	if got := everything.Started(); len(got) != 2 {
		t.Errorf("the tool ran %v, want the cut-off call once and the waiting one once", got)
	}
	select {
	case err := <-errc:
		t.Fatalf("the bridge ended: %v", err)
	default:
	}
}

// When Airlock does not come back in time, requests waiting for it are
// answered with the reason and the bridge ends, saying so, so that its
// client sees its server end rather than a silent hang.
func TestBridgeGivesUpWhenAirlockStaysAway(t *testing.T) {
	const patience = 2 * time.Second
	in := startWith(t, airlock.Options{DataDir: t.TempDir()})
	sess, errc := overBridge(t, in.Info.MCPURL, in.Info.AgentToken, patience, nil)
	if _, err := sess.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	in.Close()
	_, err := sess.ListTools(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "went away") || !strings.Contains(err.Error(), "["+core.EUnavailable+"]") {
		t.Errorf("tools/list while Airlock stays away: %v, want an error with code %s saying Airlock went away", err, core.EUnavailable)
	}
	err = bridgeEnd(t, errc, patience+15*time.Second)
	if core.ErrorCode(err) != core.EUnavailable || !strings.Contains(err.Error(), "went away") {
		t.Fatalf("bridge ended with %v, want %s saying Airlock went away", err, core.EUnavailable)
	}
	if waited := time.Since(stopped); waited < patience {
		t.Errorf("the bridge gave up after %s, before its patience (%s) was over", waited, patience)
	}
}

// A session Airlock no longer knows cannot be carried on, and a stdio
// client cannot be told to open another: the bridge says so and ends.
func TestBridgeEndsWhenItsSessionIsForgotten(t *testing.T) {
	in := startWith(t, airlock.Options{DataDir: t.TempDir(), InProcess: everythingOnly()})
	allowAll(t, in)
	sess, errc := overBridge(t, in.Info.MCPURL, in.Info.AgentToken, time.Minute, nil)
	waitTool(t, sess, "everything__echo")
	echo(t, sess, "before")
	sid := lastSession(t, in)
	// Ended behind its back (as an Airlock that does not keep it would).
	if got := send(t, "DELETE", in.Info.MCPURL, in.Info.AgentToken, sid, ""); got/100 != 2 {
		t.Fatalf("DELETE of the session = HTTP %d", got)
	}
	err := bridgeEnd(t, errc, 20*time.Second)
	if core.ErrorCode(err) != core.ENotFound || !strings.Contains(err.Error(), "no longer knows this MCP session") {
		t.Fatalf("bridge ended with %v, want %s saying the session is no longer known", err, core.ENotFound)
	}
	var e *core.Error
	if b, _ := json.Marshal(err); json.Unmarshal(b, &e) != nil || e.Hint == "" {
		t.Errorf("the bridge's error %v has no hint saying what to do", err)
	}
}
