package airlock_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/teams"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// An interrupt (notify_task_session with priority high) that replaces the
// answer of a tool with an output schema must still be an answer an MCP
// client accepts. MCP: "If an output schema is provided: servers MUST
// provide structured results that conform to this schema"; the TypeScript
// SDK's Client.callTool (Claude Code's) throws "Tool X has an output schema
// but did not return structured content" for a result that is neither an
// error nor structured. The interrupt is marked read as it is sent, so a
// client that throws loses it for good — and every built-in tool
// (file_read, file_write, shell_exec) has an output schema.
func TestInterruptOnAToolWithAnOutputSchemaReachesTheClient(t *testing.T) {
	c := newCrew(t)
	mgrChat := c.session(t, "manager-dev", "chat")
	wChat := c.session(t, "worker-frontend-01", "chat")
	wTask := c.session(t, "worker-frontend-01", "task")
	conv := ok(t, mgrChat, "start_conversation", map[string]any{"participant_id": "worker-frontend-01",
		"initial_message": "今すぐタスクXの仕様を変更してください"}).str("conversation_id")
	ok(t, wTask, "get_my_tasks", nil) // takes the invitation to the chat out of the way

	// The tool the task session calls next has an output schema.
	waitTool(t, wTask, "everything__add")
	lt, err := wTask.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	hasSchema := false
	for _, tl := range lt.Tools {
		if tl.Name == "everything__add" && tl.OutputSchema != nil {
			hasSchema = true
		}
	}
	if !hasSchema {
		t.Fatal("everything__add is listed without an output schema; the test needs one")
	}

	ok(t, wChat, "notify_task_session", map[string]any{"conversation_id": conv, "message": "緊急", "priority": "high"})
	res, err := wTask.CallTool(context.Background(), &mcp.CallToolParams{Name: "everything__add", Arguments: map[string]any{"a": 1, "b": 2}})
	if err != nil {
		t.Fatal(err)
	}
	var block teams.NotificationBlock
	if err := json.Unmarshal([]byte(textOf(res)), &block); err != nil || !block.Interrupted {
		t.Fatalf("the call was not interrupted: %s", textOf(res))
	}
	if !res.IsError && res.StructuredContent == nil {
		raw, _ := json.Marshal(res)
		t.Errorf("the interrupt replaced the answer of a tool with an output schema by a result with neither isError nor structuredContent; "+
			"an MCP client that checks output schemas (the TypeScript SDK) rejects it and the interrupt, already marked read, is lost: %s", raw)
	}
	if res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		if !res.IsError && !strings.Contains(string(raw), `"sum"`) {
			t.Errorf("structuredContent %s does not match everything__add's output schema (sum is required)", raw)
		}
	}
}

// Compact mode (seed 003) gives the agent a module's tool schemas through
// get_module_schema instead of tools/list; a tool's output schema is part
// of its definition (seed 004 gives file_read, file_write and shell_exec
// one each, and SPEC §7 keeps "the seed's input/output schemas"). Without
// it, an agent in compact mode cannot know the shape of what call returns
// as structuredContent.
func TestCompactModuleSchemaKeepsOutputSchemas(t *testing.T) {
	tm := newTeam(t)
	if _, err := tm.in.API.Agents.SetCompact(tm.alice.Agent.ID, true); err != nil {
		t.Fatal(err)
	}
	res := call(t, tm.connectWith(t, tm.alice.Token, "", nil), "get_module_schema", map[string]any{"module": "everything"})
	if res.IsError {
		t.Fatalf("get_module_schema everything = %s", textOf(res))
	}
	var got struct {
		Tools []struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(textOf(res)), &got); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tl := range got.Tools {
		if tl.Name != "add" {
			continue
		}
		found = true
		if !strings.Contains(string(tl.OutputSchema), `"sum"`) {
			t.Errorf("get_module_schema lists add without its output schema (the one tools/list gives everything__add): %s", textOf(res))
		}
	}
	if !found {
		t.Fatalf("get_module_schema everything does not list add: %s", textOf(res))
	}
}

// A coordinator works in the projects it is assigned to, like every other
// agent: the team tools refuse a project the caller is not in with
// agent_not_assigned_to_project (SPEC §6.3's code) everywhere else —
// send_message, assign_task, create_tasks_batch, request_task, the chat →
// task bridge. list_managed_agents and get_agent_action let a coordinator
// of proj-001 read another team's agents, their open work and the ids of
// its tasks.
func TestCoordinatorStaysInItsProjects(t *testing.T) {
	c := newCrew(t)
	if _, err := c.in.API.Agents.CreateProject("proj-002", "another team"); err != nil {
		t.Fatal(err)
	}
	other, err := c.in.API.Agents.Create(authz.AgentInput{Name: "other-worker", Kind: authz.KindWorker, Parent: "owner", Role: "tools", Projects: []string{"proj-002"}})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := c.in.API.Board.Create("proj-002", teams.TaskInput{Title: "another team's secret work", AssigneeID: other.Agent.ID, Status: teams.StatusTodo})
	if err != nil {
		t.Fatal(err)
	}
	coord := c.session(t, "coordinator", "task") // assigned to proj-001 only

	r := tool(t, coord, "list_managed_agents", map[string]any{"project_id": "proj-002"})
	if !r.res.IsError || r.code() != teams.ECodeNotAssigned {
		t.Errorf("list_managed_agents(project_id: proj-002) by a coordinator of proj-001 = %s; want a refusal with %s", textOf(r.res), teams.ECodeNotAssigned)
	}
	r = tool(t, coord, "get_agent_action", map[string]any{"agent_id": "other-worker"})
	if strings.Contains(textOf(r.res), secret.ID) || !r.res.IsError {
		t.Errorf("get_agent_action(other-worker of proj-002) by a coordinator of proj-001 = %s; want a refusal, not the other team's task", textOf(r.res))
	}
}

