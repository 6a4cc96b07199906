package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
)

func toolReq(server, tool string, args json.RawMessage) *core.Request {
	return &core.Request{Kind: core.KindToolCall, Server: server, Name: tool, Exposed: server + "__" + tool, Args: args}
}

func TestCheck(t *testing.T) {
	f := newFixture(t)
	mustWrite(t, filepath.Join(f.root, "exists.txt"), "x")
	mustSymlink(t, "exists.txt", filepath.Join(f.root, "link.txt"))
	mustSymlink(t, f.outside, filepath.Join(f.root, "out"))
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	read, write, shell := builtin.ServerFileRead, builtin.ServerFileWrite, builtin.ServerShellExec
	tests := []struct {
		name    string
		req     *core.Request
		outcome string
		code    string
		reason  string // a part of the reason
	}{
		{"another server", toolReq("github", "create_issue", raw(`{"x":1}`)), core.Allow, "", ""},
		{"not a tool call", &core.Request{Kind: core.KindResourceRead, Server: read, Name: "file:///etc/passwd"}, core.Allow, "", ""},
		{"read inside", toolReq(read, "file_read", raw(`{"path":"exists.txt"}`)), core.Allow, "", ""},
		{"read outside", toolReq(read, "file_read", raw(`{"path":"../outside/secret.txt"}`)), core.Deny, builtin.EPathOutsideRoots, "climbs out"},
		{"read through a link out", toolReq(read, "file_read", raw(`{"path":"out/secret.txt"}`)), core.Deny, builtin.EPathOutsideRoots, "absolute path"},
		{"read missing path", toolReq(read, "file_read", raw(`{}`)), core.Deny, builtin.EInvalidArguments, `missing argument "path"`},
		{"read extra argument", toolReq(read, "file_read", raw(`{"path":"exists.txt","mode":"r"}`)), core.Deny, builtin.EInvalidArguments, `unknown argument "mode"`},
		{"read ill-typed", toolReq(read, "file_read", raw(`{"path":5}`)), core.Deny, builtin.EInvalidArguments, `"path" must be a string, got a number`},
		{"read not an object", toolReq(read, "file_read", raw(`["exists.txt"]`)), core.Deny, builtin.EInvalidArguments, "JSON object"},
		{"read invalid UTF-8", toolReq(read, "file_read", raw("{\"path\":\"\xff\"}")), core.Deny, builtin.EInvalidArguments, "UTF-8"},
		{"unknown tool", toolReq(read, "file_delete", raw(`{"path":"x"}`)), core.Deny, builtin.EInvalidArguments, "has no tool"},
		{"write new file in new folders", toolReq(write, "file_write", raw(`{"path":"a/b/c.txt","content":"x"}`)), core.Allow, "", ""},
		{"write existing", toolReq(write, "file_write", raw(`{"path":"exists.txt","content":"x"}`)), core.Deny, builtin.EFileExists, "already exists"},
		{"overwrite existing", toolReq(write, "file_write", raw(`{"path":"exists.txt","content":"x","overwrite":true}`)), core.Allow, "", ""},
		{"write through a link", toolReq(write, "file_write", raw(`{"path":"link.txt","content":"x","overwrite":true}`)), core.Deny, builtin.ESymlinkTarget, "symbolic link"},
		{"write under a link out", toolReq(write, "file_write", raw(`{"path":"out/new/x.txt","content":"x"}`)), core.Deny, builtin.EPathOutsideRoots, "outside"},
		{"write executable", toolReq(write, "file_write", raw(`{"path":"x.sh","content":"ls"}`)), core.Deny, builtin.EExecutableRefused, ".sh"},
		{"write shebang", toolReq(write, "file_write", raw(`{"path":"x.txt","content":"#!/bin/sh"}`)), core.Deny, builtin.EExecutableRefused, "#!"},
		{"write ill-typed overwrite", toolReq(write, "file_write", raw(`{"path":"x.txt","content":"x","overwrite":"yes"}`)), core.Deny, builtin.EInvalidArguments, `"overwrite" must be a boolean, got a string`},
		{"write missing content", toolReq(write, "file_write", raw(`{"path":"x.txt"}`)), core.Deny, builtin.EInvalidArguments, `missing argument "content"`},
		{"shell harmless", toolReq(shell, "shell_exec", raw(`{"command":"ls -la"}`)), core.Allow, "", ""},
		{"shell ask list", toolReq(shell, "shell_exec", raw(`{"command":"sudo ls"}`)), core.Ask, builtin.ECommandAsk, "{sudo,su,doas,pkexec,runuser}"},
		{"shell unprovable", toolReq(shell, "shell_exec", raw(`{"command":"$CMD"}`)), core.Ask, builtin.ECommandAsk, "computed when the command runs"},
		{"shell deny list", toolReq(shell, "shell_exec", raw(`{"command":"sudo rm -rf /"}`)), core.Deny, builtin.ECommandDenied, "deny rule"},
		{"shell deny through args", toolReq(shell, "shell_exec", raw(`{"command":"bash","args":["-c","reboot"]}`)), core.Deny, builtin.ECommandDenied, "reboot"},
		{"shell cwd outside", toolReq(shell, "shell_exec", raw(`{"command":"ls","cwd":"/etc"}`)), core.Deny, builtin.EPathOutsideRoots, "/etc"},
		{"shell empty command", toolReq(shell, "shell_exec", raw(`{"command":""}`)), core.Deny, builtin.EInvalidArguments, "empty"},
		{"shell args not strings", toolReq(shell, "shell_exec", raw(`{"command":"ls","args":[1]}`)), core.Deny, builtin.EInvalidArguments, "an array holding a number"},
		{"shell args a string", toolReq(shell, "shell_exec", raw(`{"command":"ls","args":"-la"}`)), core.Deny, builtin.EInvalidArguments, `"args" must be an array of strings, got a string`},
		{"shell args null", toolReq(shell, "shell_exec", raw(`{"command":"ls","args":null}`)), core.Allow, "", ""},
		{"shell NUL in an argument", toolReq(shell, "shell_exec", raw(`{"command":"ls","args":["a\u0000b"]}`)), core.Deny, builtin.EInvalidArguments, "NUL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := f.b.Check(context.Background(), tc.req)
			if v.Outcome != tc.outcome || v.Code != tc.code || !strings.Contains(v.Reason, tc.reason) {
				t.Errorf("Check = %+v; want outcome %s, code %q, reason with %q", v, tc.outcome, tc.code, tc.reason)
			}
			if v.Outcome != core.Allow && v.By != "builtin:"+tc.req.Server {
				t.Errorf("By = %q, want builtin:%s", v.By, tc.req.Server)
			}
			if v.Outcome == core.Ask && !v.Forced {
				t.Error("an Ask from the shell policy is not Forced")
			}
		})
	}
}

