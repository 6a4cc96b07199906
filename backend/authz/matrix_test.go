package authz_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/teams"
)

// seedLevels is the permission table of SPEC §6.2 as the seeds give it
// (seed 000's mapping, seed 001's tables, "Manager tools (assign_task)").
// The registry must say exactly this.
var seedLevels = map[string]authz.Level{
	"authenticate":              authz.LevelUnauthenticated,
	"help":                      authz.LevelUnauthenticated,
	"logout":                    authz.LevelAuthenticated,
	"health_check":              authz.LevelCoordinatorOnly,
	"list_managed_agents":       authz.LevelCoordinatorOnly,
	"get_agent_action":          authz.LevelCoordinatorOnly,
	"get_my_task":               authz.LevelAuthenticated,
	"get_my_tasks":              authz.LevelAuthenticated,
	"get_next_action":           authz.LevelAuthenticated,
	"report_completed":          authz.LevelAuthenticated,
	"create_tasks_batch":        authz.LevelTaskOnly,
	"assign_task":               authz.LevelManagerOnly,
	"update_task_status":        authz.LevelAuthenticated,
	"request_task":              authz.LevelAuthenticated,
	"start_task_from_chat":      authz.LevelChatOnly,
	"update_task_from_chat":     authz.LevelChatOnly,
	"delegate_to_chat_session":  authz.LevelTaskOnly,
	"notify_task_session":       authz.LevelChatOnly,
	"get_conversation_messages": authz.LevelTaskOnly,
	"get_pending_messages":      authz.LevelChatOnly,
	"respond_chat":              authz.LevelChatOnly,
	"start_conversation":        authz.LevelChatOnly,
	"end_conversation":          authz.LevelChatOnly,
	"send_message":              authz.LevelChatOnly,
	"get_my_execution_history":  authz.LevelAuthenticated,
	"get_execution_log":         authz.LevelAuthenticated,
	// Compact-mode meta-tools (seed 003).
	"get_module_schema": authz.LevelAuthenticated,
	"call":              authz.LevelAuthenticated,
	"batch":             authz.LevelAuthenticated,
}

func TestRegistryMatchesSeedTable(t *testing.T) {
	got := map[string]authz.Level{}
	for _, d := range authz.DefaultRegistry().Tools() {
		got[d.Name] = d.Level
	}
	if diff := cmp.Diff(seedLevels, got); diff != "" {
		t.Errorf("tool levels (-seed +registry):\n%s", diff)
	}
}

// callerKind is one row of the matrix.
type callerKind struct {
	name    string
	kind    string // "" for unauthenticated
	purpose string
}

var matrixCallers = []callerKind{
	{"unauthenticated", "", ""},
	{"coordinator", authz.KindCoordinator, core.PurposeTask},
	{"manager/task", authz.KindManager, core.PurposeTask},
	{"manager/chat", authz.KindManager, core.PurposeChat},
	{"worker/task", authz.KindWorker, core.PurposeTask},
	{"worker/chat", authz.KindWorker, core.PurposeChat},
	{"owner", authz.KindOwner, core.PurposeTask},
}

// Messages of the seed (and of its project) for each refusal.
const (
	msgAuth        = "Tool '%s' requires authentication. Call authenticate first."
	msgCoordinator = "Tool '%s' requires Coordinator privilege"
	msgManager     = "Tool '%s' requires Manager privilege"
	msgWorker      = "Tool '%s' requires Worker privilege"
	msgChat        = "Tool '%s' requires a chat session. Current session purpose is 'task'."
	msgTask        = "Tool '%s' requires a task session. Current session purpose is 'chat'."
	msgCompact     = "Tool '%s' is available only in compact mode"
)

// levelExpect is who passes which level, written out cell by cell: "" is
// allowed, anything else the refusal's message format.
var levelExpect = map[authz.Level]map[string]string{
	authz.LevelUnauthenticated: {"unauthenticated": "", "coordinator": "", "manager/task": "", "manager/chat": "", "worker/task": "", "worker/chat": "", "owner": ""},
	authz.LevelAuthenticated:   {"unauthenticated": msgAuth, "coordinator": "", "manager/task": "", "manager/chat": "", "worker/task": "", "worker/chat": "", "owner": ""},
	authz.LevelCoordinatorOnly: {"unauthenticated": msgAuth, "coordinator": "", "manager/task": msgCoordinator, "manager/chat": msgCoordinator, "worker/task": msgCoordinator, "worker/chat": msgCoordinator, "owner": ""},
	authz.LevelManagerOnly:     {"unauthenticated": msgAuth, "coordinator": "", "manager/task": "", "manager/chat": "", "worker/task": msgManager, "worker/chat": msgManager, "owner": ""},
	authz.LevelWorkerOnly:      {"unauthenticated": msgAuth, "coordinator": msgWorker, "manager/task": msgWorker, "manager/chat": msgWorker, "worker/task": "", "worker/chat": "", "owner": msgWorker},
	authz.LevelChatOnly:        {"unauthenticated": msgAuth, "coordinator": msgChat, "manager/task": msgChat, "manager/chat": "", "worker/task": msgChat, "worker/chat": "", "owner": msgChat},
	authz.LevelTaskOnly:        {"unauthenticated": msgAuth, "coordinator": "", "manager/task": "", "manager/chat": msgTask, "worker/task": "", "worker/chat": msgTask, "owner": ""},
}

