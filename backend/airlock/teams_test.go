package airlock_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/airlock"
	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/cli"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/events"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/teams"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// crew is an Airlock with seed 001's team in project proj-001:
//
//	owner
//	  ├─ manager-dev ─┬─ worker-frontend-01
//	  │               └─ worker-frontend-02
//	  ├─ qa-lead ──────── worker-qa-01
//	  └─ coordinator
//
// and an in-process server "everything" (a downstream tool for the
// notification tests).
type crew struct {
	in         *airlock.Instance
	everything *testutil.TestServer
	agents     map[string]authz.CreatedAgent
}

const crewProject = "proj-001"

func newCrew(t testing.TB) *crew {
	t.Helper()
	c := &crew{everything: testutil.NewTestServer(), agents: map[string]authz.CreatedAgent{}}
	c.in = startWith(t, airlock.Options{DataDir: t.TempDir(), InProcess: map[string]*mcp.Server{"everything": c.everything.Server}})
	allowAll(t, c.in)
	if _, err := c.in.API.Agents.CreateRole(authz.RoleInput{Name: "tools", Servers: []string{"everything"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.in.API.Agents.CreateProject(crewProject, "seed 001's project"); err != nil {
		t.Fatal(err)
	}
	for _, a := range []struct{ name, kind, parent string }{
		{"manager-dev", authz.KindManager, "owner"},
		{"worker-frontend-01", authz.KindWorker, "manager-dev"},
		{"worker-frontend-02", authz.KindWorker, "manager-dev"},
		{"qa-lead", authz.KindManager, "owner"},
		{"worker-qa-01", authz.KindWorker, "qa-lead"},
		{"coordinator", authz.KindCoordinator, "owner"},
	} {
		made, err := c.in.API.Agents.Create(authz.AgentInput{Name: a.name, Kind: a.kind, Parent: a.parent, Role: "tools", Projects: []string{crewProject}})
		if err != nil {
			t.Fatal(err)
		}
		c.agents[a.name] = made
	}
	return c
}

func (c *crew) id(name string) string {
	if name == "owner" {
		return authz.OwnerID
	}
	return c.agents[name].Agent.ID
}

// session connects agent name with its token, in a session of purpose in
// proj-001.
func (c *crew) session(t testing.TB, name, purpose string) *mcp.ClientSession {
	t.Helper()
	return c.connect(t, c.agents[name].Token, "?purpose="+purpose+"&project="+crewProject, nil)
}

func (c *crew) connect(t testing.TB, token, query string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cl := mcp.NewClient(&mcp.Implementation{Name: "scripted-agent", Version: "1"}, opts)
	sess, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: c.in.Info.MCPURL + query, HTTPClient: &http.Client{Transport: bearer{token}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

// reply is a decoded tool answer.
type reply struct {
	res  *mcp.CallToolResult
	body map[string]any
}

func (r reply) str(key string) string { s, _ := r.body[key].(string); return s }

// code is the refusal's code, from _meta (every Airlock refusal has it).
func (r reply) code() string { return code(r.res) }

// tool calls name and decodes its first text block (the tool's own
// answer; a notification block may follow it).
func tool(t testing.TB, sess *mcp.ClientSession, name string, args map[string]any) reply {
	t.Helper()
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	r := reply{res: res, body: map[string]any{}}
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			_ = json.Unmarshal([]byte(tc.Text), &r.body) // a gate refusal is plain text
		}
	}
	return r
}

// ok calls name and fails the test unless it succeeded.
func ok(t testing.TB, sess *mcp.ClientSession, name string, args map[string]any) reply {
	t.Helper()
	r := tool(t, sess, name, args)
	if r.res.IsError || r.body["success"] != true {
		t.Fatalf("%s(%v) failed: %s", name, args, textOf(r.res))
	}
	return r
}

// refused calls name and fails the test unless it was refused with code.
func refused(t testing.TB, sess *mcp.ClientSession, name string, args map[string]any, wantCode string) reply {
	t.Helper()
	r := tool(t, sess, name, args)
	if !r.res.IsError || r.code() != wantCode {
		t.Fatalf("%s(%v) = %s (code %q), want a refusal with %q", name, args, textOf(r.res), r.code(), wantCode)
	}
	return r
}

func (c *crew) createTask(t testing.TB, manager *mcp.ClientSession, title, assignee string) string {
	t.Helper()
	r := ok(t, manager, "create_tasks_batch", map[string]any{"tasks": []any{map[string]any{"title": title, "assignee_id": assignee, "status": "todo"}}})
	tasks := r.body["tasks"].([]any)
	return tasks[0].(map[string]any)["task_id"].(string)
}

func (c *crew) task(t testing.TB, id string) teams.Task {
	t.Helper()
	d, err := c.in.API.Board.Detail(id)
	if err != nil {
		t.Fatal(err)
	}
	return d.Task
}

// For every caller context, Airlock's team tools in tools/list are exactly
// those help lists as available, each with its full schema, and each tool
// help lists as unavailable is refused with help's reason.
func TestTeamToolsListHelpAndGateAgree(t *testing.T) {
	c := newCrew(t)
	contexts := []struct{ agent, purpose string }{
		{"worker-frontend-01", "task"}, {"worker-frontend-01", "chat"},
		{"manager-dev", "task"}, {"manager-dev", "chat"},
		{"coordinator", "task"},
	}
	team := teams.ToolNames()
	for _, cx := range contexts {
		t.Run(cx.agent+"/"+cx.purpose, func(t *testing.T) {
			sess := c.session(t, cx.agent, cx.purpose)
			waitTool(t, sess, "help")
			listed := map[string]*mcp.Tool{}
			res, err := sess.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tl := range res.Tools {
				listed[tl.Name] = tl
			}
			var help authz.HelpListing
			if err := json.Unmarshal([]byte(textOf(tool(t, sess, "help", nil).res)), &help); err != nil {
				t.Fatal(err)
			}
			available := map[string]bool{}
			for _, h := range help.AvailableTools {
				available[h.Name] = true
			}
			for _, name := range team {
				if (listed[name] != nil) != available[name] {
					t.Errorf("%s: tools/list %v, help available %v", name, listed[name] != nil, available[name])
				}
				var detail map[string]any
				json.Unmarshal([]byte(textOf(tool(t, sess, "help", map[string]any{"tool_name": name}).res)), &detail)
				if !available[name] {
					// The call is refused with help's code and hint (help's
					// reason for a tool of the other session purpose is
					// seed 000's own wording).
					r := tool(t, sess, name, nil)
					code, _ := detail["code"].(string)
					hint, _ := detail["hint"].(string)
					if !r.res.IsError || code == "" || !strings.Contains(textOf(r.res), "["+code+"]") || !strings.Contains(textOf(r.res), hint) {
						t.Errorf("%s: the call says %q, help says %v", name, textOf(r.res), detail)
					}
					continue
				}
				params, _ := detail["parameters"].([]any)
				if len(params) == 0 || detail["example"] == nil {
					t.Errorf("%s: help shows no parameters or example: %v", name, detail)
				}
				var schema struct {
					Properties map[string]any `json:"properties"`
				}
				raw, _ := json.Marshal(listed[name].InputSchema)
				json.Unmarshal(raw, &schema)
				if len(schema.Properties) != len(params) {
					t.Errorf("%s: tools/list schema has %d properties, help %d parameters", name, len(schema.Properties), len(params))
				}
			}
		})
	}
}

// Seed 001 Phase 2: get_my_tasks (all, by status), get_my_execution_history
// (has_log), get_execution_log (the file's lines; another agent's refused).
func TestSeedPhase2SelfStatusTools(t *testing.T) {
	c := newCrew(t)
	mgr := c.session(t, "manager-dev", "task")
	worker := c.session(t, "worker-frontend-01", "task")
	a := c.createTask(t, mgr, "ダッシュボード実装", "worker-frontend-01")
	b := c.createTask(t, mgr, "ログイン画面修正", "worker-frontend-01")
	c.createTask(t, mgr, "someone else's", "worker-frontend-02")
	ok(t, worker, "update_task_status", map[string]any{"task_id": a, "status": "in_progress"})

	r := ok(t, worker, "get_my_tasks", nil)
	var ids []string
	for _, x := range r.body["tasks"].([]any) {
		ids = append(ids, x.(map[string]any)["task_id"].(string))
	}
	if diff := cmp.Diff([]string{a, b}, ids); diff != "" || r.body["total_count"] != 2.0 || r.str("agent_id") != c.id("worker-frontend-01") {
		t.Errorf("get_my_tasks (-want +got):\n%s\n%v", diff, r.body)
	}
	r = ok(t, worker, "get_my_tasks", map[string]any{"status": "in_progress"})
	if tasks := r.body["tasks"].([]any); len(tasks) != 1 || tasks[0].(map[string]any)["task_id"] != a {
		t.Errorf("get_my_tasks in_progress = %v", tasks)
	}
	refused(t, worker, "get_my_tasks", map[string]any{"status": "finished"}, core.EInvalid)
	r = ok(t, worker, "get_my_task", nil)
	if r.body["task"].(map[string]any)["task_id"] != a {
		t.Errorf("get_my_task = %v", r.body)
	}

	exec, err := teamService(c).StartExecution(a, c.id("worker-frontend-01"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exec.LogFilePath, []byte("Line 1\nLine 2\nLine 3"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = ok(t, worker, "get_my_execution_history", nil)
	execs := r.body["executions"].([]any)
	if len(execs) != 1 || execs[0].(map[string]any)["has_log"] != true || execs[0].(map[string]any)["status"] != "running" ||
		execs[0].(map[string]any)["task_title"] != "ダッシュボード実装" {
		t.Errorf("get_my_execution_history = %v", r.body)
	}
	if r := ok(t, worker, "get_my_execution_history", map[string]any{"task_id": b}); len(r.body["executions"].([]any)) != 0 {
		t.Errorf("history filtered by another task = %v", r.body)
	}
	r = ok(t, worker, "get_execution_log", map[string]any{"execution_id": exec.ID})
	if lines := r.body["log_content"].([]any); len(lines) != 3 || lines[2] != "Line 3" || r.body["truncated"] != false || r.body["total_lines"] != 3.0 {
		t.Errorf("get_execution_log = %v", r.body)
	}
	r = ok(t, worker, "get_execution_log", map[string]any{"execution_id": exec.ID, "tail": 1})
	if lines := r.body["log_content"].([]any); len(lines) != 1 || lines[0] != "Line 3" || r.body["truncated"] != true {
		t.Errorf("get_execution_log tail 1 = %v", r.body)
	}
	other := c.session(t, "worker-frontend-02", "task")
	refused(t, other, "get_execution_log", map[string]any{"execution_id": exec.ID}, teams.ECodeUnauthorized)
	refused(t, worker, "get_execution_log", map[string]any{"execution_id": "exec_nope"}, teams.ECodeExecutionNotFound)
}

// teamService is the running instance's team service, as agent runs use it.
func teamService(c *crew) *teams.Service { return c.in.Teams() }

// Seed 001 Phase 3: start_task_from_chat and update_task_from_chat over
// MCP: success from a chat session, the ancestor refusal in the seed's
// words, and seed 000's refusal from a task session.
func TestSeedPhase3ChatToTask(t *testing.T) {
	c := newCrew(t)
	mgr := c.session(t, "manager-dev", "task")
	chat := c.session(t, "worker-frontend-01", "chat")
	task := c.createTask(t, mgr, "dashboard", "worker-frontend-01")

	r := refused(t, chat, "start_task_from_chat", map[string]any{"task_id": task, "requester_id": "worker-frontend-02"}, teams.ECodeUnauthorized)
	if r.body["success"] != false || r.str("error") != "unauthorized" || !strings.Contains(r.str("message"), "上位者") {
		t.Errorf("the seed's error response: %v", r.body)
	}
	if c.task(t, task).Status != teams.StatusTodo {
		t.Fatal("a refused start changed the task")
	}
	taskSess := c.session(t, "worker-frontend-01", "task")
	r = tool(t, taskSess, "start_task_from_chat", map[string]any{"task_id": task, "requester_id": "manager-dev"})
	if !r.res.IsError || !strings.Contains(textOf(r.res), "Tool 'start_task_from_chat' requires a chat session. Current session purpose is 'task'.") {
		t.Errorf("from a task session: %s", textOf(r.res))
	}
	r = ok(t, chat, "start_task_from_chat", map[string]any{"task_id": task, "requester_id": "manager-dev"})
	want := map[string]any{"success": true, "task_id": task, "previous_status": "todo", "new_status": "in_progress", "requester_id": c.id("manager-dev")}
	got := map[string]any{}
	for k := range want {
		got[k] = r.body[k]
	}
	if diff := cmp.Diff(want, got); diff != "" || !strings.Contains(r.str("instruction"), "タスクセッション") {
		t.Errorf("start_task_from_chat (-want +got):\n%s\n%s", diff, r.str("instruction"))
	}
	// The chat connection is made with the agent's token: nothing to log
	// out of, so the instruction does not say to (found by a new-user test).
	if ins := r.str("instruction"); strings.Contains(ins, "logout") || !strings.Contains(ins, "?purpose=task") {
		t.Errorf("instruction for a token connection: %s", ins)
	}

	r = ok(t, chat, "update_task_from_chat", map[string]any{"task_id": task, "requester_id": "manager-dev", "description": "更新された説明", "priority": "high"})
	if diff := cmp.Diff([]any{"description", "priority"}, r.body["updated_fields"]); diff != "" {
		t.Errorf("updated_fields (-want +got):\n%s", diff)
	}
	if got := c.task(t, task); got.Description != "更新された説明" || got.Priority != "high" {
		t.Errorf("task after update_task_from_chat: %+v", got)
	}
	refused(t, chat, "update_task_from_chat", map[string]any{"task_id": task, "requester_id": "worker-qa-01", "title": "x"}, teams.ECodeUnauthorized)
	refused(t, chat, "update_task_from_chat", map[string]any{"task_id": task, "requester_id": "ghost", "title": "x"}, teams.ECodeAgentNotFound)
	d, _ := c.in.API.Board.Detail(task)
	if len(d.ChatModifications) != 2 || !d.ChatModifications[0].Warning {
		// The manager never wrote to the worker in chat: flagged.
		t.Errorf("chat modifications: %+v", d.ChatModifications)
	}
}

// Seed 001 Phase 4: notify_task_session (chat only) → the task session's
// next response carries _chat_notification (structured content, _meta and
// a text block), once; priority high replaces the response;
// get_conversation_messages is task-only and for participants.
func TestSeedPhase4Notifications(t *testing.T) {
	c := newCrew(t)
	mgrChat := c.session(t, "manager-dev", "chat")
	chat := c.session(t, "worker-frontend-01", "chat")
	task := c.session(t, "worker-frontend-01", "task")
	// A misspelt argument is refused, not dropped: the message would
	// otherwise never be sent.
	refused(t, mgrChat, "start_conversation", map[string]any{"participant_id": "worker-frontend-01", "message": "指示です"}, core.EInvalid)
	r := ok(t, mgrChat, "start_conversation", map[string]any{"participant_id": "worker-frontend-01", "initial_message": "指示です"})
	conv := r.str("conversation_id")
	ok(t, chat, "respond_chat", map[string]any{"conversation_id": conv, "content": "承知しました"})
	ok(t, task, "get_my_tasks", nil) // takes the invitation to the chat out of the way

	refused(t, task, "notify_task_session", map[string]any{"conversation_id": conv}, core.EForbidden)
	refused(t, chat, "notify_task_session", map[string]any{"conversation_id": "conv_abc"}, teams.ECodeConversationNotFound)
	r = ok(t, chat, "notify_task_session", map[string]any{"conversation_id": conv, "message": "確認してください"})
	if r.str("type") != teams.NotifyChatSession || r.str("target_agent_id") != c.id("worker-frontend-01") || r.str("conversation_id") != conv {
		t.Errorf("notify_task_session = %v", r.body)
	}

	// A refused call of the task session ran nothing: the notification
	// waits for the next call that runs (found by a new-user test: it was
	// used up on a refusal).
	refused(t, task, "notify_task_session", map[string]any{"conversation_id": conv}, core.EForbidden)
	// The next call of the task session: the answer plus the notification.
	r = ok(t, task, "get_my_tasks", nil)
	var sc map[string]any
	raw, _ := json.Marshal(r.res.StructuredContent)
	json.Unmarshal(raw, &sc)
	cn, _ := sc["_chat_notification"].(map[string]any)
	if cn["conversation_id"] != conv || cn["message"] != "確認してください" || cn["from"] != teams.FromSelfChatSession {
		t.Fatalf("structured _chat_notification = %v", sc)
	}
	if _, ok := sc["tasks"]; !ok {
		t.Error("the original answer is gone from the structured content")
	}
	if len(r.res.Content) != 2 || !strings.Contains(textOf(r.res), `"_chat_notification"`) || r.res.Meta[teams.MetaNotifications] == nil {
		t.Errorf("text block / _meta missing: %d blocks, meta %v", len(r.res.Content), r.res.Meta)
	}
	// Once.
	if r = ok(t, task, "get_my_tasks", nil); len(r.res.Content) != 1 || r.res.Meta[teams.MetaNotifications] != nil {
		t.Errorf("delivered twice: %s", textOf(r.res))
	}
	// The task session reads the conversation.
	r = ok(t, task, "get_conversation_messages", map[string]any{"conversation_id": conv})
	msgs := r.body["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["content"] != "指示です" || msgs[0].(map[string]any)["sender_name"] != "manager-dev" || r.body["total_count"] != 2.0 {
		t.Errorf("get_conversation_messages = %v", r.body)
	}
	refused(t, chat, "get_conversation_messages", map[string]any{"conversation_id": conv}, core.EForbidden)
	refused(t, c.session(t, "worker-frontend-02", "task"), "get_conversation_messages", map[string]any{"conversation_id": conv}, teams.ECodeUnauthorized)
	refused(t, task, "get_conversation_messages", map[string]any{"conversation_id": "conv_nope"}, teams.ECodeConversationNotFound)

	// An interrupt replaces the response, even of a downstream tool, and
	// says the call ran.
	ok(t, chat, "notify_task_session", map[string]any{"conversation_id": conv, "message": "今すぐ", "priority": "high"})
	res, err := task.CallTool(context.Background(), &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	var block teams.NotificationBlock
	if len(res.Content) != 1 || json.Unmarshal([]byte(textOf(res)), &block) != nil || !block.Interrupted || block.InterruptedTool != "everything__echo" ||
		block.CallStatus != "completed" || block.ChatNotification == nil || block.ChatNotification.Type != teams.NotifyInterrupt {
		t.Fatalf("interrupted echo = %s", textOf(res))
	}
	if got := c.everything.Started(); !slices.Equal(got, []string{"echo"}) {
		t.Errorf("the interrupted call did not run: %v", got)
	}
	// A downstream tool's answer gets the block appended, its structured
	// content (checked against its output schema) left alone.
	ok(t, chat, "notify_task_session", map[string]any{"conversation_id": conv, "message": "later"})
	res, err = task.CallTool(context.Background(), &mcp.CallToolParams{Name: "everything__add", Arguments: map[string]any{"a": 1, "b": 2}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = json.Marshal(res.StructuredContent)
	if res.IsError || string(raw) != `{"sum":3}` || len(res.Content) != 2 || !strings.Contains(textOf(res), `"message":"later"`) {
		t.Errorf("downstream answer with a notification: structured %s, text %s", raw, textOf(res))
	}
	// Chat sessions get nothing.
	ok(t, chat, "notify_task_session", map[string]any{"conversation_id": conv, "message": "for the task session"})
	if r := ok(t, chat, "get_my_tasks", nil); len(r.res.Content) != 1 {
		t.Errorf("a chat session got a notification: %s", textOf(r.res))
	}
}

// Notifications under concurrent calls: two task sessions of one agent
// calling at once receive every notification exactly once between them.
func TestNotificationsDeliveredOnceConcurrently(t *testing.T) {
	c := newCrew(t)
	mgrChat := c.session(t, "manager-dev", "chat")
	chat := c.session(t, "worker-frontend-01", "chat")
	conv := ok(t, mgrChat, "start_conversation", map[string]any{"participant_id": "worker-frontend-01"}).str("conversation_id")
	sessions := []*mcp.ClientSession{c.session(t, "worker-frontend-01", "task"), c.session(t, "worker-frontend-01", "task")}
	ok(t, sessions[0], "get_my_tasks", nil) // the invitation
	const n = 30
	var sent []string
	for i := range n {
		sent = append(sent, ok(t, chat, "notify_task_session", map[string]any{"conversation_id": conv, "message": fmt.Sprint(i)}).str("notification_id"))
	}
	var mu sync.Mutex
	var got []string
	var wg sync.WaitGroup
	for _, s := range sessions {
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 8 {
					res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_my_task"})
					if err != nil {
						t.Error(err)
						return
					}
					raw, _ := json.Marshal(res.Meta[teams.MetaNotifications])
					var b teams.NotificationBlock
					json.Unmarshal(raw, &b)
					mu.Lock()
					if b.ChatNotification != nil {
						got = append(got, b.ChatNotification.NotificationID)
					}
					for _, d := range b.Notifications {
						got = append(got, d.NotificationID)
					}
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	slices.Sort(sent)
	slices.Sort(got)
	if diff := cmp.Diff(sent, got); diff != "" {
		t.Errorf("notifications delivered (-sent +received):\n%s", diff)
	}
}

// Seed 001 Phase 5, scenario 1 (the basic flow): the manager creates and
// assigns a task, explains it in chat; the worker asks, then starts it
// from chat at the manager's request; the worker's task session works on
// it and reports it done; the manager hears of it.
func TestSeedE2EManagerAsksWorkerToStart(t *testing.T) {
	c := newCrew(t)
	mgr := c.session(t, "manager-dev", "task")
	mgrChat := c.session(t, "manager-dev", "chat")
	wChat := c.session(t, "worker-frontend-01", "chat")
	wTask := c.session(t, "worker-frontend-01", "task")

	r := ok(t, mgr, "create_tasks_batch", map[string]any{"tasks": []any{
		map[string]any{"local_id": "dashboard", "title": "Dashboard"},
		map[string]any{"local_id": "orders", "title": "Orders", "assignee_id": "worker-frontend-02"},
	}})
	created := r.body["tasks"].([]any)
	dashboard := created[0].(map[string]any)["task_id"].(string)
	ok(t, mgr, "assign_task", map[string]any{"task_id": dashboard, "assignee_id": "worker-frontend-01"})
	ok(t, mgr, "update_task_status", map[string]any{"task_id": dashboard, "status": "todo"})
	r = ok(t, mgr, "delegate_to_chat_session", map[string]any{"target_agent_id": "worker-frontend-01", "message": "Details for the dashboard: …", "related_task_id": dashboard})
	conv := r.str("conversation_id")

	// The worker's task session is sent to the chat.
	if r := ok(t, wTask, "get_next_action", nil); r.str("action") != teams.NextCheckNotification && r.str("action") != teams.NextStartTask {
		t.Errorf("worker task session, next action = %v", r.body)
	}
	r = ok(t, wChat, "get_pending_messages", nil)
	if msgs := r.body["messages"].([]any); len(msgs) != 1 || msgs[0].(map[string]any)["conversation_id"] != conv {
		t.Fatalf("worker pending = %v", r.body)
	}
	ok(t, wChat, "respond_chat", map[string]any{"conversation_id": conv, "content": "Which API does it use?"})
	r = ok(t, mgrChat, "get_pending_messages", nil)
	if len(r.body["messages"].([]any)) != 1 {
		t.Fatalf("manager pending = %v", r.body)
	}
	ok(t, mgrChat, "respond_chat", map[string]any{"conversation_id": conv, "content": "The orders API. Please start now."})
	ok(t, wChat, "get_pending_messages", nil)
	r = ok(t, wChat, "start_task_from_chat", map[string]any{"task_id": dashboard, "requester_id": "manager-dev"})
	if r.str("new_status") != "in_progress" || r.str("conversation_id") != conv {
		t.Fatalf("start_task_from_chat = %v", r.body)
	}
	d, _ := c.in.API.Board.Detail(dashboard)
	if d.Task.StartedFromConversationID != conv || len(d.ChatModifications) != 1 || d.ChatModifications[0].Warning {
		t.Errorf("the task's chat link and audit: %+v %+v", d.Task, d.ChatModifications)
	}

	r = ok(t, wTask, "get_next_action", nil)
	for r.str("action") == teams.NextCheckNotification { // the delegation's call to the chat, already answered
		r = ok(t, wTask, "get_next_action", nil)
	}
	if r.str("action") != teams.NextContinueTask || r.body["task"].(map[string]any)["task_id"] != dashboard {
		t.Fatalf("worker next action = %v", r.body)
	}
	ok(t, wTask, "report_completed", map[string]any{"result": "success", "summary": "dashboard done"})
	if got := c.task(t, dashboard); got.Status != teams.StatusDone || got.Result != "success" {
		t.Errorf("after report_completed: %+v", got)
	}
	r = ok(t, mgr, "get_next_action", nil)
	notes, _ := r.body["notifications"].([]any)
	found := false
	for _, n := range notes {
		found = found || strings.Contains(n.(map[string]any)["message"].(string), "is done")
	}
	if !found {
		t.Errorf("the manager was not told the task is done: %v", r.body)
	}
	if r.str("action") == teams.NextAllDone {
		t.Errorf("manager all done while the orders task is open: %v", r.body)
	}
}

// Seed 001 Phase 5, scenario 2: the worker gets an instruction in chat,
// notifies its own task session, which reads the conversation.
func TestSeedE2EChatNotificationToTaskSession(t *testing.T) {
	c := newCrew(t)
	mgrChat := c.session(t, "manager-dev", "chat")
	wChat := c.session(t, "worker-frontend-01", "chat")
	wTask := c.session(t, "worker-frontend-01", "task")
	mgr := c.session(t, "manager-dev", "task")
	taskID := c.createTask(t, mgr, "task X", "worker-frontend-01")
	ok(t, wTask, "update_task_status", map[string]any{"task_id": taskID, "status": "in_progress"})
	conv := ok(t, mgrChat, "start_conversation", map[string]any{"participant_id": "worker-frontend-01",
		"initial_message": "今すぐタスクXの仕様を変更してください", "related_task_id": taskID}).str("conversation_id")
	ok(t, wChat, "get_pending_messages", nil)
	ok(t, wChat, "respond_chat", map[string]any{"conversation_id": conv, "content": "承知しました。詳細を確認します。"})
	ok(t, wChat, "notify_task_session", map[string]any{"conversation_id": conv, "message": "Manager から緊急の仕様変更指示があります",
		"related_task_id": taskID, "priority": "high"})

	// The task session's next call, whatever it is, is interrupted.
	res, err := wTask.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_my_task"})
	if err != nil {
		t.Fatal(err)
	}
	var block teams.NotificationBlock
	if err := json.Unmarshal([]byte(textOf(res)), &block); err != nil || block.ChatNotification == nil {
		t.Fatalf("interrupt = %s", textOf(res))
	}
	cn := block.ChatNotification
	if cn.ConversationID != conv || cn.From != teams.FromSelfChatSession || cn.RelatedTaskID != taskID || !strings.Contains(cn.Instruction, "get_conversation_messages") {
		t.Errorf("_chat_notification = %+v", cn)
	}
	r := ok(t, wTask, "get_conversation_messages", map[string]any{"conversation_id": cn.ConversationID})
	msgs := r.body["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["content"] != "今すぐタスクXの仕様を変更してください" {
		t.Errorf("messages = %v", msgs)
	}
}

// The pilot failure of seed 001: a manager asks for extra work in chat
// after the tracked work is done. Until that work is a tracked task and
// done, neither the worker nor the manager is told "all done"; afterwards
// both are.
func TestPilotFailureExtraWorkInChat(t *testing.T) {
	c := newCrew(t)
	mgr := c.session(t, "manager-dev", "task")
	mgrChat := c.session(t, "manager-dev", "chat")
	wTask := c.session(t, "worker-frontend-01", "task")
	wChat := c.session(t, "worker-frontend-01", "chat")
	notAllDone := func(step string, sessions ...*mcp.ClientSession) {
		t.Helper()
		for i, s := range sessions {
			if r := ok(t, s, "get_next_action", nil); r.str("action") == teams.NextAllDone {
				t.Fatalf("%s: session %d is told all done: %v", step, i, r.body)
			}
		}
	}
	first := c.createTask(t, mgr, "the tracked work", "worker-frontend-01")
	ok(t, wTask, "update_task_status", map[string]any{"task_id": first, "status": "in_progress"})
	ok(t, wTask, "report_completed", map[string]any{"result": "success"})

	// The manager asks for more in chat: communication, not yet a task.
	conv := ok(t, mgr, "delegate_to_chat_session", map[string]any{"target_agent_id": "worker-frontend-01",
		"message": "One more thing: add CSV export to the orders page."}).str("conversation_id")
	notAllDone("asked, unread", mgr, wTask, wChat, mgrChat)
	ok(t, wChat, "get_pending_messages", nil)
	notAllDone("read, unanswered", mgr, wTask, wChat)
	ok(t, wChat, "respond_chat", map[string]any{"conversation_id": conv, "content": "Will do; tracking it as a task."})
	r := ok(t, wChat, "request_task", map[string]any{"title": "CSV export on the orders page", "requester_id": "manager-dev", "conversation_id": conv})
	extra := r.str("task_id")
	notAllDone("tracked, not started", mgr, wTask, wChat)
	r = ok(t, wTask, "get_next_action", nil)
	for r.str("action") == teams.NextCheckNotification || r.str("action") == teams.NextCheckChat {
		r = ok(t, wTask, "get_next_action", nil)
		if r.str("action") == teams.NextCheckChat {
			break
		}
	}
	if r.str("action") != teams.NextStartTask || r.body["task"].(map[string]any)["task_id"] != extra {
		t.Fatalf("worker's next action once the work is a task: %v", r.body)
	}
	ok(t, wTask, "update_task_status", map[string]any{"task_id": extra, "status": "in_progress"})
	notAllDone("in progress", mgr, wTask)
	ok(t, wTask, "report_completed", map[string]any{"result": "success"})
	ok(t, mgrChat, "get_pending_messages", nil)
	ok(t, mgrChat, "end_conversation", map[string]any{"conversation_id": conv, "summary": "Thanks!"})
	ok(t, wChat, "get_pending_messages", nil)
	for name, s := range map[string]*mcp.ClientSession{"manager": mgr, "worker": wTask} {
		r := ok(t, s, "get_next_action", nil)
		for i := 0; i < 5 && r.str("action") == teams.NextCheckNotification; i++ {
			r = ok(t, s, "get_next_action", nil)
		}
		if r.str("action") != teams.NextAllDone {
			t.Errorf("%s after everything is done: %v", name, r.body)
		}
	}
}

// Bad input over MCP: the seed's codes, and nothing changed.
func TestTeamToolsBadInput(t *testing.T) {
	c := newCrew(t)
	mgr := c.session(t, "manager-dev", "task")
	chat := c.session(t, "worker-frontend-01", "chat")
	wTask := c.session(t, "worker-frontend-01", "task")
	task := c.createTask(t, mgr, "stable", "worker-frontend-01")
	conv := ok(t, c.session(t, "manager-dev", "chat"), "start_conversation", map[string]any{"participant_id": "worker-frontend-01"}).str("conversation_id")
	cases := []struct {
		name string
		sess *mcp.ClientSession
		tool string
		args map[string]any
		code string
	}{
		{"unknown task", wTask, "update_task_status", map[string]any{"task_id": "tsk_nope", "status": "in_progress"}, teams.ECodeTaskNotFound},
		{"missing task id", wTask, "update_task_status", map[string]any{"status": "in_progress"}, core.EInvalid},
		{"invalid transition", wTask, "update_task_status", map[string]any{"task_id": task, "status": "done"}, teams.ECodeInvalidTransition},
		{"unknown status", wTask, "update_task_status", map[string]any{"task_id": task, "status": "finished"}, core.EInvalid},
		{"blocked without reason", wTask, "update_task_status", map[string]any{"task_id": task, "status": "blocked"}, core.EInvalid},
		{"unknown conversation", wTask, "get_conversation_messages", map[string]any{"conversation_id": "conv_nope"}, teams.ECodeConversationNotFound},
		{"limit out of range", wTask, "get_conversation_messages", map[string]any{"conversation_id": conv, "limit": 0}, core.EInvalid},
		{"wrong argument type", wTask, "get_my_tasks", map[string]any{"limit": "many"}, core.EInvalid},
		{"cycle", mgr, "create_tasks_batch", map[string]any{"tasks": []any{
			map[string]any{"local_id": "a", "title": "a", "depends_on": []any{"b"}},
			map[string]any{"local_id": "b", "title": "b", "depends_on": []any{"a"}}}}, teams.ECodeDependencyCycle},
		{"empty batch", mgr, "create_tasks_batch", map[string]any{"tasks": []any{}}, core.EInvalid},
		{"oversized message", chat, "respond_chat", map[string]any{"conversation_id": conv, "content": strings.Repeat("x", teams.MaxMessage+1)}, core.ETooLarge},
		{"requester not an agent", chat, "start_task_from_chat", map[string]any{"task_id": task, "requester_id": "tsk_123"}, teams.ECodeAgentNotFound},
		{"requester missing", chat, "start_task_from_chat", map[string]any{"task_id": task}, core.EInvalid},
		{"assign to a stranger", mgr, "assign_task", map[string]any{"task_id": task, "assignee_id": "ghost"}, teams.ECodeAgentNotFound},
		{"send to nobody", chat, "send_message", map[string]any{"target_agent_id": "ghost", "content": "hi"}, teams.ECodeAgentNotFound},
		{"worker assigning", wTask, "assign_task", map[string]any{"task_id": task, "assignee_id": "worker-frontend-01"}, core.EForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := c.task(t, task)
			r := refused(t, tc.sess, tc.tool, tc.args, tc.code)
			if tc.code != core.EForbidden && (r.body["success"] != false || r.str("error") != tc.code) {
				t.Errorf("not the seed's error shape: %v", r.body)
			}
			after := c.task(t, task)
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("a refused call changed the task (-before +after):\n%s", diff)
			}
		})
	}
	v, _ := c.in.API.Chat.Messages(conv, 10, 0)
	if v.Total != 0 {
		t.Errorf("refused writes stored %d messages", v.Total)
	}
	if v, _ := c.in.API.Board.Get(crewProject, ""); len(v.Columns[1].Tasks) != 1 {
		t.Errorf("refused batches stored tasks: %+v", v.Columns)
	}
}

// The session_token argument (seed style) works with the team tools: an
// unauthenticated connection passing another session's token acts as that
// session.
func TestSessionTokenArgument(t *testing.T) {
	c := newCrew(t)
	anon := c.connect(t, "", "", nil)
	waitTool(t, anon, "authenticate")
	r := ok(t, anon, "authenticate", map[string]any{"agent_id": "worker-frontend-01", "passkey": c.agents["worker-frontend-01"].Passkey,
		"project_id": crewProject, "purpose": "chat"})
	tok := r.str("session_token")
	other := c.connect(t, "", "", nil)
	waitTool(t, other, "help")
	r = ok(t, other, "get_pending_messages", map[string]any{"session_token": tok})
	if r.str("agent_id") != c.id("worker-frontend-01") {
		t.Errorf("get_pending_messages with session_token = %v", r.body)
	}
	refused(t, other, "get_my_tasks", nil, core.EUnauthorized)

	// The token names the caller and goes no further: a server never sees
	// Airlock's credential (found by a new-user test: it reached the
	// approval dialog and a rule made from it, and servers got it).
	res, err := other.CallTool(context.Background(), &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "hi", "session_token": tok}})
	if err != nil || res.IsError || textOf(res) != "Echo: hi" {
		t.Fatalf("echo with a session_token argument: %v %s", err, textOf(res))
	}
	recs, _ := c.in.API.Activity.List(core.ActivityFilter{Tool: "echo"})
	if len(recs) == 0 || strings.Contains(recs[0].Arguments, "session_token") {
		t.Errorf("the audit record of the echo: %+v", recs)
	}
}

// The Board and Chat areas: a card moved by the owner shows in the
// agent's next get_my_tasks; an agent's change reaches the screen as
// board:changed; the owner's message reaches the agent's
// get_pending_messages and the screen as chat:message.
func TestBoardAndChatScreens(t *testing.T) {
	c := newCrew(t)
	sub := c.in.Hub.Subscribe([]string{events.Topic(teams.EventBoardChanged), events.Topic(teams.EventChatMessage)})
	defer sub.Close()
	mgr := c.session(t, "manager-dev", "task")
	wTask := c.session(t, "worker-frontend-01", "task")
	task := c.createTask(t, mgr, "on the board", "worker-frontend-01")
	waitEvent(t, sub, teams.EventBoardChanged, func(p any) bool { return slices.Contains(p.(teams.BoardChanged).TaskIDs, task) })

	card, err := c.in.API.Board.Move(task, teams.StatusInProgress, "")
	if err != nil {
		t.Fatal(err)
	}
	if card.StatusChangedByAgentID != authz.OwnerID || card.StatusChangedByName != "owner" || card.AssigneeName != "worker-frontend-01" {
		t.Errorf("moved card = %+v", card)
	}
	r := ok(t, wTask, "get_my_tasks", nil)
	if st := r.body["tasks"].([]any)[0].(map[string]any)["status"]; st != "in_progress" {
		t.Errorf("the agent sees status %v after the owner's move", st)
	}
	if _, err := c.in.API.Board.Move(task, teams.StatusTodo+"x", ""); core.ErrorCode(err) != core.EInvalid {
		t.Errorf("a bad move: %v", err)
	}
	ok(t, wTask, "report_completed", map[string]any{"result": "success"})
	waitEvent(t, sub, teams.EventBoardChanged, func(p any) bool {
		b := p.(teams.BoardChanged)
		return b.AgentID == c.id("worker-frontend-01") && slices.Contains(b.TaskIDs, task)
	})
	view, err := c.in.API.Board.Get(crewProject, "")
	if err != nil {
		t.Fatal(err)
	}
	var done []string
	for _, col := range view.Columns {
		if col.Status == teams.StatusDone {
			for _, tc := range col.Tasks {
				done = append(done, tc.ID)
			}
		}
	}
	if !slices.Equal(done, []string{task}) {
		t.Errorf("done column = %v", done)
	}
	d, err := c.in.API.Board.Detail(task)
	if err != nil {
		t.Fatal(err)
	}
	var who []string
	for _, h := range d.History {
		who = append(who, h.Kind+":"+h.ToStatus+":"+h.AgentName)
	}
	if diff := cmp.Diff([]string{"created:todo:manager-dev", "status:in_progress:owner", "status:done:worker-frontend-01"}, who); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}

	conv, err := c.in.API.Chat.Start(crewProject, []string{"worker-frontend-01"}, "from the owner", "Please look at the CSV bug.")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.in.API.Chat.Send(conv.ID, "It is urgent."); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, sub, teams.EventChatMessage, func(p any) bool { return p.(teams.ChatMessageEvent).Message.Content == "It is urgent." })
	wChat := c.session(t, "worker-frontend-01", "chat")
	r = ok(t, wChat, "get_pending_messages", nil)
	var contents []string
	for _, m := range r.body["messages"].([]any) {
		contents = append(contents, m.(map[string]any)["sender_name"].(string)+": "+m.(map[string]any)["content"].(string))
	}
	if diff := cmp.Diff([]string{"owner: Please look at the CSV bug.", "owner: It is urgent."}, contents); diff != "" {
		t.Errorf("the owner's messages as the agent reads them (-want +got):\n%s", diff)
	}
	ok(t, wChat, "respond_chat", map[string]any{"conversation_id": conv.ID, "content": "On it."})
	list, err := c.in.API.Chat.Conversations(crewProject)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Unread != 1 || list[0].LastMessage == nil || list[0].LastMessage.Content != "On it." {
		t.Errorf("the owner's conversation list = %+v", list)
	}
	if err := c.in.API.Chat.MarkRead(conv.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := c.in.API.Chat.Conversations(crewProject); list[0].Unread != 0 {
		t.Errorf("unread after MarkRead = %d", list[0].Unread)
	}
}

// waitEvent waits for an event named name whose payload satisfies match.
func waitEvent(t *testing.T, sub *events.Sub, name string, match func(any) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e := <-sub.C():
			if e.Name == name && match(e.Payload) {
				return
			}
		case <-deadline:
			t.Fatalf("no %s event", name)
		}
	}
}

// The coordinator's tools: health_check, list_managed_agents and
// get_agent_action, which says to start an agent with work (in the right
// session), keep one running, stop an idle one, and leave the rest.
func TestCoordinatorTools(t *testing.T) {
	c := newCrew(t)
	coord := c.session(t, "coordinator", "task")
	mgr := c.session(t, "manager-dev", "task")
	r := ok(t, coord, "health_check", nil)
	// The crew and the owner; not "default", which is in no project of the
	// coordinator's.
	if r.str("status") != "ok" || r.body["agents"] != 7.0 || r.body["projects"] != 1.0 {
		t.Errorf("health_check = %v", r.body)
	}
	refused(t, c.session(t, "worker-frontend-01", "task"), "health_check", nil, core.EForbidden)

	ready := c.createTask(t, mgr, "ready work", "worker-frontend-01")
	ok(t, c.session(t, "manager-dev", "chat"), "start_conversation", map[string]any{"participant_id": "worker-frontend-02", "initial_message": "a question"})
	card, err := c.in.API.Board.Create(crewProject, teams.TaskInput{Title: "running work", AssigneeID: "worker-qa-01", Status: teams.StatusTodo})
	if err != nil {
		t.Fatal(err)
	}
	busy := card.ID
	if _, err := c.in.API.Board.Move(busy, teams.StatusInProgress, ""); err != nil {
		t.Fatal(err)
	}
	run, err := c.in.Teams().StartExecution(busy, c.id("worker-qa-01"))
	if err != nil {
		t.Fatal(err)
	}
	// qa-lead runs with no work of its own: it is to be stopped.
	if _, err := c.in.Teams().StartExecution(busy, c.id("qa-lead")); err != nil {
		t.Fatal(err)
	}

	r = ok(t, coord, "list_managed_agents", nil)
	got := map[string]map[string]any{}
	for _, a := range r.body["agents"].([]any) {
		m := a.(map[string]any)
		got[m["name"].(string)] = m
	}
	if _, ok := got["owner"]; ok || len(got) != 5 {
		t.Errorf("managed agents = %v", got)
	}
	if got["worker-frontend-01"]["todo_tasks"] != 1.0 || got["worker-frontend-02"]["pending_messages"] != 1.0 || got["worker-qa-01"]["running_execution_id"] != run.ID {
		t.Errorf("managed agents' counts = %v", got)
	}
	cases := []struct {
		agent, action, purpose, task string
	}{
		{"worker-frontend-01", teams.AgentStart, "task", ready},
		{"worker-frontend-02", teams.AgentStart, "chat", ""},
		{"worker-qa-01", teams.AgentKeepRunning, "", ""},
		{"qa-lead", teams.AgentStop, "", ""},
		{"manager-dev", teams.AgentNone, "", ""},
	}
	for _, tc := range cases {
		r := ok(t, coord, "get_agent_action", map[string]any{"agent_id": tc.agent})
		if r.str("action") != tc.action || r.str("session_purpose") != tc.purpose || r.str("task_id") != tc.task {
			t.Errorf("%s: %v, want %s %s %s", tc.agent, r.body, tc.action, tc.purpose, tc.task)
		}
	}
	refused(t, coord, "get_agent_action", map[string]any{"agent_id": "ghost"}, teams.ECodeAgentNotFound)
	refused(t, coord, "get_agent_action", map[string]any{"agent_id": "owner"}, teams.ECodeUnauthorized)
}

// A change the CLI makes in another process (here: another connection to
// the same database) reaches the agent it concerns: its task session's
// next responses carry the notification, once, even though nobody told
// the running Airlock.
func TestCLIChangeNotifiesAgent(t *testing.T) {
	c := newCrew(t)
	mgr := c.session(t, "manager-dev", "task")
	wTask := c.session(t, "worker-frontend-01", "task")
	task := c.createTask(t, mgr, "moved by a script", "worker-frontend-01")
	ok(t, wTask, "get_my_tasks", nil) // the assignment
	db, err := store.Open(filepath.Join(c.in.Info.DataDir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out strings.Builder
	if err := cli.RunTasks(context.Background(), db, []string{"move", task, "blocked", "--reason", "waiting for the API key"}, &out, &out); err != nil {
		t.Fatalf("tasks move: %v %s", err, out.String())
	}
	var got []string
	testutil.Eventually(t, 10*time.Second, func() bool {
		r := ok(t, wTask, "get_my_task", nil)
		raw, _ := json.Marshal(r.res.Meta[teams.MetaNotifications])
		var b teams.NotificationBlock
		json.Unmarshal(raw, &b)
		for _, d := range b.Notifications {
			got = append(got, d.Message)
		}
		return len(got) > 0
	}, "the agent never heard of the CLI's move")
	if len(got) != 1 || !strings.Contains(got[0], "owner moved your task") || !strings.Contains(got[0], "waiting for the API key") {
		t.Errorf("notifications = %q", got)
	}
	if r := ok(t, wTask, "get_my_task", nil); r.res.Meta[teams.MetaNotifications] != nil {
		t.Errorf("delivered twice: %s", textOf(r.res))
	}
}

// The owner can ask a task's assignee about the task from the Board: the
// conversation is with the assignee, named after the task, linked in its
// detail, and the agent's chat session gets the message. A task without an
// assignee says so.
func TestOwnerAsksAboutATask(t *testing.T) {
	c := newCrew(t)
	manager := c.session(t, "manager-dev", core.PurposeTask)
	task := c.createTask(t, manager, "Fix the login page", "worker-frontend-01")
	conv, err := c.in.API.Chat.StartAboutTask(task, "Is the login fix on track?")
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.in.API.Board.Detail(task)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Conversations) != 1 || d.Conversations[0].ID != conv.ID || d.Conversations[0].Topic != "Fix the login page" {
		t.Errorf("the task's conversations = %+v, want the new one about it", d.Conversations)
	}
	chat := c.session(t, "worker-frontend-01", core.PurposeChat)
	if got := textOf(ok(t, chat, "get_pending_messages", nil).res); !strings.Contains(got, "Is the login fix on track?") {
		t.Errorf("the worker's pending messages = %s", got)
	}
	unassigned := c.createTask(t, manager, "Nobody's yet", "")
	if _, err := c.in.API.Chat.StartAboutTask(unassigned, "hello?"); core.ErrorCode(err) != core.EInvalid {
		t.Errorf("asking about an unassigned task: %v, want invalid", err)
	}
}

// get_my_tasks in a session that named no project lists the tasks of the
// agent's project, as every task tool takes it: not those of a project the
// agent has left (found by a new-user test: it listed them, while
// get_next_action said all was done and update_task_status could not find
// them).
func TestMyTasksFollowTheAgentsProject(t *testing.T) {
	c := newCrew(t)
	manager := c.session(t, "manager-dev", "task")
	c.createTask(t, manager, "left behind", c.id("worker-frontend-02"))
	if _, err := c.in.API.Agents.CreateProject("proj-002", "elsewhere"); err != nil {
		t.Fatal(err)
	}
	worker := c.connect(t, c.agents["worker-frontend-02"].Token, "?purpose=task", nil)
	if r := ok(t, worker, "get_my_tasks", nil); r.body["total_count"] != float64(1) {
		t.Fatalf("get_my_tasks in the agent's project = %v, want the one task", r.body)
	}
	projects := []string{"proj-002"}
	if _, err := c.in.API.Agents.Update(c.id("worker-frontend-02"), authz.AgentUpdate{Projects: &projects}); err != nil {
		t.Fatal(err)
	}
	if r := ok(t, worker, "get_my_tasks", nil); r.body["total_count"] != float64(0) {
		t.Errorf("get_my_tasks after the agent left the project = %v, want none", r.body)
	}
}

// Taking an agent off a project, on the Agents screen or by the CLI in
// another process, leaves none of its open tasks there assigned to it (found
// by a new-user test: they stayed with an agent that could no longer see
// them), and one in progress goes back to todo.
func TestTasksOfAnAgentTakenOffAProject(t *testing.T) {
	c := newCrew(t)
	manager := c.session(t, "manager-dev", "task")
	started := c.createTask(t, manager, "started", c.id("worker-frontend-01"))
	waiting := c.createTask(t, manager, "waiting", c.id("worker-frontend-01"))
	kept := c.createTask(t, manager, "kept", c.id("worker-frontend-02"))
	worker := c.session(t, "worker-frontend-01", "task")
	ok(t, worker, "update_task_status", map[string]any{"task_id": started, "status": "in_progress"})

	if _, err := c.in.API.Agents.Unassign(c.id("worker-frontend-01"), crewProject); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 20*time.Second, func() bool {
		return c.task(t, started).AssigneeID == "" && c.task(t, waiting).AssigneeID == ""
	}, "the tasks of the agent taken off the project are still assigned to it")
	if st := c.task(t, started).Status; st != teams.StatusTodo {
		t.Errorf("the task it had started is %s, want todo", st)
	}
	if a := c.task(t, kept).AssigneeID; a != c.id("worker-frontend-02") {
		t.Errorf("another agent's task went to %q", a)
	}
}
