package agentscript_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/agentscript"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/testutil"
)

const token = "alk_test-token"

// server is a real MCP server over Streamable HTTP that wants the bearer
// token: the test server's tools, plus counter (n=1, n=2, ...), refuse (an
// Airlock-style refusal with a code) and grow (adds a tool: the client gets
// tools/list_changed).
func server(t *testing.T) string {
	t.Helper()
	ts := testutil.NewTestServer()
	var n atomic.Int64
	mcp.AddTool(ts.Server, &mcp.Tool{Name: "counter"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("n=%d", n.Add(1))}}}, nil, nil
	})
	mcp.AddTool(ts.Server, &mcp.Tool{Name: "refuse"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "not for you"}},
			Meta: mcp.Meta{"airlock/error": map[string]any{"code": "not_subscribed", "message": "not for you"}}}, nil, nil
	})
	mcp.AddTool(ts.Server, &mcp.Tool{Name: "grow"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		mcp.AddTool(ts.Server, &mcp.Tool{Name: "grown"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "grown"}}}, nil, nil
		})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "grew"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ts.Server }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func run(t *testing.T, url, script string, vars map[string]string) (string, error) {
	t.Helper()
	s, err := agentscript.Parse([]byte(script))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, script)
	}
	var out bytes.Buffer
	err = agentscript.Execute(context.Background(), s, agentscript.Config{URL: url, Token: token, Vars: vars, Out: &out})
	return out.String(), err
}

// A script whose every step holds: calls with variables, saved values
// (structured content, text, regexp), a refusal expected by its code, a
// listing, a poll until a condition holds, and a notification.
func TestScriptPasses(t *testing.T) {
	url := server(t)
	out, err := run(t, url, `
name: everything holds
vars: {greeting: hello}
steps:
  - list_tools: {present: [echo, counter], absent: [grown]}
  - call: echo
    args: {message: "${greeting} from ${task_id}"}
    expect: {contains: "Echo: hello from tsk_1", not_contains: goodbye}
    save: {said: text, who: "re:from (\\w+)"}
  - call: structured
    args: {city: Oslo}
    save: {temp: "$.temperature"}
  - call: add
    args: {a: "${temp}", b: 1}
    expect: {contains: '"sum":22.5'}
  - call: refuse
    expect: {error: true, code: not_subscribed, contains: not for you}
  - poll:
      call: counter
      until: {contains: "n=3"}
      every: 1ms
      timeout: 30s
  - call: grow
  - wait_notification: {kind: tools/list_changed, timeout: 30s}
  - list_tools: {present: [grown]}
  - print: "${said} / ${who}"
`, map[string]string{"task_id": "tsk_1"})
	if err != nil {
		t.Fatalf("the script failed: %v\n%s", err, out)
	}
	for _, want := range []string{"ok   [1/10] list_tools", "ok   [6/10] poll counter: held after 3 call(s): n=3", "ok   [10/10] print: Echo: hello from tsk_1 / tsk_1", "all 10 steps passed"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}

// The first expectation that does not hold fails the script with its step
// number, and no later step runs.
func TestScriptFailsAtFirstUnmetExpectation(t *testing.T) {
	url := server(t)
	for _, tc := range []struct {
		name, step, wantMsg string
	}{
		{"success expected, error came", `{call: refuse}`, "expected success, got error not_subscribed"},
		{"error expected, success came", `{call: echo, args: {message: x}, expect: {error: true}}`, "expected an error, got success"},
		{"wrong code", `{call: refuse, expect: {code: suspended}}`, "expected error code suspended"},
		{"text missing", `{call: echo, args: {message: x}, expect: {contains: y}}`, `to contain "y"`},
		{"text present", `{call: echo, args: {message: x}, expect: {not_contains: x}}`, `not to contain "x"`},
		{"tool missing", `{list_tools: {present: [nope]}}`, "expected tool nope"},
		{"tool present", `{list_tools: {absent: [echo]}}`, "expected tool echo not to be"},
		{"unknown variable", `{call: echo, args: {message: "${nope}"}}`, "${nope} is not set"},
		{"nothing to save", `{call: echo, args: {message: x}, save: {v: "$.a"}}`, "not JSON"},
		{"poll never holds", `{poll: {call: counter, until: {contains: never}, every: 1ms, timeout: 50ms}}`, "did not hold within 50ms"},
		{"no notification", `{wait_notification: {kind: resources/updated, timeout: 50ms}}`, "no resources/updated notification came"},
		{"unknown tool", `{call: nope}`, "expected success, got error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := run(t, url, "steps:\n  - print: first\n  - "+tc.step+"\n  - call: grow\n", nil)
			var e *core.Error
			if !errors.As(err, &e) || e.Code != agentscript.EExpectation {
				t.Fatalf("error = %v, want %s\n%s", err, agentscript.EExpectation, out)
			}
			if !strings.Contains(e.Message, "step 2") || !strings.Contains(e.Message, tc.wantMsg) {
				t.Errorf("message = %q, want step 2 and %q", e.Message, tc.wantMsg)
			}
			if !strings.Contains(out, "FAIL [2/3]") || strings.Contains(out, "[3/3]") {
				t.Errorf("output should end at the failed step 2:\n%s", out)
			}
		})
	}
}