func codeOf(format string) string {
	switch format {
	case "":
		return ""
	case msgAuth:
		return core.EUnauthorized
	}
	return core.EForbidden
}

// matrixWorld is a team with one agent per kind, each with a token.
type matrixWorld struct {
	*env
	tokens map[string]string // by kind
	ids    map[string]string
}

func newMatrixWorld(t *testing.T, reg *authz.Registry) *matrixWorld {
	e := newEnv(t, func(o *authz.Options) { o.Registry = reg })
	w := &matrixWorld{env: e, tokens: map[string]string{}, ids: map[string]string{}}
	coord := e.agent(t, authz.AgentInput{Name: "coord", Kind: authz.KindCoordinator})
	mgr := e.agent(t, authz.AgentInput{Name: "mgr", Kind: authz.KindManager})
	wrk := e.agent(t, authz.AgentInput{Name: "wrk", Kind: authz.KindWorker, Parent: "mgr"})
	ownerTok, err := e.svc.RotateToken("owner")
	if err != nil {
		t.Fatal(err)
	}
	w.tokens = map[string]string{authz.KindCoordinator: coord.Token, authz.KindManager: mgr.Token, authz.KindWorker: wrk.Token, authz.KindOwner: ownerTok}
	w.ids = map[string]string{authz.KindCoordinator: coord.id(), authz.KindManager: mgr.id(), authz.KindWorker: wrk.id(), authz.KindOwner: authz.OwnerID}
	return w
}

// caller resolves a caller of the given row, the way the gateway would.
func (w *matrixWorld) caller(t *testing.T, ck callerKind, mcpID string) core.Caller {
	t.Helper()
	if ck.kind == "" {
		return mustResolve(t, w.env, mcpID, "", "")
	}
	c, err := w.resolve(t, mcpID, w.tokens[ck.kind], ck.purpose)
	if err != nil && core.ErrorCode(err) != authz.ReasonSuspended {
		t.Fatalf("resolve %s: %v", ck.name, err)
	}
	return c
}

// mcpHelp runs help over a real MCP client and server, handing caller over
// in _meta as the dispatcher does, and returns the decoded answer or the
// refusal.
type mcpHelp struct {
	cs *mcp.ClientSession
}

func newMCPHelp(t *testing.T, svc *authz.Service, more ...func(*mcp.Server)) *mcpHelp {
	t.Helper()
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "airlock", Version: "test"}, nil)
	authz.RegisterTools(srv, svc)
	for _, add := range more {
		add(srv)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cl := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "test"}, nil)
	cs, err := cl.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &mcpHelp{cs: cs}
}

func (h *mcpHelp) call(t *testing.T, caller core.Caller, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args, Meta: mcp.Meta{core.MetaCaller: caller}})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	text := ""
	if len(res.Content) > 0 {
		text = res.Content[0].(*mcp.TextContent).Text
	}
	return text, res.IsError
}

