package teams

import (
	"time"
)

// Task statuses (SPEC §6.1).
const (
	StatusBacklog    = "backlog"
	StatusTodo       = "todo"
	StatusInProgress = "in_progress"
	StatusBlocked    = "blocked"
	StatusDone       = "done"
	StatusCancelled  = "cancelled"
)

// Statuses lists the task statuses in board order.
var Statuses = []string{StatusBacklog, StatusTodo, StatusInProgress, StatusBlocked, StatusDone, StatusCancelled}

// Task priorities.
const (
	PriorityLow    = "low"
	PriorityMedium = "medium"
	PriorityHigh   = "high"
	PriorityUrgent = "urgent"
)

// Priorities lists the priorities, lowest first.
var Priorities = []string{PriorityLow, PriorityMedium, PriorityHigh, PriorityUrgent}

// StatusRank orders statuses for an agent's task list: the work at hand
// first (in progress, then ready, then blocked, then not yet planned), the
// closed last. The store keeps it in a column so that the list is read in
// index order.
func StatusRank(status string) int {
	switch status {
	case StatusInProgress:
		return 0
	case StatusTodo:
		return 1
	case StatusBlocked:
		return 2
	case StatusBacklog:
		return 3
	case StatusDone:
		return 4
	}
	return 5
}

// PriorityRank orders priorities, the most urgent first (0).
func PriorityRank(priority string) int {
	switch priority {
	case PriorityUrgent:
		return 0
	case PriorityHigh:
		return 1
	case PriorityMedium:
		return 2
	}
	return 3
}

// Open reports whether a task in status is still to be worked on: it is
// neither done nor cancelled. An open task blocks the tasks that depend on
// it.
func Open(status string) bool { return status != StatusDone && status != StatusCancelled }

// OpenStatuses lists the statuses Open accepts, in board order.
func OpenStatuses() []string {
	var out []string
	for _, st := range Statuses {
		if Open(st) {
			out = append(out, st)
		}
	}
	return out
}

