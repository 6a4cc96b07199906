package teams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
)

// RegisterTools declares the team tools in az's tool table (Declare) and
// adds them to s, Airlock's own in-process MCP server. Each handler takes
// its caller from the request's _meta (core.MetaCaller, set by the
// dispatcher), refuses without one, and checks the caller again with
// az.Check before acting. Answers are JSON objects in the seeds' shape:
// success, the tool's fields and an instruction; refusals are tool errors
// whose text is {"success": false, "error": code, "message": …}.
func RegisterTools(s *mcp.Server, svc *Service, az *authz.Service) error {
	if err := Declare(az.Registry()); err != nil {
		return err
	}
	h := &tools{svc: svc}
	run := h.handlers()
	for _, name := range ToolNames() {
		def, _ := az.Registry().Lookup(name)
		fn, ok := run[name]
		if !ok {
			return core.Errorf(core.EInternal, "tool %s has no handler", name)
		}
		s.AddTool(&mcp.Tool{Name: def.Name, Description: def.Description, InputSchema: def.InputSchema}, handler(az, name, checked(name, def.InputSchema, svc.pinned(fn))))
	}
	return nil
}

type toolFunc func(ctx context.Context, c core.Caller, args json.RawMessage) (any, error)

// pinned gives a caller whose session names no project the project its
// session has worked in: the agent's only project when the session first
// used a team tool stays the session's when the agent is given a second
// one (found by a new-user test: adding a project turned every call of the
// sessions already open into project_required). A session that names no
// project and first comes when the agent has several still must name one.
func (s *Service) pinned(fn toolFunc) toolFunc {
	return func(ctx context.Context, c core.Caller, args json.RawMessage) (any, error) {
		if c.ProjectID == "" && c.Session != "" && c.AgentID != "" {
			if r, err := s.roster(); err == nil {
				if a, ok := r.byID[c.AgentID]; ok {
					switch p, ok := s.pinOf(c.Session, c.AgentID); {
					case len(a.Projects) == 1:
						s.pin(c.Session, c.AgentID, a.Projects[0])
					case ok && slices.Contains(a.Projects, p):
						c.ProjectID = p
					}
				}
			}
		}
		return fn(ctx, c, args)
	}
}

// maxPins bounds the sessions pinned to a project (pinned). Past it no
// new session is pinned, and those pinned stay: before, the table was
// cleared whole, and any agent that opened 10,001 sessions took every
// other agent's open sessions off their project (found by a red team).
// Pins go when their sessions end, so only that many sessions alive at
// once fill it.
var maxPins = 10000 // a variable for the tests

func (s *Service) pin(session, agentID, project string) {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	if s.pins == nil {
		s.pins = map[string]map[string]string{}
	}
	byAgent := s.pins[session]
	if _, ok := byAgent[agentID]; ok {
		return
	}
	if s.npins >= maxPins {
		return
	}
	if byAgent == nil {
		byAgent = map[string]string{}
		s.pins[session] = byAgent
	}
	byAgent[agentID] = project
	s.npins++
}

func (s *Service) pinOf(session, agentID string) (string, bool) {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	p, ok := s.pins[session][agentID]
	return p, ok
}

// SessionEnded forgets what MCP session sid was pinned to.
func (s *Service) SessionEnded(sid string) {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	s.npins -= len(s.pins[sid])
	delete(s.pins, sid)
}

// checked refuses arguments the tool's schema does not name before fn
// runs (see authz.UnknownArguments).
func checked(name string, schema json.RawMessage, fn toolFunc) toolFunc {
	return func(ctx context.Context, c core.Caller, args json.RawMessage) (any, error) {
		if err := authz.UnknownArguments(name, schema, args); err != nil {
			return nil, err
		}
		return fn(ctx, c, args)
	}
}

func handler(az *authz.Service, name string, fn toolFunc) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var meta map[string]any
		var args json.RawMessage
		if req.Params != nil {
			meta, args = req.Params.Meta, req.Params.Arguments
		}
		caller, ok := core.CallerFromMeta(meta)
		if !ok {
			return ErrorResult(core.Errorf(core.EInternal, "Airlock did not hand a caller to %s, so it refuses the call", name)), nil
		}
		if err := az.Check(&caller, core.Target{Kind: core.KindToolCall, Server: authz.Server, Name: name}); err != nil {
			return ErrorResult(err), nil
		}
		out, err := fn(ctx, caller, args)
		if err != nil {
			return ErrorResult(err), nil
		}
		// Compact JSON: a model reads it as well as indented, in fewer
		// tokens, and every hop through the gateway copies fewer bytes.
		text, err := json.Marshal(out)
		if err != nil {
			return ErrorResult(err), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: json.RawMessage(text)}, nil
	}
}