func TestCheckWhenDisabled(t *testing.T) {
	b, err := builtin.New(builtin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Enabled() {
		t.Fatal("Enabled() with no folder, want false")
	}
	for _, id := range builtin.ServerIDs() {
		v := b.Check(context.Background(), toolReq(id, builtin.Tools()[id].Name, json.RawMessage(`{}`)))
		if v.Outcome != core.Deny || v.Code != builtin.EBuiltinDisabled || v.Hint == "" {
			t.Errorf("Check(%s) = %+v, want a denial %s with a hint", id, v, builtin.EBuiltinDisabled)
		}
	}
}

// TestPolicyInPipeline runs the built-in policy in a real pipeline whose
// rules auto-approve everything: an ask-list command still reaches a
// person, a deny-listed one never does, a harmless one runs.
func TestPolicyInPipeline(t *testing.T) {
	f := newFixture(t)
	shell := connect(t, f.b.Servers()[builtin.ServerShellExec])
	appr := &recordingApprover{}
	p, err := pipeline.New(pipeline.Stages{
		Route:    keepRoute{},
		Gate:     allowGate{},
		Policies: []pipeline.Policy{f.b},
		Decider:  autoApprove{},
		Approver: appr,
		Dispatch: sessionDispatcher{shell},
		Audit:    &memAudit{},
	})
	if err != nil {
		t.Fatal(err)
	}
	run := func(cmd string) *mcp.CallToolResult {
		t.Helper()
		res, err := p.Run(context.Background(), toolReq(builtin.ServerShellExec, "shell_exec", jsonArgs(t, map[string]any{"command": cmd})))
		if err != nil {
			t.Fatal(err)
		}
		return res.(*mcp.CallToolResult)
	}

	if res := run("echo hi"); res.IsError {
		t.Errorf("echo hi through the pipeline: %s", firstText(res))
	}
	if n := len(appr.asked()); n != 0 {
		t.Errorf("echo hi asked a person %d times, want 0", n)
	}

	res := run("sudo ls")
	asked := appr.asked()
	if len(asked) != 1 || !asked[0].Forced || !strings.Contains(asked[0].Reason, "sudo") {
		t.Fatalf("sudo ls: approvals %+v, want one forced ask naming sudo", asked)
	}
	if !res.IsError || !strings.Contains(firstText(res), "declined") {
		t.Errorf("sudo ls declined by the person: %s", firstText(res))
	}

	res = run("rm -rf /")
	if n := len(appr.asked()); n != 1 {
		t.Errorf("rm -rf / asked a person; a denied command must never be asked (%d asks)", n)
	}
	if !res.IsError || !strings.Contains(firstText(res), "["+builtin.ECommandDenied+"]") {
		t.Errorf("rm -rf /: %s, want %s", firstText(res), builtin.ECommandDenied)
	}
}

// keepRoute routes a request to the server and tool it already names.
type keepRoute struct{}

func (keepRoute) Route(context.Context, *core.Request) error { return nil }

type allowGate struct{}

func (allowGate) Authorize(context.Context, *core.Request) error { return nil }

type autoApprove struct{}

func (autoApprove) Decide(*core.Request) core.Verdict {
	return core.Verdict{Outcome: core.Allow, By: "rules", Reason: "auto-approve rule for shell-exec"}
}

// recordingApprover declines every call, recording why it was asked.
type recordingApprover struct {
	mu   sync.Mutex
	whys []core.Verdict
}

func (a *recordingApprover) Hold(_ context.Context, _ *core.Request, why core.Verdict, _ int64) (core.ApprovalOutcome, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.whys = append(a.whys, why)
	return core.ApprovalOutcome{Decision: core.DecisionDeclined, By: "tester"}, nil
}

func (a *recordingApprover) asked() []core.Verdict {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]core.Verdict(nil), a.whys...)
}

