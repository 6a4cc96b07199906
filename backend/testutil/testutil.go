// Package testutil holds helpers for Airlock's tests: a temp database, real
// third-party MCP servers from npm as downstream servers, and a recording
// event sink. Only tests import it.
package testutil

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
)

// RepoRoot returns the repository root (the directory holding go.mod).
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func npmServer(tb testing.TB, pkg, entry string) string {
	tb.Helper()
	p := filepath.Join(RepoRoot(tb), "backend", "testutil", "mcpservers", "node_modules", "@modelcontextprotocol", pkg, "dist", entry)
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("npm MCP server %s is not installed (%v): run `go tool task deps:npm`", pkg, err)
	}
	return p
}

// Node returns the path of node, failing the test when it is missing.
func Node(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		tb.Fatalf("node is required for the downstream MCP servers: %v", err)
	}
	return p
}

// EverythingServer is @modelcontextprotocol/server-everything over stdio.
func EverythingServer(tb testing.TB, id string) core.ServerConfig {
	return core.ServerConfig{ID: id, Command: Node(tb), Args: []string{npmServer(tb, "server-everything", "index.js"), "stdio"}}
}

// FilesystemServer is @modelcontextprotocol/server-filesystem over stdio,
// confined to dir.
func FilesystemServer(tb testing.TB, id, dir string) core.ServerConfig {
	return core.ServerConfig{ID: id, Command: Node(tb), Args: []string{npmServer(tb, "server-filesystem", "index.js"), dir}}
}

// MustOpenDB opens a fresh SQLite database in a temp dir, closed at cleanup.
func MustOpenDB(tb testing.TB) *store.DB {
	tb.Helper()
	db, err := store.Open(filepath.Join(tb.TempDir(), store.FileName))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// Event is one recorded event.
type Event struct {
	Name    string
	Payload any
}

// Recorder is a core.EventSink that keeps every event.
type Recorder struct {
	mu     sync.Mutex
	events []Event
}

var _ core.EventSink = (*Recorder)(nil)

// Emit records the event.
func (r *Recorder) Emit(name string, payload any) {
	r.mu.Lock()
	r.events = append(r.events, Event{name, payload})
	r.mu.Unlock()
}

// Events returns the events named name, in order.
func (r *Recorder) Events(name string) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, e := range r.events {
		if e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// Eventually polls cond every 20 ms until it holds or timeout passes, then
// fails with msg. It waits for asynchronous effects; it asserts no speed.
func Eventually(tb testing.TB, timeout time.Duration, cond func() bool, msg string, args ...any) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("gave up after %s: "+msg, append([]any{timeout}, args...)...)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// EverythingHTTP starts @modelcontextprotocol/server-everything as an HTTP
// server ("streamableHttp" or "sse") on a free loopback port, stopped at
// cleanup, and returns its base URL once it accepts connections.
func EverythingHTTP(tb testing.TB, transport string) string {
	tb.Helper()
	url, _ := EverythingHTTPProcess(tb, transport, 0)
	return url
}

// EverythingHTTPProcess is EverythingHTTP on the given port (0: a free one)
// that also returns the process, for tests that kill it.
func EverythingHTTPProcess(tb testing.TB, transport string, port int) (string, *os.Process) {
	tb.Helper()
	if port == 0 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		port = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	cmd := exec.Command(Node(tb), npmServer(tb, "server-everything", "index.js"), transport)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	Eventually(tb, 30*time.Second, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, "server-everything (%s) never listened on %s", transport, addr)
	return "http://" + addr, cmd.Process
}