// ToolError is the body of a refused team tool call (seed 001's error
// response).
type ToolError struct {
	Success bool   `json:"success"`
	Error   string `json:"error"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

// ErrorResult is a tool error in seed 001's shape, also carrying the
// *core.Error in _meta["airlock/error"] as every Airlock refusal does.
func ErrorResult(err error) *mcp.CallToolResult {
	var e *core.Error
	if !errors.As(err, &e) {
		e = &core.Error{Code: core.EInternal, Message: err.Error()}
	}
	body := ToolError{Error: e.Code, Message: e.Message, Hint: e.Hint}
	text, _ := json.Marshal(body)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}},
		StructuredContent: json.RawMessage(text), Meta: mcp.Meta{"airlock/error": e}}
}

func decode(raw json.RawMessage, v any) error { return authz.DecodeArgs(raw, v) }

// limitOf applies a limit argument's default and bounds.
func limitOf(v *int, def, maxV int) (int, error) {
	if v == nil {
		return def, nil
	}
	if *v < 1 || *v > maxV {
		return 0, core.Errorf(core.EInvalid, "limit must be between 1 and %d", maxV)
	}
	return *v, nil
}

type tools struct{ svc *Service }

func (h *tools) handlers() map[string]toolFunc {
	return map[string]toolFunc{
		"health_check":              h.healthCheck,
		"list_managed_agents":       h.listManagedAgents,
		"get_agent_action":          h.getAgentAction,
		"get_my_task":               h.getMyTask,
		"get_my_tasks":              h.getMyTasks,
		"get_next_action":           h.getNextAction,
		"report_completed":          h.reportCompleted,
		"create_tasks_batch":        h.createTasksBatch,
		"assign_task":               h.assignTask,
		"update_task_status":        h.updateTaskStatus,
		"request_task":              h.requestTask,
		"start_task_from_chat":      h.startTaskFromChat,
		"update_task_from_chat":     h.updateTaskFromChat,
		"delegate_to_chat_session":  h.delegateToChatSession,
		"notify_task_session":       h.notifyTaskSession,
		"get_conversation_messages": h.getConversationMessages,
		"get_pending_messages":      h.getPendingMessages,
		"respond_chat":              h.respondChat,
		"start_conversation":        h.startConversation,
		"end_conversation":          h.endConversation,
		"send_message":              h.sendMessage,
		"get_my_execution_history":  h.getMyExecutionHistory,
		"get_execution_log":         h.getExecutionLog,
	}
}

// projectOf is the project a call works in: the session's, else the
// agent's only one.
func (h *tools) projectOf(c core.Caller) (string, error) {
	if c.ProjectID != "" {
		return c.ProjectID, nil
	}
	r, err := h.svc.roster()
	if err != nil {
		return "", err
	}
	return h.svc.project(r, c.AgentID, "")
}

// TaskView is a task as the tools show it (seed 001's snake_case).
type TaskView struct {
	TaskID                    string     `json:"task_id"`
	ProjectID                 string     `json:"project_id"`
	Title                     string     `json:"title"`
	Description               string     `json:"description,omitempty"`
	Status                    string     `json:"status"`
	Priority                  string     `json:"priority"`
	AssigneeID                string     `json:"assignee_id,omitempty"`
	CreatedByAgentID          string     `json:"created_by_agent_id,omitempty"`
	ParentTaskID              string     `json:"parent_task_id,omitempty"`
	DependsOn                 []string   `json:"depends_on,omitempty"`
	BlockedReason             string     `json:"blocked_reason,omitempty"`
	StatusChangedByAgentID    string     `json:"status_changed_by_agent_id,omitempty"`
	StartedFromConversationID string     `json:"started_from_conversation_id,omitempty"`
	RequestedInConversationID string     `json:"requested_in_conversation_id,omitempty"`
	CreatedAt                 time.Time  `json:"created_at"`
	UpdatedAt                 time.Time  `json:"updated_at"`
	CompletedAt               *time.Time `json:"completed_at,omitempty"`
}

func taskView(t Task) TaskView {
	return TaskView{TaskID: t.ID, ProjectID: t.ProjectID, Title: t.Title, Description: t.Description, Status: t.Status, Priority: t.Priority,
		AssigneeID: t.AssigneeID, CreatedByAgentID: t.CreatedByAgentID, ParentTaskID: t.ParentTaskID, DependsOn: t.DependsOn,
		BlockedReason: t.BlockedReason, StatusChangedByAgentID: t.StatusChangedByAgentID, StartedFromConversationID: t.StartedFromConversationID,
		RequestedInConversationID: t.RequestedInConversationID, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, CompletedAt: t.CompletedAt}
}

// TaskListItem is a task in get_my_tasks (seed 001's shape: the fields to
// choose by, without the description, which get_my_task gives).
type TaskListItem struct {
	TaskID        string    `json:"task_id"`
	Title         string    `json:"title"`
	Status        string    `json:"status"`
	Priority      string    `json:"priority"`
	ParentTaskID  string    `json:"parent_task_id,omitempty"`
	DependsOn     []string  `json:"depends_on,omitempty"`
	BlockedReason string    `json:"blocked_reason,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

func taskList(ts []Task) []TaskListItem {
	out := make([]TaskListItem, len(ts))
	for i, t := range ts {
		out[i] = TaskListItem{TaskID: t.ID, Title: t.Title, Status: t.Status, Priority: t.Priority, ParentTaskID: t.ParentTaskID,
			DependsOn: t.DependsOn, BlockedReason: t.BlockedReason, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	}
	return out
}

// MessageView is a chat message as the tools show it.
type MessageView struct {
	ID             string    `json:"id"`
	ConversationID string    `json:"conversation_id"`
	SenderID       string    `json:"sender_id"`
	SenderName     string    `json:"sender_name"`
	Content        string    `json:"content"`
	InReplyTo      string    `json:"in_reply_to,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
}

func messageViews(ms []Message) []MessageView {
	out := make([]MessageView, len(ms))
	for i, m := range ms {
		out[i] = MessageView{ID: m.ID, ConversationID: m.ConversationID, SenderID: m.SenderID, SenderName: m.SenderName, Content: m.Content,
			InReplyTo: m.InReplyTo, CreatedAt: m.CreatedAt}
	}
	return out
}

func (h *tools) healthCheck(_ context.Context, c core.Caller, _ json.RawMessage) (any, error) {
	hc, err := h.svc.Health(c.AgentID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"success": true, "status": hc.Status, "database": hc.Database, "agents": hc.Agents, "projects": hc.Projects,
		"open_tasks": hc.OpenTasks, "active_conversations": hc.ActiveConversations, "running_executions": hc.RunningExecutions,
		"time": hc.Time, "instruction": "Airlock's task services are up. Call list_managed_agents to see your agents."}, nil
}

func (h *tools) listManagedAgents(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		ProjectID string `json:"project_id"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	project := c.ProjectID
	if in.ProjectID != "" {
		p, err := h.svc.checkProject(in.ProjectID)
		if err != nil {
			return nil, err
		}
		project = p.ID
	}
	list, err := h.svc.ManagedAgents(c.AgentID, project)
	if err != nil {
		return nil, err
	}
	type agentView struct {
		AgentID             string   `json:"agent_id"`
		Name                string   `json:"name"`
		Kind                string   `json:"kind"`
		ParentID            string   `json:"parent_id"`
		Status              string   `json:"status"`
		Human               bool     `json:"human"`
		Projects            []string `json:"projects"`
		InProgressTasks     int      `json:"in_progress_tasks"`
		TodoTasks           int      `json:"todo_tasks"`
		BlockedTasks        int      `json:"blocked_tasks"`
		BacklogTasks        int      `json:"backlog_tasks"`
		PendingMessages     int      `json:"pending_messages"`
		UnreadNotifications int      `json:"unread_notifications"`
		RunningExecutionID  string   `json:"running_execution_id,omitempty"`
	}
	out := make([]agentView, len(list))
	for i, s := range list {
		a := s.Agent
		out[i] = agentView{AgentID: a.ID, Name: a.Name, Kind: a.Kind, ParentID: a.ParentID, Status: a.Status, Human: a.Human, Projects: a.Projects,
			InProgressTasks: s.InProgress, TodoTasks: s.Todo, BlockedTasks: s.Blocked, BacklogTasks: s.Backlog, PendingMessages: s.PendingMessages,
			UnreadNotifications: s.UnreadNotifications, RunningExecutionID: s.RunningExecutionID}
	}
	return map[string]any{"success": true, "agents": out, "total_count": len(out),
		"instruction": "Call get_agent_action(agent_id) to decide whether to start, keep or stop an agent."}, nil
}

func (h *tools) getAgentAction(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		AgentID   string `json:"agent_id"`
		ProjectID string `json:"project_id"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	project := c.ProjectID
	if in.ProjectID != "" {
		p, err := h.svc.checkProject(in.ProjectID)
		if err != nil {
			return nil, err
		}
		project = p.ID
	}
	a, err := h.svc.AgentActionFor(c.AgentID, in.AgentID, project)
	if err != nil {
		return nil, err
	}
	instr := map[string]string{
		AgentStart:       fmt.Sprintf("Start agent %s with a %s session.", a.AgentID, a.Purpose),
		AgentKeepRunning: "Leave it running.",
		AgentStop:        "Stop its running execution.",
		AgentNone:        "Nothing to do for this agent now.",
	}[a.Action]
	return map[string]any{"success": true, "agent_id": a.AgentID, "action": a.Action, "session_purpose": a.Purpose, "task_id": a.TaskID,
		"execution_id": a.ExecutionID, "reason": a.Reason, "instruction": instr}, nil
}

func (h *tools) getMyTask(_ context.Context, c core.Caller, _ json.RawMessage) (any, error) {
	list, _, err := h.svc.Tasks(TaskFilter{ProjectID: c.ProjectID, AssigneeID: c.AgentID, Statuses: []string{StatusInProgress}, Limit: 20})
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return map[string]any{"success": true, "agent_id": c.AgentID, "task": nil,
			"instruction": "No task of yours is in progress. Call get_next_action for what to do next."}, nil
	}
	others := []string{}
	for _, t := range list[1:] {
		others = append(others, t.ID)
	}
	return map[string]any{"success": true, "agent_id": c.AgentID, "task": taskView(list[0]), "other_in_progress": others,
		"instruction": "This is the task you are working on. When it is finished call report_completed."}, nil
}

func (h *tools) getMyTasks(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		Status string `json:"status"`
		Limit  *int   `json:"limit"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	n, err := limitOf(in.Limit, 20, 100)
	if err != nil {
		return nil, err
	}
	// The session's project, or the agent's only one, as every task tool
	// takes it: not the tasks of a project the agent has left.
	project, err := h.projectOf(c)
	if err != nil {
		return nil, err
	}
	f := TaskFilter{ProjectID: project, AssigneeID: c.AgentID, Limit: n}
	if in.Status != "" {
		if err := validStatus(in.Status); err != nil {
			return nil, err
		}
		f.Statuses = []string{in.Status}
	}
	list, total, err := h.svc.Tasks(f)
	if err != nil {
		return nil, err
	}
	instr := "上記があなたに割り当てられたタスクです。 (These are the tasks assigned to you; get_my_task shows the one in progress in full. Call get_next_action for what to do next.)"
	if total > len(list) {
		instr = fmt.Sprintf("These are %d of the %d tasks assigned to you (the most pressing first). Filter by status to see others.", len(list), total)
	}
	return map[string]any{"success": true, "agent_id": c.AgentID, "tasks": taskList(list), "total_count": total,
		"returned_count": len(list), "instruction": instr}, nil
}

func (h *tools) getNextAction(_ context.Context, c core.Caller, _ json.RawMessage) (any, error) {
	a, err := h.svc.NextAction(c.AgentID, c.Purpose, c.ProjectID)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"success": true, "action": a.Action, "reason": a.Reason, "instruction": a.Instruction, "session_purpose": c.Purpose,
		"counts": map[string]int{"in_progress": a.InProgress, "ready": a.Ready, "waiting": a.Waiting, "backlog": a.Backlog,
			"pending_messages": a.PendingMessages, "delegated_open": a.DelegatedOpen, "awaiting_reply": a.AwaitingReply}}
	if a.Task != nil {
		out["task"] = taskView(*a.Task)
	}
	if a.ConversationID != "" {
		out["conversation_id"] = a.ConversationID
	}
	if len(a.Notifications) > 0 {
		ds := make([]Delivered, len(a.Notifications))
		for i, n := range a.Notifications {
			ds[i] = deliver(n)
		}
		out["notifications"] = ds
	}
	return out, nil
}

func (h *tools) reportCompleted(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		Result  string `json:"result"`
		Summary string `json:"summary"`
		TaskID  string `json:"task_id"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	if in.Result == "" {
		return nil, core.Errorf(core.EInvalid, "Missing required argument: result")
	}
	ch, err := h.svc.ReportCompleted(c.AgentID, c.ProjectID, in.TaskID, in.Result, in.Summary)
	if err != nil {
		return nil, err
	}
	instr := "Task reported done. Call get_next_action for your next task."
	if ch.Task.Status == StatusBlocked {
		instr = "Task reported " + in.Result + "; it is now blocked and its creator (and whoever asked for it) is told. Call get_next_action for what to do meanwhile."
	}
	return map[string]any{"success": true, "task_id": ch.Task.ID, "result": in.Result, "previous_status": ch.PreviousStatus,
		"new_status": ch.Task.Status, "notified": ch.Notified, "instruction": instr}, nil
}

func (h *tools) createTasksBatch(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		Tasks []struct {
			LocalID      string   `json:"local_id"`
			Title        string   `json:"title"`
			Description  string   `json:"description"`
			Priority     string   `json:"priority"`
			Status       string   `json:"status"`
			AssigneeID   string   `json:"assignee_id"`
			ParentTaskID string   `json:"parent_task_id"`
			DependsOn    []string `json:"depends_on"`
		} `json:"tasks"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	project, err := h.projectOf(c)
	if err != nil {
		return nil, err
	}
	inputs := make([]TaskInput, len(in.Tasks))
	for i, t := range in.Tasks {
		inputs[i] = TaskInput{LocalID: t.LocalID, Title: t.Title, Description: t.Description, Priority: t.Priority, Status: t.Status,
			AssigneeID: t.AssigneeID, ParentTaskID: t.ParentTaskID, DependsOn: t.DependsOn}
	}
	created, err := h.svc.CreateTasks(c.AgentID, project, inputs)
	if err != nil {
		return nil, err
	}
	type createdView struct {
		LocalID string `json:"local_id,omitempty"`
		TaskView
	}
	out := make([]createdView, len(created))
	for i, t := range created {
		out[i] = createdView{LocalID: in.Tasks[i].LocalID, TaskView: taskView(t)}
	}
	return map[string]any{"success": true, "tasks": out, "created_count": len(out),
		"instruction": "Tasks created. Assign them with assign_task, make them ready with update_task_status(status: todo), " +
			"and explain the work with delegate_to_chat_session."}, nil
}

func (h *tools) assignTask(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		TaskID     string  `json:"task_id"`
		AssigneeID *string `json:"assignee_id"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	if in.AssigneeID == nil {
		return nil, core.Errorf(core.EInvalid, "Missing required argument: assignee_id")
	}
	res, err := h.svc.AssignTask(c.AgentID, c.ProjectID, in.TaskID, *in.AssigneeID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"success": true, "task_id": res.Task.ID, "previous_assignee_id": res.PreviousAssigneeID, "assignee_id": res.Task.AssigneeID,
		"status": res.Task.Status, "instruction": "Task assigned; the assignee is notified. Make it ready with update_task_status(status: todo) when it is."}, nil
}

func (h *tools) updateTaskStatus(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		TaskID        string `json:"task_id"`
		Status        string `json:"status"`
		BlockedReason string `json:"blocked_reason"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	if in.Status == "" {
		return nil, core.Errorf(core.EInvalid, "Missing required argument: status")
	}
	ch, err := h.svc.SetStatus(c.AgentID, c.ProjectID, in.TaskID, in.Status, in.BlockedReason)
	if err != nil {
		return nil, err
	}
	instr := "Status changed."
	switch ch.Task.Status {
	case StatusInProgress:
		instr = "Task started. Work on it, then call report_completed."
	case StatusBlocked:
		instr = "Task blocked; its creator (and whoever asked for it) is told. Call get_next_action for what to do meanwhile."
	case StatusDone:
		instr = "Task done; the agents waiting on it are told. Call get_next_action."
	}
	return map[string]any{"success": true, "task_id": ch.Task.ID, "previous_status": ch.PreviousStatus, "new_status": ch.Task.Status,
		"blocked_reason": ch.Task.BlockedReason, "notified": ch.Notified, "instruction": instr}, nil
}

func (h *tools) requestTask(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		Title          string `json:"title"`
		Description    string `json:"description"`
		Priority       string `json:"priority"`
		ConversationID string `json:"conversation_id"`
		RequesterID    string `json:"requester_id"`
		ParentTaskID   string `json:"parent_task_id"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	project, err := h.projectOf(c)
	if err != nil {
		return nil, err
	}
	t, err := h.svc.RequestTask(c.AgentID, project, RequestInput{Title: in.Title, Description: in.Description, Priority: in.Priority,
		ConversationID: in.ConversationID, RequesterID: in.RequesterID, ParentTaskID: in.ParentTaskID})
	if err != nil {
		return nil, err
	}
	return map[string]any{"success": true, "task_id": t.ID, "status": t.Status, "assignee_id": t.AssigneeID, "requester_id": t.RequestedByAgentID,
		"conversation_id": t.RequestedInConversationID, "task": taskView(t),
		"instruction": "The work is tracked as a task assigned to you (todo). Work on it in a task session: get_next_action there starts it."}, nil
}

func (h *tools) startTaskFromChat(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		TaskID         string `json:"task_id"`
		RequesterID    string `json:"requester_id"`
		ConversationID string `json:"conversation_id"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	res, err := h.svc.StartTaskFromChat(c.AgentID, c.ProjectID, in.TaskID, in.RequesterID, in.ConversationID)
	if err != nil {
		return nil, err
	}
	// A session opened by authenticate ends with logout; a connection made
	// with the agent's token (?purpose=chat) has nothing to log out of.
	next := "(Task started. End this chat session (logout), then work on it in a task session: authenticate with purpose task and call get_next_action.)"
	if c.AuthSession == "" {
		next = "(Task started. Work on it in a task session: a connection with your token and ?purpose=task (or no purpose), where get_next_action says what to do.)"
	}
	return map[string]any{"success": true, "task_id": res.Task.ID, "previous_status": res.PreviousStatus, "new_status": res.Task.Status,
		"requester_id": res.RequesterID, "conversation_id": res.Modification.ConversationID,
		"instruction": "タスクを開始しました。チャットセッションを終了し、タスクセッションで作業を開始してください。 " + next}, nil
}

func (h *tools) updateTaskFromChat(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		TaskID         string  `json:"task_id"`
		RequesterID    string  `json:"requester_id"`
		ConversationID string  `json:"conversation_id"`
		Title          *string `json:"title"`
		Description    *string `json:"description"`
		Status         *string `json:"status"`
		Priority       *string `json:"priority"`
		BlockedReason  *string `json:"blocked_reason"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	up := TaskUpdate{Title: in.Title, Description: in.Description, Status: in.Status, Priority: in.Priority, BlockedReason: in.BlockedReason}
	res, err := h.svc.UpdateTaskFromChat(c.AgentID, c.ProjectID, in.TaskID, in.RequesterID, in.ConversationID, up)
	if err != nil {
		return nil, err
	}
	return map[string]any{"success": true, "task_id": res.Task.ID, "updated_fields": res.UpdatedFields, "requester_id": res.RequesterID,
		"previous_status": res.PreviousStatus, "new_status": res.Task.Status, "conversation_id": res.Modification.ConversationID,
		"instruction": "タスクを更新しました。 (Task updated.)"}, nil
}

func (h *tools) delegateToChatSession(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		TargetAgentID string `json:"target_agent_id"`
		Message       string `json:"message"`
		Topic         string `json:"topic"`
		RelatedTaskID string `json:"related_task_id"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	project, err := h.projectOf(c)
	if err != nil {
		return nil, err
	}
	conv, m, err := h.svc.Delegate(c.AgentID, project, in.TargetAgentID, in.Topic, in.Message, in.RelatedTaskID)
	if err != nil {
		return nil, err
	}
	target := ""
	for _, p := range conv.Participants {
		if p.AgentID != c.AgentID {
			target = p.AgentID
		}
	}
	return map[string]any{"success": true, "conversation_id": conv.ID, "target_agent_id": target, "message_id": m.ID,
		"related_task_id": conv.RelatedTaskID,
		"instruction": fmt.Sprintf("Conversation %s is open with your message; the other agent's task session is told. Continue it from your chat "+
			"session (authenticate with purpose chat, then get_pending_messages and respond_chat). Meanwhile go on with your tasks.", conv.ID)}, nil
}

func (h *tools) notifyTaskSession(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		ConversationID string `json:"conversation_id"`
		Message        string `json:"message"`
		RelatedTaskID  string `json:"related_task_id"`
		Priority       string `json:"priority"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	n, err := h.svc.NotifyTaskSession(c.AgentID, c.ProjectID, in.ConversationID, in.Message, in.RelatedTaskID, in.Priority)
	if err != nil {
		return nil, err
	}
	return map[string]any{"success": true, "notification_id": n.ID, "target_agent_id": n.TargetAgentID, "conversation_id": n.ConversationID,
		"type": n.Type, "instruction": "タスクセッションに通知を送信しました。次回のツール呼び出し時に通知が届きます。 " +
			"(Your task session is notified; it receives the notification with its next tool call.)"}, nil
}

func (h *tools) getConversationMessages(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		ConversationID string `json:"conversation_id"`
		Limit          *int   `json:"limit"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	n, err := limitOf(in.Limit, 50, 200)
	if err != nil {
		return nil, err
	}
	conv, msgs, total, err := h.svc.ConversationMessages(c.AgentID, c.ProjectID, in.ConversationID, 0, n)
	if err != nil {
		return nil, err
	}
	return map[string]any{"success": true, "conversation_id": conv.ID, "state": conv.State, "topic": conv.Topic, "messages": messageViews(msgs),
		"total_count": total, "returned_count": len(msgs),
		"instruction": "上記のメッセージを確認し、必要に応じて対応してください。 (Read the messages above and act on them as needed.)"}, nil
}

func (h *tools) getPendingMessages(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		Limit *int `json:"limit"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	n, err := limitOf(in.Limit, 20, 100)
	if err != nil {
		return nil, err
	}
	msgs, left, err := h.svc.ClaimPendingMessages(c.AgentID, c.ProjectID, n)
	if err != nil {
		return nil, err
	}
	instr := "No messages wait for you. Call get_next_action."
	if len(msgs) > 0 {
		instr = "Answer each conversation with respond_chat(conversation_id, content). Work asked of you must become a tracked task: " +
			"request_task, or start_task_from_chat with requester_id for a task already assigned to you."
	}
	if left > 0 {
		instr += fmt.Sprintf(" %d more message(s) wait: call get_pending_messages again.", left)
	}
	return map[string]any{"success": true, "agent_id": c.AgentID, "messages": messageViews(msgs), "total_count": len(msgs), "remaining": left,
		"instruction": instr}, nil
}

func (h *tools) respondChat(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		ConversationID string `json:"conversation_id"`
		Content        string `json:"content"`
		InReplyTo      string `json:"in_reply_to"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	m, err := h.svc.PostMessage(c.AgentID, c.ProjectID, in.ConversationID, in.Content, in.InReplyTo)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"success": true, "message_id": m.ID, "conversation_id": m.ConversationID, "created_at": m.CreatedAt,
		"instruction": "Answer sent. Call get_pending_messages for replies."}
	withUnread(out, m)
	return out, nil
}