// Scripts that could skip an expectation silently are refused up front.
func TestParseRefusesAmbiguousScripts(t *testing.T) {
	for _, tc := range []struct{ name, script, want string }{
		{"no steps", "name: x\n", "no steps"},
		{"unknown key", "steps:\n  - call: echo\n    expct: {error: true}\n", "expct"},
		{"two actions", "steps:\n  - {call: echo, print: x}\n", "exactly one"},
		{"no action", "steps:\n  - {name: x}\n", "exactly one"},
		{"expect without call", "steps:\n  - {print: x, expect: {error: true}}\n", "belong to a call"},
		{"poll without timeout", "steps:\n  - poll: {call: counter, until: {contains: x}}\n", "needs a timeout"},
		{"bad notification", "steps:\n  - wait_notification: {kind: nope}\n", "not one of"},
		{"bad duration", "timeout: soon\nsteps:\n  - print: x\n", "not a duration"},
		{"bad variable name", "steps:\n  - {call: echo, save: {1x: text}}\n", "not a variable name"},
		{"bad regexp", "steps:\n  - {call: echo, save: {v: 're:('}}\n", "missing closing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := agentscript.Parse([]byte(tc.script))
			if core.ErrorCode(err) != core.EInvalid || !strings.Contains(core.ErrorMessage(err), tc.want) {
				t.Errorf("Parse = %v, want invalid mentioning %q", err, tc.want)
			}
		})
	}
}

// The command line: the script file among flags, the connection from an
// mcpServers file (as the runner writes it) or the environment, and clear
// refusals.
func TestRunCommand(t *testing.T) {
	url := server(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "s.yaml")
	os.WriteFile(script, []byte("steps:\n  - call: echo\n    args: {message: \"${who}\"}\n    expect: {contains: \"Echo: bob\"}\n"), 0o600)
	cfg := filepath.Join(dir, "mcp.json")
	os.WriteFile(cfg, []byte(`{"mcpServers":{"airlock":{"type":"http","url":"`+url+`","headers":{"Authorization":"Bearer `+token+`"}}}}`), 0o600)
	gemini := filepath.Join(dir, "settings.json")
	os.WriteFile(gemini, []byte(`{"mcpServers":{"x":{"httpUrl":"`+url+`","headers":{"Authorization":"Bearer `+token+`"}}}}`), 0o600)
	noEnv := func(string) string { return "" }
	env := func(k string) string { return map[string]string{"AIRLOCK_URL": url, "AIRLOCK_TOKEN": token}[k] }
	for _, tc := range []struct {
		name     string
		args     []string
		getenv   func(string) string
		wantCode string
	}{
		{"mcp config", []string{"--mcp-config", cfg, script, "--var", "who=bob"}, noEnv, ""},
		{"gemini settings", []string{script, "--mcp-config", gemini, "--var", "who=bob"}, noEnv, ""},
		{"environment", []string{script, "--var=who=bob"}, env, ""},
		{"flags", []string{"--url", url, "--token", token, "--var", "who=bob", script}, noEnv, ""},
		{"expectation fails", []string{"--mcp-config", cfg, script, "--var", "who=eve"}, noEnv, agentscript.EExpectation},
		{"no token", []string{"--url", url, script}, noEnv, core.EInvalid},
		{"wrong token", []string{"--url", url, "--token", "alk_wrong", script, "--var", "who=bob"}, noEnv, core.EUnavailable},
		{"no file", []string{"--mcp-config", cfg}, noEnv, core.EInvalid},
		{"bad var", []string{"--var", "who", script}, noEnv, core.EInvalid},
		{"missing config", []string{"--mcp-config", filepath.Join(dir, "none.json"), script}, noEnv, core.EInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := agentscript.Run(context.Background(), tc.args, tc.getenv, &out, &errOut)
			if got := core.ErrorCode(err); got != tc.wantCode {
				t.Errorf("error = %v (code %q), want code %q\n%s", err, got, tc.wantCode, out.String())
			}
		})
	}
}