// An agent in no project at all (the shared token's agent "default", as a
// new user first connects) is told to connect with ?project=NAME, which
// Airlock then refuses (agent_not_assigned_to_project, HTTP 403). The
// refusal must say what would work: put the agent on a project.
func TestAgentInNoProjectIsToldToJoinOne(t *testing.T) {
	c := newCrew(t)
	loner, err := c.in.API.Agents.Create(authz.AgentInput{Name: "loner", Kind: authz.KindManager, Parent: "owner", Role: "tools"})
	if err != nil {
		t.Fatal(err)
	}
	sess := c.connect(t, loner.Token, "", nil)
	waitTool(t, sess, "get_my_tasks")
	r := tool(t, sess, "get_my_tasks", nil)
	if !r.res.IsError {
		t.Fatalf("get_my_tasks of an agent in no project = %s", textOf(r.res))
	}
	hint, _ := r.body["hint"].(string)
	if strings.Contains(hint, "?project=") || !strings.Contains(hint, "Projects") {
		t.Errorf("an agent in no project is told %q (%s); connecting with ?project= is refused for it — the hint must say to put it on a project (Agents screen → Projects)",
			hint, textOf(r.res))
	}
}

// A call the client cancels (Esc in Claude Code, a client timeout) gets no
// answer the agent reads, so nothing may ride on it: SPEC §6.4 "Delivered
// notifications are marked read; nothing is delivered twice" — and nothing
// is to be marked read without being delivered. Today the notifications
// are claimed for the cancelled call's answer, which no one reads, and the
// task session never hears of them.
func TestCancelledCallLeavesNotificationsUnread(t *testing.T) {
	c := newCrew(t)
	mgrChat := c.session(t, "manager-dev", "chat")
	wChat := c.session(t, "worker-frontend-01", "chat")
	wTask := c.session(t, "worker-frontend-01", "task")
	conv := ok(t, mgrChat, "start_conversation", map[string]any{"participant_id": "worker-frontend-01", "initial_message": "仕様変更"}).str("conversation_id")
	ok(t, wTask, "get_my_tasks", nil) // takes the invitation to the chat out of the way
	waitTool(t, wTask, "everything__hang")
	ok(t, wChat, "notify_task_session", map[string]any{"conversation_id": conv, "message": "read the chat"})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := wTask.CallTool(ctx, &mcp.CallToolParams{Name: "everything__hang"})
		done <- err
	}()
	testutil.Eventually(t, 5*time.Second, func() bool { return len(c.everything.Started()) > 0 }, "everything__hang did not start")
	cancel()
	<-done
	testutil.Eventually(t, 5*time.Second, func() bool { return len(c.everything.Cancelled()) > 0 }, "the server never heard of the cancellation")

	r := ok(t, wTask, "get_my_tasks", nil)
	if !strings.Contains(textOf(r.res), "read the chat") {
		t.Errorf("the notification went with the answer to a cancelled call and is lost; the next call carries none: %s", textOf(r.res))
	}
}

// get_module_schema of a module no server is refused not_subscribed, with
// the hint to grant the non-existent server to the agent's role: seed
// 003's deny reasons are about what exists and is withheld, and the hint
// sends the person to a setting that cannot help. (call of an unknown
// tool, by contrast, says unknown_tool.)
func TestModuleSchemaOfAnUnknownModuleSaysItIsUnknown(t *testing.T) {
	tm := newTeam(t)
	if _, err := tm.in.API.Agents.SetCompact(tm.alice.Agent.ID, true); err != nil {
		t.Fatal(err)
	}
	alice := tm.connectWith(t, tm.alice.Token, "", nil)
	waitTool(t, alice, "get_module_schema")
	res := call(t, alice, "get_module_schema", map[string]any{"module": "no-such-server"})
	if !res.IsError {
		t.Fatalf("get_module_schema of a module no server is = %s", textOf(res))
	}
	if code(res) == "not_subscribed" || strings.Contains(textOf(res), "grant server 'no-such-server'") {
		t.Errorf("get_module_schema of a module that does not exist says the role lacks a grant for it: %s", textOf(res))
	}
}

// get_agent_action without project_id reads the agent's work in every
// project it is in. A coordinator of proj-001 asking about an agent it
// shares proj-001 with is given the id of a task of proj-002 (a project
// the coordinator is not assigned to) as the task to start it on: the
// leak 21b7f55 closed for an agent in proj-002 only stays open for one in
// both.
func TestCoordinatorGetAgentActionStaysInItsProjectsForAnAgentInTwo(t *testing.T) {
	c := newCrew(t)
	if _, err := c.in.API.Agents.CreateProject("proj-002", "another team"); err != nil {
		t.Fatal(err)
	}
	both, err := c.in.API.Agents.Create(authz.AgentInput{Name: "shared-worker", Kind: authz.KindWorker, Parent: "owner", Role: "tools", Projects: []string{crewProject, "proj-002"}})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := c.in.API.Board.Create("proj-002", teams.TaskInput{Title: "another team's secret work", AssigneeID: both.Agent.ID, Status: teams.StatusTodo})
	if err != nil {
		t.Fatal(err)
	}
	coord := c.session(t, "coordinator", "task") // assigned to proj-001 only

	r := tool(t, coord, "get_agent_action", map[string]any{"agent_id": "shared-worker"})
	if strings.Contains(textOf(r.res), secret.ID) {
		t.Errorf("get_agent_action(shared-worker) by a coordinator of proj-001 = %s; it names %s, a task of proj-002, which the coordinator is not assigned to", textOf(r.res), secret.ID)
	}
}