// withUnread tells an agent that wrote past messages it had not read yet
// (m.Unread) to read them now.
func withUnread(out map[string]any, m Message) {
	if m.Unread == 0 {
		return
	}
	out["unread_count"] = m.Unread
	out["instruction"] = fmt.Sprintf("Sent, but %d message(s) in this conversation came in that you have not read yet: read them with get_pending_messages now, and write again if they change anything.", m.Unread)
}

func (h *tools) startConversation(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		ParticipantID  string `json:"participant_id"`
		Topic          string `json:"topic"`
		InitialMessage string `json:"initial_message"`
		RelatedTaskID  string `json:"related_task_id"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	if in.ParticipantID == "" {
		return nil, core.Errorf(core.EInvalid, "Missing required argument: participant_id")
	}
	project, err := h.projectOf(c)
	if err != nil {
		return nil, err
	}
	conv, m, err := h.svc.StartConversation(c.AgentID, project, []string{in.ParticipantID}, in.Topic, in.InitialMessage, in.RelatedTaskID)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"success": true, "conversation_id": conv.ID, "state": conv.State, "participants": participantIDs(conv),
		"instruction": "Conversation started. Write with respond_chat; replies arrive with get_pending_messages."}
	if m != nil {
		out["message_id"] = m.ID
	}
	return out, nil
}

func participantIDs(c Conversation) []string {
	out := []string{}
	for _, p := range c.Participants {
		if p.Role == RoleMember {
			out = append(out, p.AgentID)
		}
	}
	return out
}

func (h *tools) endConversation(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		ConversationID string `json:"conversation_id"`
		Summary        string `json:"summary"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	conv, err := h.svc.EndConversation(c.AgentID, c.ProjectID, in.ConversationID, in.Summary)
	if err != nil {
		return nil, err
	}
	return map[string]any{"success": true, "conversation_id": conv.ID, "state": conv.State, "ended_at": conv.EndedAt,
		"instruction": "Conversation ended. Call get_next_action."}, nil
}

