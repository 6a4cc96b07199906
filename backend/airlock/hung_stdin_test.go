package airlock_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hungServerEnv makes this test binary a stdio MCP server that stops
// reading its stdin (and never answers) once its tool "hang" is called: a
// hung server, as a real one is when it blocks its event loop. It creates
// the file the variable names when it stops.
const hungServerEnv = "AIRLOCK_TEST_HUNG_SERVER"

func init() {
	if os.Getenv(hungServerEnv) == "" {
		return
	}
	serveTestStdio("hung", []string{"hang", "ok"}, func(id json.RawMessage, tool string, line []byte) string {
		if tool == "hang" {
			os.WriteFile(os.Getenv(hungServerEnv), nil, 0o600)
			select {} // never reads stdin again, never answers
		}
		return fmt.Sprintf("ok %d", len(line))
	})
}

// serveTestStdio makes this test binary a stdio MCP server named name with
// tools: it answers initialize, tools/list and any other request, and a
// tools/call with the text call returns, while it reads nothing more (call
// may block it). It exits at the end of its input, or after a minute.
func serveTestStdio(name string, tools []string, call func(id json.RawMessage, tool string, line []byte) string) {
	time.AfterFunc(60*time.Second, func() { os.Exit(0) }) // never outlive the test
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	send := func(id json.RawMessage, result any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
		os.Stdout.Write(append(b, '\n'))
	}
	var list []any
	for _, t := range tools {
		list = append(list, map[string]any{"name": t, "inputSchema": map[string]any{"type": "object"}})
	}
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			os.Exit(0)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
				Name            string `json:"name"`
			} `json:"params"`
		}
		json.Unmarshal(line, &m)
		switch {
		case m.Method == "initialize":
			send(m.ID, map[string]any{"protocolVersion": m.Params.ProtocolVersion,
				"capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": name, "version": "1"}})
		case m.Method == "tools/list":
			send(m.ID, map[string]any{"tools": list})
		case m.Method == "tools/call":
			send(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": call(m.ID, m.Params.Name, line)}}})
		case len(m.ID) > 0:
			send(m.ID, map[string]any{})
		}
	}
}

// A stdio server that stops reading its stdin (hung) does not hang
// Airlock: a call whose request cannot be written (larger than the pipe's
// buffer) ends soon after the server's call timeout, the server is
// restarted and answers again, and Airlock stops within its bounds.
//
// Found by an interop test: after a server stopped reading, a tool call
// with a 1 MiB argument never returned (call timeout 20 s), `airlock
// servers restart` left the old process running, and `airlock serve`
// never exited on SIGINT ("Airlock stopping" for minutes). The write to
// the child's stdin (mcp.ioConn.Write, under its write mutex) took no
// notice of the call's context, and ClientSession.Close waited for that
// write before the pipe was closed.
func TestHungStdinServerDoesNotHangAirlock(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "hung")
	t.Setenv(hungServerEnv, marker)
	in := startWithTestServer(t, "hung", 3)
	stopping := false
	t.Cleanup(func() {
		if !stopping {
			go in.Close() // may never return: do not hold the test up
		}
	})
	allowAll(t, in)
	sess := connect(t, in)
	waitTool(t, sess, "hung__ok")

	// The server stops reading.
	hang := callAsync(sess, &mcp.CallToolParams{Name: "hung__hang", Arguments: map[string]any{}})
	testutil.Eventually(t, 10*time.Second, func() bool { _, err := os.Stat(marker); return err == nil }, "the server never got the call that hangs it")
	// A request larger than the pipe's buffer cannot be written now.
	big := callAsync(sess, &mcp.CallToolParams{Name: "hung__ok", Arguments: map[string]any{"s": strings.Repeat("z", 1<<20)}})
	for name, ch := range map[string]<-chan *mcp.CallToolResult{"hang": hang, "big": big} {
		select {
		case res := <-ch:
			if !res.IsError {
				t.Errorf("call %s = %q, want an error", name, textOf(res))
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("call %s did not end within 30s although the server's call timeout is 3s", name)
		}
	}
	// The server is taken as hung, restarted, and answers again.
	testutil.Eventually(t, 30*time.Second, func() bool {
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "hung__ok", Arguments: map[string]any{"s": "again"}})
		return err == nil && !res.IsError && strings.HasPrefix(textOf(res), "ok ")
	}, "the hung server never answered again")
	var srv core.ServerStatus
	views, _ := in.API.Servers.List()
	for _, v := range views {
		if v.Config.ID == "hung" {
			srv = v.Status
		}
	}
	if srv.Restarts == 0 || !slices.ContainsFunc(srv.StderrTail, func(l string) bool { return strings.Contains(l, "stopped reading its input") }) {
		t.Errorf("the server's status after it hung: %d restarts, its lines %q; want a restart and the reason among its lines", srv.Restarts, srv.StderrTail)
	}

	// Hung again, then Airlock stops: within its bounds.
	os.Remove(marker)
	callAsync(sess, &mcp.CallToolParams{Name: "hung__hang", Arguments: map[string]any{}})
	testutil.Eventually(t, 10*time.Second, func() bool { _, err := os.Stat(marker); return err == nil }, "the server never got the second call that hangs it")
	callAsync(sess, &mcp.CallToolParams{Name: "hung__ok", Arguments: map[string]any{"s": strings.Repeat("z", 1<<20)}})
	stopping = true
	done := closeAsync(in)
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("Airlock did not stop within 60s with a server that stopped reading its stdin")
	}
}

