package teams

import (
	"fmt"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
)

// Next actions get_next_action gives.
const (
	// NextCheckNotification: a notification (from the agent's own chat
	// session, or an interrupt) asks it to read a conversation.
	NextCheckNotification = "check_notification"
	NextContinueTask      = "continue_task"
	NextStartTask         = "start_task"
	// NextCheckChat: messages wait for the agent in chat.
	NextCheckChat = "check_chat"
	// NextRespond: (chat session) answer the messages waiting.
	NextRespond = "respond"
	// NextSwitchToTask: (chat session) open tasks wait for a task session.
	NextSwitchToTask = "switch_to_task_session"
	// NextWaitBlocked: every open task of the agent waits for something.
	NextWaitBlocked = "wait_for_blockers"
	// NextPlanBacklog: the agent's open tasks are all in the backlog.
	NextPlanBacklog = "plan_backlog"
	// NextMonitor: tasks the agent handed out are still open.
	NextMonitor = "monitor_delegated"
	// NextWaitReply: the agent asked something in chat and waits.
	NextWaitReply = "wait_for_reply"
	// NextAllDone: nothing is open for the agent anywhere. Never given
	// while a task assigned to it (or one it asked others for) is open,
	// or while a message waits for it.
	NextAllDone = "all_done"
)

// NextAction is what get_next_action tells an agent.
type NextAction struct {
	Action      string `json:"action"`
	Instruction string `json:"instruction"`
	Reason      string `json:"reason"`
	// Task is the task to work on, when there is one.
	Task *Task `json:"task,omitempty"`
	// ConversationID is the conversation to read, when there is one.
	ConversationID string `json:"conversationId,omitempty"`
	// Notifications are the notifications claimed by this call.
	Notifications []Notification `json:"notifications"`
	// Counts of what is open for the agent.
	InProgress      int `json:"inProgress"`
	Ready           int `json:"ready"`
	Waiting         int `json:"waiting"`
	Backlog         int `json:"backlog"`
	PendingMessages int `json:"pendingMessages"`
	DelegatedOpen   int `json:"delegatedOpen"`
	AwaitingReply   int `json:"awaitingReply"`
}

// agentState is everything get_next_action decides from.
type agentState struct {
	purpose string
	// open tasks assigned to the agent, in list order (StatusRank,
	// PriorityRank, age).
	inProgress, ready, waiting, backlog []Task
	notifications                       []Notification
	pending                             int
	// unanswered are active conversations whose last message is someone
	// else's (chat sessions answer them).
	unanswered []string
	// awaiting are active conversations whose last message is the
	// agent's own.
	awaiting []string
	// delegated are open tasks the agent created for others or asked
	// others for in chat.
	delegated []Task
}

// NextAction decides what agent agentID, in a session of purpose in
// projectID, should do next: from its notifications (claimed, in a task
// session), its tasks, the messages waiting for it and the work it handed
// out. It never says all_done while anything is open for the agent.
func (s *Service) NextAction(agentID, purpose, sessionProject string) (NextAction, error) {
	r, err := s.roster()
	if err != nil {
		return NextAction{}, err
	}
	projectID, err := s.project(r, agentID, sessionProject)
	if err != nil {
		return NextAction{}, err
	}
	st := agentState{purpose: purpose}
	if purpose == core.PurposeTask {
		if st.notifications, err = s.ClaimNotifications(agentID, projectID); err != nil {
			return NextAction{}, err
		}
	}
	open := []string{StatusInProgress, StatusTodo, StatusBlocked, StatusBacklog}
	mine, _, err := s.st.ListTasks(TaskFilter{ProjectID: projectID, AssigneeID: agentID, Statuses: open})
	if err != nil {
		return NextAction{}, err
	}
	for _, t := range mine {
		switch t.Status {
		case StatusInProgress:
			st.inProgress = append(st.inProgress, t)
		case StatusTodo:
			blockers, err := openBlockers(s.st, t)
			if err != nil {
				return NextAction{}, err
			}
			if len(blockers) == 0 {
				st.ready = append(st.ready, t)
			} else {
				st.waiting = append(st.waiting, t)
			}
		case StatusBlocked:
			st.waiting = append(st.waiting, t)
		case StatusBacklog:
			st.backlog = append(st.backlog, t)
		}
	}
	created, _, err := s.st.ListTasks(TaskFilter{ProjectID: projectID, CreatorID: agentID, Statuses: open})
	if err != nil {
		return NextAction{}, err
	}
	// Work the agent asked for in chat counts as handed out too: the
	// seed's pilot failure was a manager told "all done" while the work it
	// had asked for in chat was open.
	requested, _, err := s.st.ListTasks(TaskFilter{ProjectID: projectID, RequesterID: agentID, Statuses: open})
	if err != nil {
		return NextAction{}, err
	}
	seen := map[string]bool{}
	for _, t := range append(created, requested...) {
		if t.AssigneeID != agentID && !seen[t.ID] {
			seen[t.ID] = true
			st.delegated = append(st.delegated, t)
		}
	}
	if st.pending, err = s.st.CountPending(agentID, projectID); err != nil {
		return NextAction{}, err
	}
	convs, err := s.st.ListConversations(ConversationFilter{ProjectID: projectID, MemberID: agentID, State: ConversationActive})
	if err != nil {
		return NextAction{}, err
	}
	ids := make([]string, len(convs))
	for i, c := range convs {
		ids[i] = c.ID
	}
	last, err := s.st.LastMessages(ids)
	if err != nil {
		return NextAction{}, err
	}
	for _, c := range convs {
		m, ok := last[c.ID]
		switch {
		case !ok:
		case m.SenderID == agentID:
			st.awaiting = append(st.awaiting, c.ID)
		default:
			st.unanswered = append(st.unanswered, c.ID)
		}
	}
	return decideNext(st), nil
}

