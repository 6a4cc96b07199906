package airlock_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
	// Never outlive the test that started it.
	time.AfterFunc(60*time.Second, func() { os.Exit(0) })
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	send := func(v any) {
		b, _ := json.Marshal(v)
		os.Stdout.Write(append(b, '\n'))
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
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{
				"protocolVersion": m.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "hung", "version": "1"}}})
		case m.Method == "tools/list":
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"tools": []any{
				map[string]any{"name": "hang", "inputSchema": map[string]any{"type": "object"}},
				map[string]any{"name": "ok", "inputSchema": map[string]any{"type": "object"}},
			}}})
		case m.Method == "tools/call" && m.Params.Name == "hang":
			os.WriteFile(os.Getenv(hungServerEnv), nil, 0o600)
			select {} // never reads stdin again, never answers
		case m.Method == "tools/call":
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{
				"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("ok %d", len(line))}}}})
		case len(m.ID) > 0:
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{}})
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
	dir := t.TempDir()
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"hung": map[string]any{"command": os.Args[0], "args": []string{"-test.run=^$"}, "callTimeout": 3},
	}})
	if err := os.WriteFile(filepath.Join(dir, "servers.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := airlock.Start(context.Background(), airlock.Options{DataDir: dir, Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
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
