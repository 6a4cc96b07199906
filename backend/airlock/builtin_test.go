package airlock_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/cli"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func sp(s string) *string { return &s }

// The built-in file and shell tools through a real Airlock and a real MCP
// client: off until a folder is allowed; reads and writes inside it; a
// denied command says why without asking; an ask-list command asks a person
// even where a rule auto-approves the shell; a settings change applies to
// the very next call; a timeout kills the command and its children.
func TestBuiltinToolsThroughAirlock(t *testing.T) {
	in := startWith(t, airlock.Options{DataDir: t.TempDir()})
	changed := make(chan struct{}, 10)
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	sess := connectClient(t, in, c)
	if got := names(t, sess); slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, "shell-exec__") }) {
		t.Fatalf("built-in tools are on with no folder allowed: %v", got)
	}
	work := t.TempDir()
	if _, err := in.API.Builtin.AllowPath(work); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no list_changed after a folder was allowed")
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		got := names(t, sess)
		return slices.Contains(got, "file-read__file_read") && slices.Contains(got, "file-write__file_write") && slices.Contains(got, "shell-exec__shell_exec")
	}, "the built-in tools did not appear: %v", names(t, sess))
	for _, server := range builtin.ServerIDs() {
		if _, err := in.API.Rules.Create(hitl.RuleInput{ServerID: sp(server), AutoApprove: true, Priority: 10}); err != nil {
			t.Fatal(err)
		}
	}

	res := call(t, sess, "file-write__file_write", map[string]any{"path": filepath.Join(work, "notes.txt"), "content": "hello from an agent"})
	if res.IsError {
		t.Fatalf("file_write inside the folder: %s", textOf(res))
	}
	res = call(t, sess, "file-read__file_read", map[string]any{"path": filepath.Join(work, "notes.txt")})
	if res.IsError || !strings.Contains(textOf(res), "hello from an agent") {
		t.Fatalf("file_read inside the folder: %s", textOf(res))
	}
	res = call(t, sess, "file-read__file_read", map[string]any{"path": "/etc/passwd"})
	if !res.IsError || code(res) != builtin.EPathOutsideRoots {
		t.Errorf("file_read of /etc/passwd = %q (code %q), want %s", textOf(res), code(res), builtin.EPathOutsideRoots)
	}
	res = call(t, sess, "shell-exec__shell_exec", map[string]any{"command": "echo hi", "cwd": work})
	if res.IsError || !strings.Contains(textOf(res), "hi") {
		t.Errorf("echo hi: %s", textOf(res))
	}
	res = call(t, sess, "shell-exec__shell_exec", map[string]any{"command": "rm -rf " + work, "cwd": work})
	if !res.IsError || code(res) != builtin.ECommandDenied {
		t.Errorf("rm -rf = %q (code %q), want %s", textOf(res), code(res), builtin.ECommandDenied)
	}
	if _, err := os.Stat(filepath.Join(work, "notes.txt")); err != nil {
		t.Fatalf("the refused rm -rf removed files: %v", err)
	}
	if p, _ := in.API.Approvals.Pending(); len(p) != 0 {
		t.Errorf("a denied command was asked: %+v", p)
	}

	// sudo asks a person although a rule auto-approves shell-exec.
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "shell-exec__shell_exec", Arguments: map[string]any{"command": "sudo ls", "cwd": work}})
		done <- res
	}()
	var pending []hitl.Approval
	testutil.Eventually(t, 10*time.Second, func() bool {
		pending, _ = in.API.Approvals.Pending()
		return len(pending) == 1
	}, "sudo did not raise the approval dialog")
	if pending[0].ForcedBy == "" || !strings.Contains(pending[0].Warning, "whatever the rules say") {
		t.Errorf("the approval does not say a policy forces it: %+v", pending[0])
	}
	if err := in.API.Approvals.Decline(pending[0].ID, "not on this machine"); err != nil {
		t.Fatal(err)
	}
	if res := <-done; res == nil || !res.IsError || !strings.Contains(textOf(res), "not on this machine") {
		t.Errorf("the declined sudo = %v", res)
	}

	// The settings screen changes the very next call.
	ov, _ := in.API.Builtin.Get()
	s := ov.Settings
	s.Deny = append(s.Deny, "echo")
	s.ShellTimeoutSeconds = 1
	if _, err := in.API.Builtin.Update(s); err != nil {
		t.Fatal(err)
	}
	res = call(t, sess, "shell-exec__shell_exec", map[string]any{"command": "echo hi", "cwd": work})
	if !res.IsError || code(res) != builtin.ECommandDenied {
		t.Errorf("echo after it was deny-listed = %q", textOf(res))
	}
	// A timeout kills the command and the children it started.
	res = call(t, sess, "shell-exec__shell_exec", map[string]any{"command": "sleep 300 & printf '%s\\n' $!; wait", "cwd": work})
	out := textOf(res)
	if !strings.Contains(out, `"exitCode": 124`) && !strings.Contains(out, `"exitCode":124`) {
		t.Fatalf("a command past its timeout = %s, want exit code 124", out)
	}
	var child int
	for _, f := range strings.Fields(strings.NewReplacer(`\n`, " ", `"`, " ").Replace(out)) {
		if n, err := strconv.Atoi(f); err == nil && n > 1 && n != 124 {
			child = n
		}
	}
	if child == 0 {
		t.Fatalf("no child pid in %s", out)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return syscall.Kill(child, 0) == syscall.ESRCH },
		"the child %d of a timed-out command is still alive", child)
	recs, _ := in.API.Activity.List(core.ActivityFilter{Server: builtin.ServerShellExec})
	if len(recs) < 4 {
		t.Errorf("Activity has %d shell records, want every call", len(recs))
	}
}

func connectClient(t *testing.T, in *airlock.Instance, c *mcp.Client) *mcp.ClientSession {
	t.Helper()
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: in.Info.MCPURL, HTTPClient: &http.Client{Transport: bearer{in.Info.AgentToken}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

// `airlock builtin allow-path|remove-path` beside a running Airlock given a
// folder with --allow-path: a removal says the tools stay on because of
// that folder, and a removal of that folder says where it comes from.
func TestBuiltinPathCLIBesideAllowPath(t *testing.T) {
	dataDir, cmdLine, stored := t.TempDir(), t.TempDir(), t.TempDir()
	startWith(t, airlock.Options{DataDir: dataDir, AllowPaths: []string{cmdLine}})
	db, err := store.Open(filepath.Join(dataDir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	run := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := cli.RunBuiltin(context.Background(), db, args, &out, &errOut)
		return out.String(), err
	}
	if out, err := run("allow-path", stored); err != nil || !strings.Contains(out, "built-in tools are on") {
		t.Fatalf("allow-path: %v\n%s", err, out)
	}
	if out, err := run("remove-path", stored); err != nil || !strings.Contains(out, "built-in tools are on") || !strings.Contains(out, cmdLine) {
		t.Errorf("remove-path of the stored folder: %v\n%s\nwant: tools still on, because of %s", err, out, cmdLine)
	}
	_, err = run("remove-path", cmdLine)
	if core.ErrorCode(err) != core.EInvalid || !strings.Contains(err.Error(), "--allow-path") {
		t.Errorf("remove-path of the command line's folder: %v, want invalid, saying it came with --allow-path", err)
	}
}