// decideNext is get_next_action's decision, a pure function of the state.
func decideNext(st agentState) NextAction {
	a := NextAction{Notifications: st.notifications, InProgress: len(st.inProgress), Ready: len(st.ready), Waiting: len(st.waiting),
		Backlog: len(st.backlog), PendingMessages: st.pending, DelegatedOpen: len(st.delegated), AwaitingReply: len(st.awaiting)}
	if a.Notifications == nil {
		a.Notifications = []Notification{}
	}
	openTasks := len(st.inProgress) + len(st.ready) + len(st.waiting) + len(st.backlog)
	first := func(ts []Task) *Task { t := ts[0]; return &t }

	if st.purpose == core.PurposeChat {
		switch {
		case st.pending > 0:
			a.Action, a.Reason = NextRespond, fmt.Sprintf("%d message(s) wait for you", st.pending)
			a.Instruction = "Call get_pending_messages, then answer each with respond_chat. If a message asks you for work, make it a " +
				"tracked task: request_task (new work for yourself) or start_task_from_chat (a task already assigned to you), with requester_id."
		case len(st.unanswered) > 0:
			a.Action, a.ConversationID = NextRespond, st.unanswered[0]
			a.Reason = fmt.Sprintf("%d conversation(s) end with someone else's message", len(st.unanswered))
			a.Instruction = fmt.Sprintf("Answer in conversation %s with respond_chat, or end it with end_conversation when nothing is left to say. "+
				"Work asked for in chat must become a tracked task (request_task or start_task_from_chat).", st.unanswered[0])
		case openTasks > 0:
			a.Action = NextSwitchToTask
			a.Reason = fmt.Sprintf("%d open task(s) are assigned to you", openTasks)
			a.Instruction = "Tasks are worked in a task session: authenticate with purpose task (or use your task connection) and call get_next_action there."
			if len(st.inProgress) > 0 {
				a.Task = first(st.inProgress)
			} else if len(st.ready) > 0 {
				a.Task = first(st.ready)
			}
		case len(st.awaiting) > 0:
			a.Action, a.ConversationID = NextWaitReply, st.awaiting[0]
			a.Reason = fmt.Sprintf("you wait for an answer in %d conversation(s)", len(st.awaiting))
			a.Instruction = "Wait, then call get_pending_messages for the answers."
		case len(st.delegated) > 0:
			a.Action = NextMonitor
			a.Reason = fmt.Sprintf("%d task(s) you handed out are open", len(st.delegated))
			a.Instruction = "Nothing waits for you in chat. Follow the tasks you handed out; their assignees report when they are done or blocked."
		default:
			a.Action, a.Reason = NextAllDone, "no message waits for you and no task is open for you"
			a.Instruction = "Nothing is left for you in chat. End conversations you no longer need (end_conversation) and log out."
		}
		return a
	}

	var notice *Notification
	for i, n := range st.notifications { // an interrupt first, else the oldest call to the chat
		if n.Type == NotifyInterrupt {
			notice = &st.notifications[i]
			break
		}
		if notice == nil && (n.Type == NotifyChatSession || (n.Action == ActionCheckChat && n.ConversationID != "")) {
			notice = &st.notifications[i]
		}
	}
	switch {
	case notice != nil:
		a.Action, a.ConversationID, a.Reason = NextCheckNotification, notice.ConversationID, "notification: "+notice.Message
		a.Instruction = notice.Instruction
		if !strings.Contains(a.Instruction, "get_conversation_messages") {
			a.Instruction += fmt.Sprintf(" Read it with get_conversation_messages(conversation_id: %q).", notice.ConversationID)
		}
	case len(st.inProgress) > 0:
		a.Action, a.Task = NextContinueTask, first(st.inProgress)
		a.Reason = fmt.Sprintf("task %s is in progress", a.Task.ID)
		a.Instruction = fmt.Sprintf("Continue task %s (%s). When it is finished call report_completed(result: success); if you cannot go on, "+
			"report_completed(result: blocked, summary: why).", a.Task.ID, a.Task.Title)
	case len(st.ready) > 0:
		a.Action, a.Task = NextStartTask, first(st.ready)
		a.Reason = fmt.Sprintf("task %s is ready (todo, nothing blocks it)", a.Task.ID)
		a.Instruction = fmt.Sprintf("Start task %s (%s): call update_task_status(task_id: %q, status: \"in_progress\"), then work on it.",
			a.Task.ID, a.Task.Title, a.Task.ID)
	case st.pending > 0 || len(st.unanswered) > 0:
		a.Action = NextCheckChat
		a.Reason = fmt.Sprintf("%d message(s) wait for you in chat", st.pending)
		what := "Messages wait for you. Read them (get_conversation_messages)"
		if st.pending == 0 {
			// Read, but the conversation ends with someone else's message
			// (found by a new-user test: it said messages wait, and the
			// agent found none).
			a.Reason = fmt.Sprintf("%d conversation(s) end with someone else's message, which you have read", len(st.unanswered))
			what = "A conversation ends with someone else's message, which you have read and not answered. Read it again if need be (get_conversation_messages)"
		}
		if len(st.unanswered) > 0 {
			a.ConversationID = st.unanswered[0]
		}
		a.Instruction = what + ", and answer from a chat session (authenticate with purpose chat, " +
			"get_pending_messages, respond_chat). Work asked for in chat must become a tracked task (request_task or start_task_from_chat)."
	case len(st.waiting) > 0:
		a.Action, a.Task = NextWaitBlocked, first(st.waiting)
		a.Reason = fmt.Sprintf("%d open task(s) of yours wait for other tasks or are blocked", len(st.waiting))
		a.Instruction = "Your open tasks cannot go on yet. You will be notified when what they wait for is done; tell whoever can unblock them " +
			"(update_task_status with blocked_reason keeps the board right). Call get_next_action again later."
	case len(st.backlog) > 0:
		a.Action, a.Task = NextPlanBacklog, first(st.backlog)
		a.Reason = fmt.Sprintf("%d task(s) of yours are in the backlog", len(st.backlog))
		a.Instruction = "Your remaining tasks are in the backlog, not ready yet. Ask whoever assigned them whether to start, or move one to todo with update_task_status."
	case len(st.delegated) > 0:
		a.Action, a.Task = NextMonitor, first(st.delegated)
		a.Reason = fmt.Sprintf("%d task(s) you created for others are open", len(st.delegated))
		a.Instruction = "Tasks you handed out are still open. Wait for their assignees; you are notified when they are done or blocked. Call get_next_action again later."
	case len(st.awaiting) > 0:
		a.Action, a.ConversationID = NextWaitReply, st.awaiting[0]
		a.Reason = fmt.Sprintf("you wait for an answer in %d conversation(s)", len(st.awaiting))
		a.Instruction = "You asked something in chat and wait for the answer; call get_next_action again later."
	default:
		a.Action, a.Reason = NextAllDone, "no task is open for you, nothing waits for you in chat, and the tasks you handed out are closed"
		a.Instruction = "All your work is done. Call logout to end this session."
	}
	return a
}