// TestOwnToolMatrix checks every Airlock tool × every kind of caller ×
// active/suspended: the gate's decision and exact message, and that help
// (called directly and as an MCP tool) says the same. The table is the one
// Airlock serves: with the team tools' full definitions filled in, and the
// team tools' handlers on the server, whose own check (the third layer)
// must refuse exactly what the gate refuses.
func TestOwnToolMatrix(t *testing.T) {
	reg := authz.DefaultRegistry()
	if err := teams.Declare(reg); err != nil {
		t.Fatal(err)
	}
	w := newMatrixWorld(t, reg)
	teamSvc, err := teams.New(store.NewTeams(w.db), w.svc, teams.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := newMCPHelp(t, w.svc, func(s *mcp.Server) {
		if err := teams.RegisterTools(s, teamSvc, w.svc); err != nil {
			t.Fatal(err)
		}
	})
	teamTools := map[string]bool{}
	for _, n := range teams.ToolNames() {
		teamTools[n] = true
	}
	tools := reg.Tools()
	if len(tools) != len(seedLevels) {
		t.Fatalf("registry has %d tools, seed table %d", len(tools), len(seedLevels))
	}
	for _, d := range tools {
		if len(d.Example) == 0 {
			t.Errorf("%s is still a placeholder in the table: no example", d.Name)
		}
	}
	cells := 0
	for _, status := range []string{authz.StatusActive, authz.StatusSuspended} {
		for _, ck := range matrixCallers {
			if ck.kind == "" && status == authz.StatusSuspended {
				continue // nobody to suspend
			}
			if ck.kind == authz.KindOwner && status == authz.StatusSuspended {
				// The owner is the person at the UI: it cannot be suspended.
				if _, err := w.svc.SetStatus(w.ids[ck.kind], status); core.ErrorCode(err) != core.EInvalid {
					t.Errorf("suspending the owner: %v, want invalid", err)
				}
				continue
			}
			if ck.kind != "" {
				if _, err := w.svc.SetStatus(w.ids[ck.kind], status); err != nil {
					t.Fatal(err)
				}
			}
			mcpID := fmt.Sprintf("mcp-%s-%s", status, ck.name)
			caller := w.caller(t, ck, mcpID)
			listing := w.svc.HelpList(&caller)
			listed := map[string]bool{}
			for _, lt := range listing.AvailableTools {
				listed[lt.Name] = true
			}
			var mcpListing authz.HelpListing
			text, isErr := h.call(t, caller, "help", nil)
			if status == authz.StatusActive {
				if isErr {
					t.Fatalf("%s: help over MCP refused: %s", ck.name, text)
				}
				if err := json.Unmarshal([]byte(text), &mcpListing); err != nil {
					t.Fatalf("%s: help over MCP: %v\n%s", ck.name, err, text)
				}
				if diff := cmp.Diff(listing, mcpListing); diff != "" {
					t.Errorf("%s: help listing direct vs over MCP (-direct +mcp):\n%s", ck.name, diff)
				}
			}
			allowedCount := 0
			for _, def := range tools {
				name := fmt.Sprintf("%s/%s/%s", status, ck.name, def.Name)
				cells++
				var want *errSummary
				switch {
				case status == authz.StatusSuspended:
					want = &errSummary{Code: authz.ReasonSuspended, Message: "account is suspended"}
				case def.Compact && ck.kind != "":
					want = &errSummary{Code: core.EForbidden, Message: fmt.Sprintf(msgCompact, def.Name)}
				default:
					if f := levelExpect[def.Level][ck.name]; f != "" {
						want = &errSummary{Code: codeOf(f), Message: fmt.Sprintf(f, def.Name)}
					}
				}
				gate := w.svc.Authorize(context.Background(), &core.Request{Kind: core.KindToolCall, Caller: caller, Server: authz.Server, Name: def.Name})
				var gateErr *core.Error
				if gate != nil {
					gateErr = gate.(*core.Error)
				}
				if diff := cmp.Diff(want, summarize(gateErr)); diff != "" {
					t.Errorf("%s: gate (-want +got):\n%s", name, diff)
					continue
				}
				if gateErr == nil {
					allowedCount++
				}
				// help, tool by tool, says what the gate says.
				detail, err := w.svc.HelpFor(&caller, def.Name)
				if err != nil {
					t.Fatalf("%s: help: %v", name, err)
				}
				if detail.Available != (gateErr == nil) || listed[def.Name] != (gateErr == nil) {
					t.Errorf("%s: help available=%v listed=%v, gate refusal %v", name, detail.Available, listed[def.Name], gateErr)
				}
				// Its reason is the gate's message, except for a tool bound
				// to the other session purpose, which seed 000 words itself.
				wantReason := ""
				if gateErr != nil {
					wantReason = gateErr.Message
					if strings.Contains(gateErr.Message, "session. Current session purpose is") {
						need := map[authz.Level]string{authz.LevelChatOnly: "chat", authz.LevelTaskOnly: "task"}[def.Level]
						wantReason = fmt.Sprintf("このツールはpurpose=%sのセッションでのみ利用可能です。現在のセッションはpurpose=%sです。 (%s)", need, caller.Purpose, gateErr.Message)
					}
				}
				if gateErr != nil {
					if detail.Reason != wantReason || detail.Code != gateErr.Code || detail.Hint != gateErr.Hint || detail.Parameters != nil {
						t.Errorf("%s: help detail %+v disagrees with the gate %+v", name, detail, gateErr)
					}
				} else if detail.Parameters == nil {
					t.Errorf("%s: help shows no parameters for an available tool", name)
				}
				// A team tool called on the server refuses as the gate does.
				if teamTools[def.Name] && gateErr != nil {
					text, isErr := h.call(t, caller, def.Name, nil)
					var body struct{ Error, Message string }
					if err := json.Unmarshal([]byte(text), &body); err != nil || !isErr || body.Message != gateErr.Message || body.Error != gateErr.Code {
						t.Errorf("%s: the tool's own check says %s; the gate %q [%s]", name, text, gateErr.Message, gateErr.Code)
					}
				}
				// The same detail over MCP, or for a suspended caller the
				// gate's own refusal of help.
				text, isErr := h.call(t, caller, "help", map[string]any{"tool_name": def.Name})
				if status == authz.StatusSuspended {
					if !isErr || !strings.Contains(text, "account is suspended [suspended]") {
						t.Errorf("%s: help over MCP for a suspended agent: %s", name, text)
					}
					continue
				}
				var got map[string]any
				if err := json.Unmarshal([]byte(text), &got); err != nil || isErr {
					t.Fatalf("%s: help detail over MCP: %v %s", name, err, text)
				}
				if got["available"] != (gateErr == nil) {
					t.Errorf("%s: help over MCP available=%v", name, got["available"])
				}
				if gateErr != nil {
					_, hasParams := got["parameters"]
					if got["reason"] != wantReason || hasParams {
						t.Errorf("%s: help over MCP %v disagrees with the gate %q", name, got, gateErr.Message)
					}
				}
			}
			if listing.TotalAvailable != allowedCount || len(listing.AvailableTools) != allowedCount {
				t.Errorf("%s/%s: help total_available %d, listed %d; the gate allows %d", status, ck.name,
					listing.TotalAvailable, len(listing.AvailableTools), allowedCount)
			}
			if ck.kind != "" {
				if _, err := w.svc.SetStatus(w.ids[ck.kind], authz.StatusActive); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// Every caller active, and every caller but the unidentified one and
	// the owner suspended.
	if want := len(tools) * (len(matrixCallers)*2 - 2); cells != want {
		t.Errorf("checked %d cells, want %d", cells, want)
	}
}

// TestLevelMatrix checks every level, worker_only included (no tool of the
// seeds has it yet), against every caller.
func TestLevelMatrix(t *testing.T) {
	var defs []authz.ToolDef
	for _, l := range authz.Levels {
		defs = append(defs, authz.ToolDef{Name: "t_" + string(l), Level: l, Description: string(l), InputSchema: authz.Schema()})
	}
	reg, err := authz.NewRegistry(defs...)
	if err != nil {
		t.Fatal(err)
	}
	w := newMatrixWorld(t, reg)
	for _, ck := range matrixCallers {
		caller := w.caller(t, ck, "m-"+ck.name)
		for _, d := range defs {
			var want *errSummary
			if f := levelExpect[d.Level][ck.name]; f != "" {
				want = &errSummary{Code: codeOf(f), Message: fmt.Sprintf(f, d.Name)}
			}
			if diff := cmp.Diff(want, summarize(w.svc.Refusal(&caller, own(d.Name)))); diff != "" {
				t.Errorf("%s × %s (-want +got):\n%s", d.Level, ck.name, diff)
			}
		}
	}
}

// TestHelpShapes pins help's JSON to seed 000's shapes.
func TestHelpShapes(t *testing.T) {
	w := newMatrixWorld(t, authz.DefaultRegistry())
	p := w.project(t, "proj-001")
	if _, err := w.svc.Assign("wrk", p.ID); err != nil {
		t.Fatal(err)
	}
	id, err := w.svc.IdentifyToken(w.tokens[authz.KindWorker])
	if err != nil {
		t.Fatal(err)
	}
	id.ProjectID = "proj-001"
	caller, err := w.svc.Resolve("m1", id, "")
	if err != nil {
		t.Fatal(err)
	}
	listing := w.svc.HelpList(&caller)
	if diff := cmp.Diff(authz.HelpContext{CallerType: "worker", SessionPurpose: "task", AgentID: w.ids[authz.KindWorker], AgentName: "wrk", ProjectID: p.ID}, listing.Context); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}
	// Connected without naming a project, the agent's only project is the
	// session's, as the team tools take it.
	id.ProjectID = ""
	noProject, err := w.svc.Resolve("m2", id, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := w.svc.HelpList(&noProject).Context.ProjectID; got != p.ID {
		t.Errorf("context project_id %q without ?project=, want the agent's only project %s", got, p.ID)
	}
	var keys []string
	for k := range listing.UnavailableInfo {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if diff := cmp.Diff([]string{"chat_tools", "compact_tools", "coordinator_tools", "manager_tools"}, keys); diff != "" {
		t.Errorf("unavailable_info groups (-want +got):\n%s", diff)
	}
	if got := listing.UnavailableInfo["chat_tools"]; !strings.Contains(got, "respond_chat") || !strings.Contains(got, "purpose=chat") || !strings.Contains(got, "purpose is task") {
		t.Errorf("chat_tools: %q", got)
	}

	detail, err := w.svc.HelpFor(&caller, "report_completed")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(detail)
	want := `{"name":"report_completed","description":"Reports that your task is finished. The result argument says how it ended.","category":"authenticated","available":true,` +
		`"parameters":[{"name":"session_token","type":"string","required":false,"description":"Session token from authenticate. Not needed when this connection is already authenticated (authenticate was called on it, or it uses an agent token)."},` +
		`{"name":"result","type":"string","required":true,"enum":["success","failed","blocked"],"description":"How the task ended: success, failed, or blocked by something outside your control."},` +
		`{"name":"summary","type":"string","required":false,"description":"A summary of what was done (optional)."}],` +
		`"example":{"session_token":"als_xxx","result":"success","summary":"All subtasks are done."}}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("available detail (-want +got):\n%s", diff)
	}
	detail, err = w.svc.HelpFor(&caller, "respond_chat")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(detail)
	want = `{"name":"respond_chat","description":"Answers a chat message.","category":"chat_only","available":false,` +
		`"reason":"このツールはpurpose=chatのセッションでのみ利用可能です。現在のセッションはpurpose=taskです。 (Tool 'respond_chat' requires a chat session. Current session purpose is 'task'.)","code":"forbidden",` +
		`"hint":"authenticate with purpose 'chat' (or connect with ?purpose=chat); from a task session, hand the conversation over with delegate_to_chat_session"}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("unavailable detail (-want +got):\n%s", diff)
	}
	// A tool of another server, as tools/list names it, is not help's.
	if _, err := w.svc.HelpFor(&caller, "file-read__file_read"); err == nil || !strings.Contains(err.Error(), "a tool of the server 'file-read'") {
		t.Errorf("help for another server's tool: %v", err)
	}
	// The unauthenticated listing is seed 000's: authenticate and help.
	anon := mustResolve(t, w.env, "anon", "", "")
	var names []string
	for _, lt := range w.svc.HelpList(&anon).AvailableTools {
		names = append(names, lt.Name)
	}
	if diff := cmp.Diff([]string{"authenticate", "help"}, names); diff != "" {
		t.Errorf("unauthenticated tools (-want +got):\n%s", diff)
	}
	if _, err := w.svc.HelpFor(&anon, "no_such_tool"); core.ErrorCode(err) != core.ENotFound {
		t.Errorf("help for an unknown tool: %v", err)
	}
	if err := w.svc.Refusal(&anon, own("no_such_tool")); err == nil || err.Message != "Tool 'no_such_tool' is not registered in authorization system" {
		t.Errorf("gate for an unknown tool: %v", err)
	}
}

func TestRegistryKeepsLevels(t *testing.T) {
	reg := authz.DefaultRegistry()
	// The teams feature fills in a placeholder with its full schema.
	full := authz.ToolDef{Name: "respond_chat", Level: authz.LevelChatOnly, Description: "Answers.",
		InputSchema: authz.Schema(authz.Param{Name: "message", Type: "string", Required: true})}
	if err := reg.Register(full); err != nil {
		t.Fatalf("fill in a placeholder: %v", err)
	}
	if d, _ := reg.Lookup("respond_chat"); d.Description != "Answers." {
		t.Errorf("placeholder not replaced: %+v", d)
	}
	full.Level = authz.LevelAuthenticated
	if err := reg.Register(full); core.ErrorCode(err) != core.EConflict {
		t.Errorf("changing a level: %v; want conflict", err)
	}
	for _, bad := range []authz.ToolDef{
		{Name: "bad name", Level: authz.LevelAuthenticated, InputSchema: authz.Schema()},
		{Name: "x", Level: "superuser_only", InputSchema: authz.Schema()},
		{Name: "x", Level: authz.LevelAuthenticated, InputSchema: json.RawMessage(`{"type":"string"}`)},
		{Name: "x", Level: authz.LevelAuthenticated, InputSchema: authz.Schema(), Example: json.RawMessage(`{`)},
	} {
		if err := reg.Register(bad); core.ErrorCode(err) != core.EInvalid {
			t.Errorf("register %+v: %v; want invalid", bad, err)
		}
	}
}
