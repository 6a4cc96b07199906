package teams

import (
	"encoding/json"
	"strconv"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
)

// definitions are the full definitions of the team tools: schema, example
// and a description that says what the seeds leave implicit. They carry no
// permission level: the level is authz's table's (Declare copies it).
func definitions() []authz.ToolDef {
	tok := authz.SessionTokenParam()
	str := func(name, desc string, required bool) authz.Param {
		return authz.Param{Name: name, Type: "string", Description: desc, Required: required}
	}
	limit := func(def, maxV int, what string) authz.Param {
		return authz.Param{Name: "limit", Type: "integer", Default: def,
			Description: "How many " + what + " to return at most (default " + strconv.Itoa(def) + ", at most " + strconv.Itoa(maxV) + ")."}
	}
	statusParam := func(desc string, required bool) authz.Param {
		return authz.Param{Name: "status", Type: "string", Enum: Statuses, Description: desc, Required: required}
	}
	priority := authz.Param{Name: "priority", Type: "string", Enum: Priorities, Description: "low, medium (the default), high or urgent."}
	task := str("task_id", "The task's id (tsk_…).", true)
	conv := str("conversation_id", "The conversation's id (conv_…).", true)
	ex := func(s string) json.RawMessage { return json.RawMessage(s) }
	taskItem := authz.Schema(
		str("local_id", "A name for this task within the batch, so that other tasks of the batch can depend on it.", false),
		str("title", "One line, at most 200 characters.", true),
		str("description", "What to do, for the assignee.", false),
		priority,
		authz.Param{Name: "status", Type: "string", Enum: []string{StatusBacklog, StatusTodo}, Description: "backlog (the default) or todo."},
		str("assignee_id", "Who does it (id or name): you or an agent below you, assigned to the project.", false),
		str("parent_task_id", "The task this one is part of: a task id, or a local_id of the batch.", false),
		authz.Param{Name: "depends_on", Type: "array", Items: json.RawMessage(`{"type":"string"}`),
			Description: "Tasks that must be done first: task ids of the project or local_ids of the batch. No cycles."},
	)
	return []authz.ToolDef{
		{
			Name:        "health_check",
			Description: "Coordinator: checks that Airlock's task services and database answer, and counts agents, projects, open tasks, active conversations and running executions.",
			InputSchema: authz.Schema(tok),
			Example:     ex(`{"session_token":"als_xxx"}`),
		},
		{
			Name: "list_managed_agents",
			Description: "Coordinator: lists the agents Airlock manages in your project (every agent but you and the owner) with their status and what is open for them: " +
				"tasks in progress, todo, blocked, backlog, chat messages waiting, unread notifications, a running execution. " +
				"Call get_agent_action(agent_id) to decide what to do about one.",
			InputSchema: authz.Schema(tok, str("project_id", "Only agents of this project (id or name), one you are assigned to; default: this session's project, else your only one.", false)),
			Example:     ex(`{"session_token":"als_xxx","project_id":"proj-001"}`),
		},
		{
			Name: "get_agent_action",
			Description: "Coordinator: says what to do about one agent: start (with the session purpose, task or chat, and the task), " +
				"keep_running, stop (running with nothing open, or suspended), or none (nothing open, or a person).",
			InputSchema: authz.Schema(tok, str("agent_id", "The agent (id or name).", true), str("project_id", "The project to look at (id or name), one you are assigned to; default: this session's project, else your only one.", false)),
			Example:     ex(`{"session_token":"als_xxx","agent_id":"worker-frontend-01"}`),
		},
		{
			Name: "get_my_task",
			Description: "Returns the task assigned to you that is in progress (null when none is; then call get_next_action). " +
				"Works in task and chat sessions.",
			InputSchema: authz.Schema(tok),
			Example:     ex(`{"session_token":"als_xxx"}`),
		},
		{
			Name: "get_my_tasks",
			Description: "Lists the tasks assigned to you, in this session's project: in progress first, then todo, blocked, backlog, done, cancelled; " +
				"within each, the most urgent first. Works in task and chat sessions.",
			InputSchema: authz.Schema(tok, statusParam("Only tasks in this status.", false), limit(20, 100, "tasks")),
			Example:     ex(`{"session_token":"als_xxx","status":"in_progress","limit":20}`),
		},
		{
			Name: "get_next_action",
			Description: "Tells you what to do next, from your session's purpose, your tasks, the messages waiting for you and your notifications: " +
				"check_notification, continue_task, start_task, check_chat, wait_for_blockers, plan_backlog, monitor_delegated, wait_for_reply, " +
				"respond and switch_to_task_session (chat sessions), or all_done — never all_done while a task assigned to you (or asked of you in chat) " +
				"is open or a message waits. In a task session it also delivers your unread notifications.",
			InputSchema: authz.Schema(tok),
			Example:     ex(`{"session_token":"als_xxx"}`),
		},
		{
			Name: "report_completed",
			Description: "Reports that your task is finished. result success makes it done; failed or blocked make it blocked with summary as the reason, " +
				"and its creator is told. Without task_id it reports your one task in progress.",
			InputSchema: authz.Schema(tok,
				authz.Param{Name: "result", Type: "string", Required: true, Enum: []string{ResultSuccess, ResultFailed, ResultBlocked},
					Description: "How the task ended: success, failed, or blocked by something outside your control."},
				str("summary", "A summary of what was done (optional).", false),
				str("task_id", "Which task; needed only when you have several in progress.", false),
			),
			Example: ex(`{"session_token":"als_xxx","result":"success","summary":"All subtasks are done."}`),
		},
		{
			Name: "create_tasks_batch",
			Description: "Creates several tasks in this session's project at once, all or none: each with an assignee (you or an agent below you), " +
				"a parent, and dependencies on other tasks (of the project, or of the batch by local_id). Dependency cycles are refused. " +
				"Assignees are notified.",
			InputSchema: authz.Schema(tok, authz.Param{Name: "tasks", Type: "array", Required: true, Items: taskItem,
				Description: "The tasks to create (1–100)."}),
			Example: ex(`{"session_token":"als_xxx","tasks":[{"local_id":"api","title":"Orders API","assignee_id":"worker-backend-01"},` +
				`{"title":"Orders page","assignee_id":"worker-frontend-02","depends_on":["api"],"priority":"high"}]}`),
		},
		{
			Name: "assign_task",
			Description: "Manager: assigns a task to an agent (you or an agent below you, in the project); assignee_id empty takes it away. " +
				"You must have created the task or be above its current assignee. The new assignee is notified.",
			InputSchema: authz.Schema(tok, task, authz.Param{Name: "assignee_id", Type: "string", Required: true,
				Description: "The agent (id or name); empty to unassign."}),
			Example: ex(`{"session_token":"als_xxx","task_id":"tsk_dashboard","assignee_id":"worker-frontend-01"}`),
		},
		{
			Name: "update_task_status",
			Description: "Changes a task's status (its assignee, its creator, or an agent above the assignee may). Allowed moves: " +
				"backlog→todo|in_progress|blocked|cancelled; todo→backlog|in_progress|blocked|cancelled; in_progress→todo|blocked|done|cancelled; " +
				"blocked→backlog|todo|in_progress|cancelled; done→todo; cancelled→backlog|todo. A task with open dependencies cannot become " +
				"in_progress or done; blocked needs blocked_reason. Closing a task notifies the agents whose tasks wait on it.",
			InputSchema: authz.Schema(tok, task, statusParam("The new status.", true),
				str("blocked_reason", "Why the task is blocked (required with status blocked).", false)),
			Example: ex(`{"session_token":"als_xxx","task_id":"tsk_xxx","status":"blocked","blocked_reason":"The API it calls is not deployed"}`),
		},
		{
			Name: "request_task",
			Description: "Creates a task for yourself (todo, assigned to you), so that work asked of you — typically in chat — is tracked. " +
				"Name the conversation it was asked in and who asked (requester_id); the requester is told.",
			InputSchema: authz.Schema(tok, str("title", "One line, at most 200 characters.", true), str("description", "What is to be done.", false),
				priority, str("conversation_id", "The conversation the work was asked for in (you must be a participant).", false),
				str("requester_id", "Who asked for it (id or name).", false), str("parent_task_id", "The task this one is part of.", false)),
			Example: ex(`{"session_token":"als_xxx","title":"Add CSV export to the orders page","requester_id":"manager-dev","conversation_id":"conv_abc"}`),
		},
		{
			Name: "start_task_from_chat",
			Description: "Chat session: starts (in_progress) a task assigned to you at the request of an agent above you. Checked in this order: " +
				"the requester exists (agent_not_found), is in the project (agent_not_assigned_to_project), is above you — your parent or higher, " +
				"never yourself, a sibling or another branch (unauthorized) — and the task is yours (task_not_found, unauthorized). " +
				"The change is recorded with the requester and the conversation. Then log out and work on it in a task session.",
			InputSchema: authz.Schema(tok, str("task_id", "The task to start (it must be assigned to you).", true),
				str("requester_id", "The agent above you who asked (id or name).", true),
				str("conversation_id", "The conversation the request was made in (default: your latest with the requester).", false)),
			Example: ex(`{"session_token":"als_xxx","task_id":"tsk_dashboard","requester_id":"manager-dev"}`),
		},
		{
			Name: "update_task_from_chat",
			Description: "Chat session: changes a task (title, description, status, priority, blocked_reason) at the request of an agent above you, " +
				"checked like start_task_from_chat; you must be the task's assignee or creator. Returns the fields that changed.",
			InputSchema: authz.Schema(tok, str("task_id", "The task to change.", true),
				str("requester_id", "The agent above you who asked (id or name).", true),
				str("conversation_id", "The conversation the request was made in.", false),
				str("title", "New title.", false), str("description", "New description.", false),
				statusParam("New status (through the state machine).", false), priority,
				str("blocked_reason", "Why it is blocked (with status blocked).", false)),
			Example: ex(`{"session_token":"als_xxx","task_id":"tsk_dashboard","requester_id":"owner","description":"New requirements…","priority":"high"}`),
		},
		{
			Name: "delegate_to_chat_session",
			Description: "Task session: hands a conversation over to chat. Opens a conversation with target_agent_id with your message as its first " +
				"word and tells the target's task session to look at the chat; continue it from your chat session (authenticate with purpose chat, " +
				"get_pending_messages, respond_chat).",
			InputSchema: authz.Schema(tok, str("target_agent_id", "Who to talk with (id or name), in the project.", true),
				str("message", "What you want to say or ask; the context the other agent needs.", true),
				str("topic", "A one-line subject.", false), str("related_task_id", "The task it is about.", false)),
			Example: ex(`{"session_token":"als_xxx","target_agent_id":"worker-frontend-01","message":"Details for tsk_dashboard: …","related_task_id":"tsk_dashboard"}`),
		},
		{
			Name: "notify_task_session",
			Description: "Chat session: tells your own task session to read a conversation. It receives _chat_notification (conversation_id, message, " +
				"instruction, from: self_chat_session, related_task_id) with the response to its next tool call; priority high makes it an " +
				"interrupt that replaces that response. Delivered once.",
			InputSchema: authz.Schema(tok, conv, str("message", "A summary to go with it.", false),
				str("related_task_id", "The task it is about.", false),
				authz.Param{Name: "priority", Type: "string", Enum: []string{PriorityNormal, PriorityInterrupt}, Default: PriorityNormal,
					Description: "normal, or high for an interrupt."}),
			Example: ex(`{"session_token":"als_xxx","conversation_id":"conv_abc","message":"Urgent spec change from the manager","related_task_id":"tsk_xxx","priority":"high"}`),
		},
		{
			Name: "get_conversation_messages",
			Description: "Task session: reads the messages of a conversation you take part in (the last limit, oldest first), e.g. after a " +
				"_chat_notification. It does not mark them read for your chat session.",
			InputSchema: authz.Schema(tok, conv, limit(50, 200, "messages")),
			Example:     ex(`{"session_token":"als_xxx","conversation_id":"conv_abc","limit":50}`),
		},
		{
			Name: "get_pending_messages",
			Description: "Chat session: returns the messages others wrote to you since you last read (in this session's project), oldest first, " +
				"and marks them read: each is returned once. Answer with respond_chat.",
			InputSchema: authz.Schema(tok, limit(20, 100, "messages")),
			Example:     ex(`{"session_token":"als_xxx"}`),
		},
		{
			Name:        "respond_chat",
			Description: "Chat session: answers in a conversation you take part in. Messages of others you have not read yet stay pending: the answer says how many (unread_count), and you read them with get_pending_messages.",
			InputSchema: authz.Schema(tok, conv, str("content", "Your answer (at most 16 KiB).", true),
				str("in_reply_to", "The message id you answer (msg_…).", false)),
			Example: ex(`{"session_token":"als_xxx","conversation_id":"conv_abc","content":"Understood, starting now."}`),
		},
		{
			Name: "start_conversation",
			Description: "Chat session: starts a conversation with another agent of the project, optionally about a task and with a first message; " +
				"the other agent's task session is told to look at the chat.",
			InputSchema: authz.Schema(tok, str("participant_id", "Who to talk with (id or name).", true), str("topic", "A one-line subject.", false),
				str("initial_message", "The first message.", false), str("related_task_id", "The task it is about.", false)),
			Example: ex(`{"session_token":"als_xxx","participant_id":"worker-frontend-01","topic":"tsk_dashboard","initial_message":"Can you start the dashboard?"}`),
		},
		{
			Name:        "end_conversation",
			Description: "Chat session: ends a conversation you take part in, with an optional closing summary; nothing more can be written in it.",
			InputSchema: authz.Schema(tok, conv, str("summary", "A closing message.", false)),
			Example:     ex(`{"session_token":"als_xxx","conversation_id":"conv_abc","summary":"Agreed: tsk_dashboard starts today."}`),
		},
		{
			Name: "send_message",
			Description: "Chat session: sends a message to another agent of the project: into conversation_id when given, else into your " +
				"active conversation with that agent alone, else a new one.",
			InputSchema: authz.Schema(tok, str("target_agent_id", "The recipient (id or name).", true), str("content", "The message (at most 16 KiB).", true),
				str("conversation_id", "The conversation to write in.", false)),
			Example: ex(`{"session_token":"als_xxx","target_agent_id":"manager-dev","content":"The dashboard is blocked on the orders API."}`),
		},
		{
			Name: "get_my_execution_history",
			Description: "Lists your executions (runs of an agent process on a task), newest first, without their logs: status, start, end, " +
				"duration, exit code, has_log. The status is running, completed, failed, or stopped (a person, or Airlock as it stopped, " +
				"ended the run: not a failure of yours). Read a log with get_execution_log(execution_id).",
			InputSchema: authz.Schema(tok, str("task_id", "Only runs of this task.", false),
				authz.Param{Name: "status", Type: "string", Enum: ExecStatuses, Description: "Only runs in this status."},
				limit(DefaultHistoryLimit, 100, "executions")),
			Example: ex(`{"session_token":"als_xxx","task_id":"tsk_001","limit":10}`),
		},
		{
			Name: "get_execution_log",
			Description: "Returns lines of the log of one of your executions (only your own): the last tail lines (default 100, at most 1000), " +
				"or, with offset, 100 lines from that line on (the first line is 0). truncated says whether lines were left out.",
			InputSchema: authz.Schema(tok, str("execution_id", "The execution's id (exec_…).", true),
				authz.Param{Name: "tail", Type: "integer", Description: "How many lines from the end (default 100)."},
				authz.Param{Name: "offset", Type: "integer", Description: "The first line to return, counted from 0 (exclusive with tail)."}),
			Example: ex(`{"session_token":"als_xxx","execution_id":"exec_001","tail":100}`),
		},
	}
}

// Declare fills the team tools' full definitions into reg, the one tool
// table. Every tool must be declared there already: its permission level
// (and compact flag) stay the table's.
func Declare(reg *authz.Registry) error {
	for _, d := range definitions() {
		old, ok := reg.Lookup(d.Name)
		if !ok {
			return core.Errorf(core.EInternal, "tool %s is not declared in the authorization table", d.Name)
		}
		d.Level, d.Compact = old.Level, old.Compact
		if err := reg.Register(d); err != nil {
			return err
		}
	}
	return nil
}

// ToolNames lists the team tools.
func ToolNames() []string {
	var out []string
	for _, d := range definitions() {
		out = append(out, d.Name)
	}
	return out
}
