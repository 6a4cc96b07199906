package builtin_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
)

// fixture is a Builtin over a real database whose allowed folder sits next
// to a folder it must never reach:
//
//	base/root/      the allowed folder
//	base/outside/   secret.txt holding secret
type fixture struct {
	b       *builtin.Builtin
	db      *store.DB
	base    string
	root    string
	outside string
	secret  string // the secret file's content
}

const secretMarker = "TOP-SECRET-OUTSIDE-THE-ROOT"

// testEnviron is Airlock's environment as the shell tests see it: what a
// command needs, plus secrets that must never reach it.
func testEnviron() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=/nonexistent-home",
		"LANG=C.UTF-8",
		"AIRLOCK_TOKEN=airlock-secret-token",
		"GITHUB_TOKEN=ghp_not_for_commands",
		"LD_PRELOAD=/nonexistent/evil.so",
		"BASH_ENV=/nonexistent/evil.sh",
		"BASH_FUNC_ls%%=() { echo hijacked; }",
	}
}

func newFixture(tb testing.TB, edit ...func(*builtin.Settings)) *fixture {
	tb.Helper()
	base := tb.TempDir()
	f := &fixture{base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside"), secret: secretMarker}
	for _, d := range []string{f.root, f.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	mustWrite(tb, filepath.Join(f.outside, "secret.txt"), secretMarker)
	mustWrite(tb, filepath.Join(f.root, "inside.txt"), "INSIDE")
	db, err := store.Open(filepath.Join(base, store.FileName))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	f.db = db
	b, err := builtin.New(builtin.Options{Store: db, Environ: testEnviron})
	if err != nil {
		tb.Fatal(err)
	}
	s := b.Settings()
	s.Roots = []string{f.root}
	for _, e := range edit {
		e(&s)
	}
	if _, err := b.Update(s); err != nil {
		tb.Fatal(err)
	}
	f.b = b
	return f
}

func mustWrite(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func mustSymlink(tb testing.TB, target, link string) {
	tb.Helper()
	if err := os.Symlink(target, link); err != nil {
		tb.Fatal(err)
	}
}

// jsonArgs encodes tool arguments as a request carries them.
func jsonArgs(tb testing.TB, args any) json.RawMessage {
	tb.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// code returns the *core.Error code of err ("" for nil).
func code(err error) string { return core.ErrorCode(err) }

// connect connects a real MCP client to srv over in-memory transports.
func connect(tb testing.TB, srv *mcp.Server) *mcp.ClientSession {
	tb.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "builtin-test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// call calls a tool and decodes its structured content into out (when the
// call succeeded). It returns the result and, for a tool error, its code.
func call(tb testing.TB, cs *mcp.ClientSession, tool string, args any, out any) (*mcp.CallToolResult, string) {
	tb.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		tb.Fatalf("CallTool %s: protocol error %v", tool, err)
	}
	if res.IsError {
		return res, toolErrorCode(res)
	}
	if out != nil {
		data, err := json.Marshal(res.StructuredContent)
		if err != nil {
			tb.Fatal(err)
		}
		if err := json.Unmarshal(data, out); err != nil {
			tb.Fatalf("structured content %s: %v", data, err)
		}
	}
	return res, ""
}

// toolErrorCode is the code Airlock put in a tool error's _meta, or "sdk"
// when the SDK refused the call before the handler ran.
func toolErrorCode(res *mcp.CallToolResult) string {
	if e, ok := res.Meta["airlock/error"].(map[string]any); ok {
		if c, ok := e["code"].(string); ok {
			return c
		}
	}
	return "sdk"
}

func firstText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

// dead reports whether pid no longer runs (gone, or a zombie its new
// parent has not reaped yet).
func dead(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return false
}

// waitDead polls until every pid is dead, failing after a generous deadline.
func waitDead(tb testing.TB, pids ...int) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var alive []int
		for _, pid := range pids {
			if !dead(pid) {
				alive = append(alive, pid)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("processes %v still alive", alive)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// snapshot lists every file under dir with its content, to prove that
// nothing outside the allowed folder changed.
func snapshot(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			out[p] = "-> " + target
			return nil
		}
		if d.IsDir() {
			out[p+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[p] = string(data)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}