func (h *tools) sendMessage(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		TargetAgentID  string `json:"target_agent_id"`
		Content        string `json:"content"`
		ConversationID string `json:"conversation_id"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	project, err := h.projectOf(c)
	if err != nil {
		return nil, err
	}
	conv, m, err := h.svc.SendMessage(c.AgentID, project, in.TargetAgentID, in.Content, in.ConversationID)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"success": true, "message_id": m.ID, "conversation_id": conv.ID, "created_at": m.CreatedAt,
		"instruction": "Message sent. Replies arrive with get_pending_messages."}
	withUnread(out, m)
	return out, nil
}

func (h *tools) getMyExecutionHistory(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		TaskID string `json:"task_id"`
		Status string `json:"status"`
		Limit  *int   `json:"limit"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	n, err := limitOf(in.Limit, DefaultHistoryLimit, 100)
	if err != nil {
		return nil, err
	}
	if in.Status != "" {
		ok := false
		for _, s := range ExecStatuses {
			ok = ok || s == in.Status
		}
		if !ok {
			return nil, core.Errorf(core.EInvalid, "Invalid status: %s. Valid values: running, completed, failed, stopped", in.Status)
		}
	}
	list, total, err := h.svc.Executions(ExecutionFilter{AgentID: c.AgentID, TaskID: in.TaskID, Status: in.Status, Limit: n})
	if err != nil {
		return nil, err
	}
	titles := map[string]string{}
	type execView struct {
		ExecutionID     string     `json:"execution_id"`
		TaskID          string     `json:"task_id"`
		TaskTitle       string     `json:"task_title"`
		Status          string     `json:"status"`
		StartedAt       time.Time  `json:"started_at"`
		CompletedAt     *time.Time `json:"completed_at"`
		DurationSeconds *int64     `json:"duration_seconds"`
		ExitCode        *int       `json:"exit_code"`
		HasLog          bool       `json:"has_log"`
	}
	out := make([]execView, len(list))
	for i, e := range list {
		if _, ok := titles[e.TaskID]; !ok {
			if t, err := h.svc.st.GetTask(e.TaskID); err == nil {
				titles[e.TaskID] = t.Title
			}
		}
		v := execView{ExecutionID: e.ID, TaskID: e.TaskID, TaskTitle: titles[e.TaskID], Status: e.Status, StartedAt: e.StartedAt,
			CompletedAt: e.CompletedAt, ExitCode: e.ExitCode, HasLog: hasLog(e.LogFilePath)}
		if e.CompletedAt != nil {
			d := int64(e.CompletedAt.Sub(e.StartedAt).Seconds())
			v.DurationSeconds = &d
		}
		out[i] = v
	}
	return map[string]any{"success": true, "agent_id": c.AgentID, "executions": out, "total_count": total,
		"instruction": "ログ内容を確認するには get_execution_log(execution_id) を呼び出してください。 (Call get_execution_log(execution_id) to read a log.)"}, nil
}

func (h *tools) getExecutionLog(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		ExecutionID string `json:"execution_id"`
		Tail        *int   `json:"tail"`
		Offset      *int   `json:"offset"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	e, chunk, err := h.svc.ReadLog(c.AgentID, in.ExecutionID, in.Tail, in.Offset)
	if err != nil {
		return nil, err
	}
	instr := "This is the whole log."
	if chunk.Truncated {
		instr = "ログが切り詰められています。offset を指定して続きを取得できます。 (The log is cut: give offset to read other lines.)"
	}
	lines := chunk.Lines
	if lines == nil {
		lines = []string{}
	}
	return map[string]any{"success": true, "execution_id": e.ID, "task_id": e.TaskID, "status": e.Status, "log_file_path": e.LogFilePath,
		"log_content": lines, "total_lines": chunk.TotalLines, "returned_lines": len(lines), "offset": chunk.Offset,
		"truncated": chunk.Truncated, "instruction": instr}, nil
}