// Task is one piece of work in a project.
type Task struct {
	ID          string `json:"id"`
	ProjectID   string `json:"projectId"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Status      string `json:"status"`
	Priority    string `json:"priority"`
	// AssigneeID is the agent doing it; empty while unassigned.
	AssigneeID string `json:"assigneeId"`
	// CreatedByAgentID is the agent that created it (the owner for tasks
	// made on the board).
	CreatedByAgentID string `json:"createdByAgentId"`
	ParentTaskID     string `json:"parentTaskId"`
	// DependsOn are the tasks that must be done (or cancelled) before this
	// one can start.
	DependsOn     []string `json:"dependsOn"`
	BlockedReason string   `json:"blockedReason"`
	// StatusChangedByAgentID is who made the last status change.
	StatusChangedByAgentID string     `json:"statusChangedByAgentId"`
	StatusChangedAt        *time.Time `json:"statusChangedAt"`
	// StartedFromConversationID is the conversation a start_task_from_chat
	// named (seed 001).
	StartedFromConversationID string `json:"startedFromConversationId"`
	// RequestedInConversationID and RequestedByAgentID say where and by
	// whom work asked for in chat was requested (request_task).
	RequestedInConversationID string `json:"requestedInConversationId"`
	RequestedByAgentID        string `json:"requestedByAgentId"`
	// Result and Summary are what report_completed said.
	Result      string     `json:"result"`
	Summary     string     `json:"summary"`
	CreatedAt   time.Time  `json:"createdAt"`
	UpdatedAt   time.Time  `json:"updatedAt"`
	CompletedAt *time.Time `json:"completedAt"`
}

// TaskFilter selects tasks. Zero fields select everything.
type TaskFilter struct {
	ProjectID  string
	AssigneeID string
	CreatorID  string
	// RequesterID selects the tasks the agent asked for in chat.
	RequesterID string
	ParentID    string
	Statuses    []string
	// Limit caps the tasks returned (0: no cap); the total is counted
	// regardless.
	Limit  int
	Offset int
}

// Task event kinds: what changed in a task's history.
const (
	EventCreated  = "created"
	EventStatus   = "status"
	EventAssigned = "assigned"
	EventEdited   = "edited"
)

// TaskEvent is one change in a task's history: who changed what, when.
type TaskEvent struct {
	ID     int64  `json:"id"`
	TaskID string `json:"taskId"`
	// Kind is EventCreated, EventStatus, EventAssigned or EventEdited.
	Kind       string   `json:"kind"`
	FromStatus string   `json:"fromStatus"`
	ToStatus   string   `json:"toStatus"`
	Fields     []string `json:"fields"`
	// AgentID is who made the change; AgentName is filled in when read.
	AgentID   string `json:"agentId"`
	AgentName string `json:"agentName"`
	Detail    string `json:"detail"`
	// ConversationID is set for a change made from chat.
	ConversationID string    `json:"conversationId"`
	CreatedAt      time.Time `json:"createdAt"`
}

// Chat → task operations (seed 001's TaskOperation).
const (
	OperationStart  = "start"
	OperationUpdate = "update"
)

// ChatModification is the audit of one chat-driven change of a task
// (seed 001's ChatModificationLog): who asked (the requester), who acted
// (the executor), in which conversation, which fields. Warning is set when
// the requester never wrote in any conversation of the executor's — the
// requester_id an agent gave may be false.
type ChatModification struct {
	ID             string    `json:"id"`
	TaskID         string    `json:"taskId"`
	ConversationID string    `json:"conversationId"`
	RequesterID    string    `json:"requesterId"`
	ExecutorID     string    `json:"executorId"`
	Operation      string    `json:"operation"`
	Fields         []string  `json:"fields"`
	Warning        bool      `json:"warning"`
	WarningReason  string    `json:"warningReason"`
	CreatedAt      time.Time `json:"createdAt"`
}

// Conversation states.
const (
	ConversationActive = "active"
	ConversationEnded  = "ended"
)

// Participant roles: a member takes part; an observer (the owner reading
// on the Chat screen) only has a read position.
const (
	RoleMember   = "member"
	RoleObserver = "observer"
)

// Participant is one agent's place in a conversation.
type Participant struct {
	AgentID   string `json:"agentId"`
	AgentName string `json:"agentName"`
	Role      string `json:"role"`
	// LastReadSeq is the sequence number of the last message the agent
	// has read (get_pending_messages and respond_chat move it).
	LastReadSeq int64     `json:"lastReadSeq"`
	JoinedAt    time.Time `json:"joinedAt"`
}

// Conversation is a chat between agents (and the owner) in a project.
type Conversation struct {
	ID            string        `json:"id"`
	ProjectID     string        `json:"projectId"`
	Topic         string        `json:"topic"`
	State         string        `json:"state"`
	InitiatorID   string        `json:"initiatorId"`
	RelatedTaskID string        `json:"relatedTaskId"`
	Participants  []Participant `json:"participants"`
	CreatedAt     time.Time     `json:"createdAt"`
	UpdatedAt     time.Time     `json:"updatedAt"`
	EndedAt       *time.Time    `json:"endedAt"`
	EndedBy       string        `json:"endedBy"`
}

// Member reports whether agentID is a member of c.
func (c Conversation) Member(agentID string) bool {
	for _, p := range c.Participants {
		if p.AgentID == agentID && p.Role == RoleMember {
			return true
		}
	}
	return false
}

func (c Conversation) participant(agentID string) (Participant, bool) {
	for _, p := range c.Participants {
		if p.AgentID == agentID {
			return p, true
		}
	}
	return Participant{}, false
}

// ConversationFilter selects conversations.
type ConversationFilter struct {
	ProjectID string
	// MemberID selects the conversations the agent is a member of.
	MemberID string
	State    string
}

// Message is one chat message.
type Message struct {
	// Seq orders messages: it grows with every message in the database.
	Seq            int64  `json:"seq"`
	ID             string `json:"id"`
	ConversationID string `json:"conversationId"`
	SenderID       string `json:"senderId"`
	// SenderName is filled in when read.
	SenderName string    `json:"senderName"`
	Content    string    `json:"content"`
	InReplyTo  string    `json:"inReplyTo"`
	CreatedAt  time.Time `json:"createdAt"`
	// Unread is set on a message just written: how many messages of
	// others in its conversation its writer had not read yet. Its read
	// position then stays before them: they are still pending.
	Unread int `json:"-"`
}

// Notification types (seed 001's AgentNotificationType).
const (
	NotifyStatusChange = "status_change"
	NotifyInterrupt    = "interrupt"
	NotifyMessage      = "message"
	NotifyChatSession  = "chat_session_notification"
)

// Notification actions: what the receiving agent is asked to do.
const (
	ActionCheckChat    = "check_chat"
	ActionTaskAssigned = "task_assigned"
	ActionTaskChanged  = "task_changed"
	ActionUnblocked    = "dependency_resolved"
)

// Notification is a message for an agent's task session, delivered once:
// with the response to its next tool call (or in get_next_action), then
// marked read.
type Notification struct {
	ID            string `json:"id"`
	TargetAgentID string `json:"targetAgentId"`
	// TargetProjectID is the project of the sessions it is for; empty for
	// any.
	TargetProjectID string `json:"targetProjectId"`
	// Type is NotifyStatusChange, NotifyInterrupt, NotifyMessage or
	// NotifyChatSession.
	Type           string     `json:"type"`
	Action         string     `json:"action"`
	TaskID         string     `json:"taskId"`
	ConversationID string     `json:"conversationId"`
	Message        string     `json:"message"`
	Instruction    string     `json:"instruction"`
	SourceAgentID  string     `json:"sourceAgentId"`
	CreatedAt      time.Time  `json:"createdAt"`
	ReadAt         *time.Time `json:"readAt"`
}

// Execution statuses (ExecutionLog).
const (
	ExecRunning   = "running"
	ExecCompleted = "completed"
	ExecFailed    = "failed"
	ExecStopped   = "stopped"
)

// ExecStatuses lists the execution statuses.
var ExecStatuses = []string{ExecRunning, ExecCompleted, ExecFailed, ExecStopped}

// Execution is one run of an agent on a task (seed 001's ExecutionLog),
// with the file its output was captured in.
type Execution struct {
	ID          string     `json:"id"`
	TaskID      string     `json:"taskId"`
	AgentID     string     `json:"agentId"`
	ProjectID   string     `json:"projectId"`
	Status      string     `json:"status"`
	StartedAt   time.Time  `json:"startedAt"`
	CompletedAt *time.Time `json:"completedAt"`
	ExitCode    *int       `json:"exitCode"`
	LogFilePath string     `json:"logFilePath"`
}

// ExecutionFilter selects executions, newest first.
type ExecutionFilter struct {
	AgentID   string
	TaskID    string
	ProjectID string
	Status    string
	Limit     int
}

// Store persists the team's tasks, conversations, notifications and
// executions. Errors for a missing row are *core.Error with core.ENotFound;
// the Service turns them into the seeds' codes.
type Store interface {
	// Atomic runs fn in one transaction: everything fn does through the
	// Store it is given happens, or nothing does. Two Atomic calls never
	// interleave (the claims of notifications and messages rely on it).
	// fn must not use any other store (the database has one connection).
	Atomic(fn func(Store) error) error

	CreateTask(t Task) error
	GetTask(id string) (Task, error)
	// UpdateTask writes every field of t except DependsOn.
	UpdateTask(t Task) error
	// ListTasks returns the tasks f selects, ordered for an agent's list
	// (StatusRank, PriorityRank, oldest first), and how many f selects
	// without its limit.
	ListTasks(f TaskFilter) ([]Task, int, error)
	// TaskCounts counts a project's tasks by status.
	TaskCounts(projectID string) (map[string]int, error)
	// AgentProjects returns the projects agentID is assigned to, as the
	// transaction sees them.
	AgentProjects(agentID string) ([]string, error)
	// ProjectDependencies returns the dependency edges among a project's
	// tasks: task id → the ids it depends on.
	ProjectDependencies(projectID string) (map[string][]string, error)
	// SetDependencies replaces the tasks taskID depends on.
	SetDependencies(taskID string, dependsOn []string) error
	// Dependents returns the tasks that depend on taskID.
	Dependents(taskID string) ([]Task, error)
	AddTaskEvent(e TaskEvent) error
	TaskEvents(taskID string) ([]TaskEvent, error)
	AddChatModification(m ChatModification) error
	ChatModifications(taskID string) ([]ChatModification, error)

	CreateConversation(c Conversation) error
	GetConversation(id string) (Conversation, error)
	ListConversations(f ConversationFilter) ([]Conversation, error)
	// UpdateConversation writes c's topic, state, ending and updated time.
	UpdateConversation(c Conversation) error
	// AddParticipant adds p, or makes an observer a member.
	AddParticipant(conversationID string, p Participant) error
	// SetReadPosition moves agentID's read position in a conversation
	// forward to seq (never back).
	SetReadPosition(conversationID, agentID string, seq int64) error
	// AddMessage stores m and sets its Seq.
	AddMessage(m *Message) error
	// Messages returns the last limit messages of a conversation written
	// before the message with sequence number before (every message when
	// before is 0), in the order they were written, and how many the
	// conversation has in all.
	Messages(conversationID string, before int64, limit int) ([]Message, int, error)
	// LastMessages returns the newest message of each of the given
	// conversations.
	LastMessages(conversationIDs []string) (map[string]Message, error)
	// UnreadCounts counts, per conversation, the messages after agentID's
	// read position written by others.
	UnreadCounts(agentID string, conversationIDs []string) (map[string]int, error)
	// PendingMessages returns the messages written by others after
	// agentID's read position in the active and ended conversations it
	// is a member of (in projectID, unless empty), oldest first.
	PendingMessages(agentID, projectID string, limit int) ([]Message, error)
	// CountPending counts what PendingMessages would return without a
	// limit.
	CountPending(agentID, projectID string) (int, error)
	// HasMessageFrom reports whether senderID wrote in any conversation
	// memberID is a member of (in projectID, unless empty).
	HasMessageFrom(senderID, memberID, projectID string) (bool, error)

	CreateNotification(n Notification) error
	// UnreadNotifications returns agentID's unread notifications for
	// projectID (those for any project included; every one when projectID
	// is empty), oldest first.
	UnreadNotifications(agentID, projectID string) ([]Notification, error)
	// MarkNotificationsRead marks the given notifications read at at,
	// those still unread only, and returns how many it marked.
	MarkNotificationsRead(ids []string, at time.Time) (int64, error)
	// AgentsWithUnreadNotifications lists the agents that have any.
	AgentsWithUnreadNotifications() ([]string, error)

	CreateExecution(e Execution) error
	GetExecution(id string) (Execution, error)
	UpdateExecution(e Execution) error
	ListExecutions(f ExecutionFilter) ([]Execution, int, error)
}
