package api

import (
	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/teams"
)

// Chat is the Chat screen: every conversation of a project with its
// participants, state and what the person has not read; the messages; and
// the person, as the owner, writing into any conversation or starting one
// with any agent. Live updates come as chat:message and chat:conversation
// events.
type Chat struct{ d Deps }

// Conversations returns a project's conversations (every project's when
// projectID is empty), the most recently active first, with what the owner
// has not read.
func (c *Chat) Conversations(projectID string) ([]teams.ConversationSummary, error) {
	if projectID != "" {
		p, err := c.d.Teams.Project(projectID)
		if err != nil {
			return nil, err
		}
		projectID = p.ID
	}
	return c.d.Teams.Summaries(authz.OwnerID, teams.ConversationFilter{ProjectID: projectID})
}

// MessagesView is a conversation with its last messages.
type MessagesView struct {
	Conversation teams.Conversation `json:"conversation"`
	Messages     []teams.Message    `json:"messages"`
	// Total is how many messages the conversation has.
	Total int `json:"total"`
}

// Messages returns the last limit messages of a conversation (default 100),
// oldest first. Before pages back: with the seq of the oldest message the
// UI shows, it returns the ones written before it (0 means the newest).
// It marks nothing read: MarkRead does.
func (c *Chat) Messages(conversationID string, limit int, before int64) (MessagesView, error) {
	if limit <= 0 {
		limit = 100
	}
	if limit > 1000 {
		return MessagesView{}, core.Errorf(core.EInvalid, "limit must be at most 1000")
	}
	if before < 0 {
		return MessagesView{}, core.Errorf(core.EInvalid, "before must be a message seq, or 0 for the newest")
	}
	conv, msgs, total, err := c.d.Teams.ConversationMessages(authz.OwnerID, "", conversationID, before, limit)
	if err != nil {
		return MessagesView{}, err
	}
	if msgs == nil {
		msgs = []teams.Message{}
	}
	return MessagesView{Conversation: conv, Messages: msgs, Total: total}, nil
}

// MarkRead marks a conversation read up to its newest message for the
// owner.
func (c *Chat) MarkRead(conversationID string) error {
	return c.d.Teams.MarkRead(authz.OwnerID, conversationID)
}

// Send writes into a conversation as the owner, who joins it if needed;
// its agents' task sessions are told to look at the chat.
func (c *Chat) Send(conversationID, content string) (teams.Message, error) {
	return c.d.Teams.PostMessage(authz.OwnerID, "", conversationID, content, "")
}

// Start opens a conversation of the owner with agents of a project (ids or
// names), with a first message.
func (c *Chat) Start(projectID string, agentIDs []string, topic, message string) (teams.ConversationSummary, error) {
	p, err := c.d.Teams.Project(projectID)
	if err != nil {
		return teams.ConversationSummary{}, err
	}
	conv, _, err := c.d.Teams.StartConversation(authz.OwnerID, p.ID, agentIDs, topic, message, "")
	if err != nil {
		return teams.ConversationSummary{}, err
	}
	return c.d.Teams.Summary(authz.OwnerID, conv)
}

// StartAboutTask starts a conversation with a task's assignee about the
// task, as the owner: the topic is the task's title and the conversation is
// linked to it (it shows in the task's detail).
func (c *Chat) StartAboutTask(taskID, message string) (teams.ConversationSummary, error) {
	t, err := c.d.Teams.Task(taskID)
	if err != nil {
		return teams.ConversationSummary{}, err
	}
	if t.AssigneeID == "" {
		return teams.ConversationSummary{}, core.Errorf(core.EInvalid, "task %s has no assignee to talk to", t.ID).
			WithHint("assign the task first, or start a conversation with any agent on the Chat screen")
	}
	conv, _, err := c.d.Teams.StartConversation(authz.OwnerID, t.ProjectID, []string{t.AssigneeID}, t.Title, message, t.ID)
	if err != nil {
		return teams.ConversationSummary{}, err
	}
	return c.d.Teams.Summary(authz.OwnerID, conv)
}

// End ends a conversation, as the owner.
func (c *Chat) End(conversationID string) (teams.Conversation, error) {
	return c.d.Teams.EndConversation(authz.OwnerID, "", conversationID, "")
}
