package teams

// Events the Board and Chat screens follow (`area:verb`, listed in
// api.EventPayloads and mirrored in the generated TypeScript).
const (
	// EventBoardChanged: tasks of a project changed (created, moved,
	// edited, assigned, completed). Payload BoardChanged.
	EventBoardChanged = "board:changed"
	// EventChatMessage: a message was written. Payload ChatMessageEvent.
	EventChatMessage = "chat:message"
	// EventConversationChanged: a conversation started, ended or got a
	// participant. Payload ConversationChanged.
	EventConversationChanged = "chat:conversation"
	// EventExecutionChanged: an execution started or ended. Payload
	// ExecutionChanged.
	EventExecutionChanged = "execution:changed"
)

// BoardChanged says which tasks changed; an empty ProjectID means possibly
// every project (after another process changed the database).
type BoardChanged struct {
	ProjectID string   `json:"projectId"`
	TaskIDs   []string `json:"taskIds"`
	// Reason is what happened: created, status, assigned, edited,
	// completed, reload.
	Reason string `json:"reason"`
	// AgentID is who made the change.
	AgentID string `json:"agentId"`
}

// ChatMessageEvent carries a new message.
type ChatMessageEvent struct {
	ProjectID string  `json:"projectId"`
	Message   Message `json:"message"`
}

// ConversationChanged says a conversation changed; an empty ConversationID
// means possibly all of them.
type ConversationChanged struct {
	ProjectID      string `json:"projectId"`
	ConversationID string `json:"conversationId"`
	State          string `json:"state"`
	Reason         string `json:"reason"`
}

// ExecutionChanged says an execution started or ended.
type ExecutionChanged struct {
	ProjectID   string `json:"projectId"`
	TaskID      string `json:"taskId"`
	AgentID     string `json:"agentId"`
	ExecutionID string `json:"executionId"`
	Status      string `json:"status"`
}

func (s *Service) boardChanged(projectID, reason, agentID string, taskIDs ...string) {
	if taskIDs == nil {
		taskIDs = []string{}
	}
	s.events.Emit(EventBoardChanged, BoardChanged{ProjectID: projectID, TaskIDs: taskIDs, Reason: reason, AgentID: agentID})
}