// busyServerEnv makes this test binary a stdio MCP server that is busy, not
// hung, in its tool "slow": it stops reading its stdin, as a server does
// with a long synchronous call, and then reads again and answers every
// request it got. The variable is the address of the test's control
// connection: when "slow" starts the server connects to it (the test
// accepts: the server is busy), waits for a line from the test (so that it
// is still busy when the test has set up the race it needs), works for
// busyServerWork more, then writes "resumed" on it and answers.
const busyServerEnv = "AIRLOCK_TEST_BUSY_SERVER"

// busyServerWork is how long the busy server goes on without reading after
// the test's go-ahead: the behaviour under test, a server busy for longer
// than the one second that once sufficed for Airlock to take a server as
// hung, and much shorter than its call timeout.
const busyServerWork = 2 * time.Second

func init() {
	addr := os.Getenv(busyServerEnv)
	if addr == "" {
		return
	}
	serveTestStdio("busy", []string{"slow", "ok"}, func(_ json.RawMessage, tool string, line []byte) string {
		if tool != "slow" {
			return fmt.Sprintf("ok %d (pid %d)", len(line), os.Getpid())
		}
		// Busy: stdin is not read until this call is done.
		control, err := net.Dial("tcp", addr)
		if err != nil {
			return "no control connection: " + err.Error()
		}
		defer control.Close()
		bufio.NewReader(control).ReadString('\n') // the go-ahead
		work := time.NewTimer(busyServerWork)     // the work itself
		<-work.C
		fmt.Fprintln(control, "resumed")
		return fmt.Sprintf("slow done (pid %d)", os.Getpid())
	})
}