// sessionDispatcher forwards a call to a built-in server over a real MCP
// client session.
type sessionDispatcher struct{ cs *mcp.ClientSession }

func (d sessionDispatcher) Dispatch(ctx context.Context, r *core.Request) (mcp.Result, error) {
	return d.cs.CallTool(ctx, &mcp.CallToolParams{Name: r.Name, Arguments: r.Args})
}

type memAudit struct {
	mu   sync.Mutex
	next int64
}

func (a *memAudit) Begin(rec *core.AuditRecord) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	rec.ID = a.next
	return nil
}

func (a *memAudit) Finish(*core.AuditRecord) error { return nil }

// TestBadInputThroughMCP: the servers refuse malformed calls with a clear
// message (the SDK checks the schema first), and leave no file behind.
func TestBadInputThroughMCP(t *testing.T) {
	f := newFixture(t)
	servers := f.b.Servers()
	read, write, shell := connect(t, servers[builtin.ServerFileRead]), connect(t, servers[builtin.ServerFileWrite]), connect(t, servers[builtin.ServerShellExec])
	before := snapshot(t, f.root)
	for _, tc := range []struct {
		name     string
		cs       *mcp.ClientSession
		tool     string
		args     any
		mentions string
	}{
		{"missing path", read, "file_read", map[string]any{}, "path"},
		{"extra argument", read, "file_read", map[string]any{"path": "inside.txt", "encoding": "latin1"}, "encoding"},
		{"path not a string", read, "file_read", map[string]any{"path": []string{"a"}}, "path"},
		{"missing content", write, "file_write", map[string]any{"path": "new.txt"}, "content"},
		{"overwrite not a boolean", write, "file_write", map[string]any{"path": "new.txt", "content": "x", "overwrite": "true"}, "overwrite"},
		{"huge content", write, "file_write", map[string]any{"path": "new.txt", "content": strings.Repeat("x", 6<<20)}, "at most"},
		{"missing command", shell, "shell_exec", map[string]any{"args": []string{"x"}}, "command"},
		{"empty command", shell, "shell_exec", map[string]any{"command": ""}, "empty"},
		{"args not an array", shell, "shell_exec", map[string]any{"command": "ls", "args": "-la"}, "args"},
		{"cwd not a string", shell, "shell_exec", map[string]any{"command": "ls", "cwd": 1}, "cwd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, c := call(t, tc.cs, tc.tool, tc.args, nil)
			if c == "" || !strings.Contains(firstText(res), tc.mentions) {
				t.Errorf("%s %v: code %q, %q; want an error mentioning %q", tc.tool, tc.args, c, firstText(res), tc.mentions)
			}
		})
	}
	if diff := cmp.Diff(before, snapshot(t, f.root)); diff != "" {
		t.Errorf("bad input changed files (-before +after):\n%s", diff)
	}
}

// TestNoPartialFileOnRefusal: writes refused at the file system (the
// target is a folder, a part of the path is a file) leave nothing behind.
func TestNoPartialFileOnRefusal(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if err := os.MkdirAll(filepath.Join(f.root, "taken", "name"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, f.root)
	for _, args := range []builtin.WriteArgs{
		{Path: "taken/name", Content: "x", Overwrite: true},
		{Path: "inside.txt/below", Content: "x"},
		{Path: "new/dirs/../../inside.txt/x", Content: "x"},
	} {
		if _, err := f.b.WriteFile(ctx, args); err == nil {
			t.Errorf("WriteFile(%q) succeeded, want an error", args.Path)
		}
		if diff := cmp.Diff(before, snapshot(t, f.root)); diff != "" {
			t.Errorf("WriteFile(%q) left files behind (-before +after):\n%s", args.Path, diff)
		}
	}
}
