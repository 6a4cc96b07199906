package authz_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
)

// TestToolsOverMCP runs authenticate, help and logout as an agent would,
// through a real MCP client and server, with the caller handed over in
// _meta the way the dispatcher does.
func TestToolsOverMCP(t *testing.T) {
	tm := newTeam(t)
	h := newMCPHelp(t, tm.svc)

	anon := mustResolve(t, tm.env, "mcp-a", "", "")
	text, isErr := h.call(t, anon, "authenticate", map[string]any{"agent_id": "wrk", "passkey": tm.wrk.Passkey, "project_id": "alpha", "purpose": "chat"})
	if isErr {
		t.Fatalf("authenticate: %s", text)
	}
	var res authz.AuthenticateResult
	if err := json.Unmarshal([]byte(text), &res); err != nil {
		t.Fatal(err)
	}
	if !res.Success || !res.Bound || res.AgentID != tm.wrk.id() || res.Purpose != "chat" || res.ProjectID != tm.project.ID ||
		!strings.HasPrefix(res.SessionToken, authz.SessionPrefix) || res.ExpiresIn != int64(authz.DefaultSessionTTL.Seconds()) {
		t.Errorf("authenticate result %+v", res)
	}
	// The MCP session now is wrk's chat session, with no token in sight.
	caller, err := tm.svc.Resolve("mcp-a", authz.Identity{}, "")
	if err != nil || caller.AgentID != tm.wrk.id() || caller.Purpose != "chat" || caller.AuthSession != res.SessionID {
		t.Fatalf("after authenticate: %+v %v", caller, err)
	}
	text, isErr = h.call(t, caller, "help", nil)
	var listing authz.HelpListing
	if isErr || json.Unmarshal([]byte(text), &listing) != nil || listing.Context.CallerType != "worker" || listing.Context.SessionPurpose != "chat" {
		t.Errorf("help: %s", text)
	}
	if strings.Contains(text, res.SessionToken) {
		t.Error("help shows the session token")
	}

	// A bad passkey is refused as a tool error with its code.
	text, isErr = h.call(t, anon, "authenticate", map[string]any{"agent_id": "wrk", "passkey": "alp_wrong"})
	if !isErr || !strings.Contains(text, "Invalid agent_id or passkey [unauthorized]") {
		t.Errorf("bad passkey: %s", text)
	}
	text, isErr = h.call(t, anon, "authenticate", map[string]any{"agent_id": "wrk"})
	if !isErr || !strings.Contains(text, "[invalid]") {
		t.Errorf("missing passkey: %s", text)
	}

	// logout needs a session: an agent-token connection has none.
	mgr := mustResolve(t, tm.env, "mcp-m", tm.mgr.Token, "")
	if text, isErr := h.call(t, mgr, "logout", nil); !isErr || !strings.Contains(text, "No session to end") {
		t.Errorf("logout without a session: %s", text)
	}
	if text, isErr := h.call(t, anon, "logout", nil); !isErr || !strings.Contains(text, "requires authentication") {
		t.Errorf("logout unauthenticated: %s", text)
	}
	if text, isErr := h.call(t, caller, "logout", nil); isErr {
		t.Fatalf("logout: %s", text)
	}
	if got, err := tm.svc.Resolve("mcp-a", authz.Identity{}, ""); err != nil || got.Authenticated() {
		t.Errorf("after logout: %+v %v", got, err)
	}
	if _, err := tm.svc.IdentifyToken(res.SessionToken); core.ErrorCode(err) != core.EUnauthorized {
		t.Errorf("token after logout: %v", err)
	}
}

// TestToolsRefuseWithoutCaller: a call that did not come through the
// dispatcher (no caller in _meta) is refused.
func TestToolsRefuseWithoutCaller(t *testing.T) {
	tm := newTeam(t)
	h := newMCPHelp(t, tm.svc)
	for _, tool := range []string{"authenticate", "help", "logout"} {
		res, err := h.cs.CallTool(t.Context(), mcpParams(tool))
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError {
			t.Errorf("%s without a caller was not refused", tool)
		}
	}
}

func TestCallerFromMeta(t *testing.T) {
	c := core.Caller{AgentID: "ag_1", AgentName: "a", Kind: "worker", Purpose: "chat", Session: "s", Client: core.ClientInfo{Name: "x"}}
	raw, _ := json.Marshal(c)
	var decoded map[string]any
	_ = json.Unmarshal(raw, &decoded)
	for name, v := range map[string]any{"value": c, "pointer": &c, "raw": json.RawMessage(raw), "decoded": decoded} {
		got, ok := core.CallerFromMeta(map[string]any{core.MetaCaller: v})
		if !ok || got != c {
			t.Errorf("%s: %+v %v", name, got, ok)
		}
	}
	for name, meta := range map[string]map[string]any{"nil": nil, "missing": {}, "wrong type": {core.MetaCaller: 42}, "bad json": {core.MetaCaller: json.RawMessage(`{`)}} {
		if _, ok := core.CallerFromMeta(meta); ok {
			t.Errorf("%s: accepted", name)
		}
	}
}

func mcpParams(tool string) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}}
}