// startWithTestServer starts Airlock with one stdio server, id: this test
// binary as a server (an init above makes it one, from its environment),
// with a call timeout of callTimeout seconds.
func startWithTestServer(t *testing.T, id string, callTimeout int) *airlock.Instance {
	t.Helper()
	dir := t.TempDir()
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		id: map[string]any{"command": os.Args[0], "args": []string{"-test.run=^$"}, "callTimeout": callTimeout},
	}})
	if err := os.WriteFile(filepath.Join(dir, "servers.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := airlock.Start(context.Background(), airlock.Options{DataDir: dir, Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// goroutines are the stacks of this process's goroutines, one each,
// beginning "goroutine ID [state]:".
func goroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	return strings.Split(string(buf), "\n\n")
}

// stdinWrite is a write under way to a stdio server's stdin: to which
// connection (the receiver's address), and whether it is blocked in the
// pipe write.
type stdinWrite struct {
	conn    string
	blocked bool
}

// stdinWrites returns the writes under way to stdio servers' stdin
// (catalog's stdioConn.Write), found among this process's goroutines, by
// goroutine id. Nothing else shows that Airlock's write to a child's stdin
// is blocked.
func stdinWrites() map[string]stdinWrite {
	const frame = "backend/catalog.(*stdioConn).Write("
	out := map[string]stdinWrite{}
	for _, g := range goroutines() {
		i := strings.Index(g, frame)
		if i < 0 {
			continue
		}
		id := strings.Fields(g)[1] // "goroutine 123 [syscall]:"
		recv, _, _ := strings.Cut(g[i+len(frame):], ",")
		out[id] = stdinWrite{conn: recv, blocked: strings.Contains(g, "os.(*File).Write(")}
	}
	return out
}

// A stdio server that is only busy (it stops reading its stdin during a
// long synchronous call, then reads again) is left alone: a call whose
// request could not be written meanwhile, cancelled while its write is
// blocked, does not get the server taken as hung as long as the server
// reads again within its call timeout. The busy call gets its answer, the
// server is not restarted, and it answers later calls.
//
// Found in a review: Airlock took a server as hung one second after such a
// request ended, closing its stdin under it and restarting it; the window
// is now the server's call timeout (catalog's stdioConn.stuck). With the
// one-second window this test fails: the later call finds the server
// restarting (the busy call itself still gets its answer here, since this
// server answers before it reads its closed stdin; a server that reads
// first would lose it).
func TestBusyStdinServerIsNotTakenAsHung(t *testing.T) {
	control, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer control.Close()
	t.Setenv(busyServerEnv, control.Addr().String())
	in := startWithTestServer(t, "busy", 20)
	t.Cleanup(func() {
		select {
		case <-closeAsync(in):
		case <-time.After(30 * time.Second):
			t.Errorf("Airlock did not stop within 30s")
		}
	})
	allowAll(t, in)
	sess := connect(t, in)
	waitTool(t, sess, "busy__ok")
	status := func() core.ServerStatus { return serverStatus(t, in, "busy") }
	before := status()
	if before.State != core.StateRunning || before.PID == 0 {
		t.Fatalf("the server before the test: state %q, pid %d", before.State, before.PID)
	}

	// The server gets busy.
	slow := callAsync(sess, &mcp.CallToolParams{Name: "busy__slow", Arguments: map[string]any{}})
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := control.Accept(); err == nil {
			accepted <- c
		}
	}()
	var busy net.Conn
	select {
	case busy = <-accepted:
		defer busy.Close() // a failed test does not leave the server busy
	case <-time.After(30 * time.Second):
		t.Fatal("the server never got the slow call")
	}
	// Writes under way now are not the large request's: another test's
	// Airlock may still be ending one to its own hung server (found by CI:
	// that write was taken for this one, and ended while this server was
	// busy), and the slow call's own write may not have returned yet. They
	// are told apart by goroutine: each request writes on its own (found
	// under load: excluding the slow call's connection excluded this one).
	stale := stdinWrites()
	// A request larger than the pipe's buffer cannot be written meanwhile.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	big := make(chan error, 1)
	go func() {
		_, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "busy__ok", Arguments: map[string]any{"s": strings.Repeat("z", 1<<20)}})
		big <- err
	}()
	var writer string
	var held stdinWrite
	testutil.Eventually(t, 30*time.Second, func() bool {
		for g, w := range stdinWrites() {
			if _, old := stale[g]; w.blocked && !old {
				writer, held = g, w
				return true
			}
		}
		return false
	}, "the large request's write to the busy server's stdin never blocked")
	// Its call is cancelled while that write is blocked (the server reads
	// nothing until its go-ahead); Airlock ends its request on the agent's
	// notifications/cancelled, within milliseconds.
	cancel()
	if err := <-big; err == nil {
		t.Errorf("the cancelled call returned no error")
	}
	if stdinWrites()[writer] != held {
		t.Fatalf("the large request's write ended while the server was busy")
	}
	// The server goes on for busyServerWork (over the one second that once
	// sufficed), then reads again.
	if _, err := fmt.Fprintln(busy, "go"); err != nil {
		t.Fatal(err)
	}
	resumed := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(busy).ReadString('\n')
		resumed <- line
	}()

	select {
	case res := <-slow:
		if res.IsError || !strings.HasPrefix(textOf(res), "slow done") {
			t.Errorf("the busy call = %q (error %v), want the server's answer", textOf(res), res.IsError)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the busy call did not end within 30s")
	}
	select {
	case line := <-resumed:
		if line != "resumed\n" {
			t.Errorf("the busy server said %q after its work, want resumed", line)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("the busy server never said it resumed")
	}
	// The write it held ends; the server is neither taken as hung nor
	// restarted, and answers.
	testutil.Eventually(t, 10*time.Second, func() bool { return stdinWrites()[writer].conn != held.conn }, "the large request's write to the busy server's stdin never ended")
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "busy__ok", Arguments: map[string]any{"s": "later"}})
	if err != nil {
		t.Errorf("a later call: %v", err)
	} else if res.IsError || !strings.HasPrefix(textOf(res), "ok ") {
		t.Errorf("a later call = %q (error %v), want the server's answer", textOf(res), res.IsError)
	} else if want := fmt.Sprintf("(pid %d)", before.PID); !strings.HasSuffix(textOf(res), want) {
		t.Errorf("a later call was answered by %q, want the first process %s", textOf(res), want)
	}
	after := status()
	if after.State != core.StateRunning || after.PID != before.PID || after.Restarts != before.Restarts ||
		slices.ContainsFunc(after.StderrTail, func(l string) bool { return strings.Contains(l, "stopped reading its input") }) {
		t.Errorf("the busy server after its call: state %q, pid %d (was %d), %d restarts (was %d), its lines %q; want it running, not restarted, not taken as hung",
			after.State, after.PID, before.PID, after.Restarts, before.Restarts, after.StderrTail)
	}
}
