package teams

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
)

// MaxParticipants bounds the agents one conversation is started with.
const MaxParticipants = 20

var msgIDRE = regexp.MustCompile(`^msg_[0-9a-f]{1,32}$`)

// memberConversation returns conversation id when agentID is a member of
// it: conversation_not_found for an unknown id, unauthorized for someone
// else's conversation.
func memberConversation(tx Store, id, agentID string) (Conversation, error) {
	if id == "" {
		return Conversation{}, core.Errorf(core.EInvalid, "conversation_id is required")
	}
	c, err := tx.GetConversation(id)
	if err != nil {
		return Conversation{}, notFoundAs(err, errConversationNotFound(id))
	}
	if !c.Member(agentID) {
		return Conversation{}, core.Errorf(ECodeUnauthorized, "You are not a participant of conversation %s", id)
	}
	return c, nil
}

// reachable refuses conversation c to actor as if it did not exist when it
// is in a project actor is not in (any more), or, when actor's session
// works in projectID, in another project: the same answer as tasks give
// (found by a red team: an agent taken off a project went on reading,
// writing and ending that project's conversations; a session of one
// project reached another project's). The owner reaches every one.
func reachable(actor authz.Agent, c Conversation, projectID string) error {
	if actor.Kind == authz.KindOwner {
		return nil
	}
	if !inProject(actor, c.ProjectID) || (projectID != "" && c.ProjectID != projectID) {
		return errConversationNotFound(c.ID)
	}
	return nil
}

// Conversation returns conversation id.
func (s *Service) Conversation(id string) (Conversation, error) {
	c, err := s.st.GetConversation(id)
	return c, notFoundAs(err, errConversationNotFound(id))
}

// Conversations returns the conversations f selects, the most recently
// active first.
func (s *Service) Conversations(f ConversationFilter) ([]Conversation, error) {
	return s.st.ListConversations(f)
}

// LastMessages returns the newest message of each conversation.
func (s *Service) LastMessages(ids []string) (map[string]Message, error) {
	return s.st.LastMessages(ids)
}

// UnreadCounts counts the messages viewerID has not read, per conversation.
func (s *Service) UnreadCounts(viewerID string, ids []string) (map[string]int, error) {
	return s.st.UnreadCounts(viewerID, ids)
}

// StartConversation opens a conversation of actorID with the agents in
// with (ids or names, assigned to the project), about topic, optionally
// with a first message and the task it is about. The invitees' task
// sessions are told to look at the chat.
func (s *Service) StartConversation(actorID, projectID string, with []string, topic, first, relatedTaskID string) (Conversation, *Message, error) {
	r, err := s.roster()
	if err != nil {
		return Conversation{}, nil, err
	}
	actor, ok := r.byID[actorID]
	if !ok {
		return Conversation{}, nil, errAgentNotFound(actorID)
	}
	if !inProject(actor, projectID) {
		return Conversation{}, nil, errNotAssigned(actor, projectID)
	}
	if len(with) == 0 {
		return Conversation{}, nil, core.Errorf(core.EInvalid, "name at least one agent to talk with")
	}
	if len(with) > MaxParticipants {
		return Conversation{}, nil, core.Errorf(core.ETooLarge, "%d participants; at most %d are allowed", len(with), MaxParticipants)
	}
	if err := checkLine("topic", topic, MaxTopic, false); err != nil {
		return Conversation{}, nil, err
	}
	if err := checkText("initial_message", first, MaxMessage, false); err != nil {
		return Conversation{}, nil, err
	}
	now := s.now().UTC()
	c := Conversation{ID: newID("conv_"), ProjectID: projectID, Topic: strings.TrimSpace(topic), State: ConversationActive, InitiatorID: actorID,
		CreatedAt: now, UpdatedAt: now, Participants: []Participant{{AgentID: actorID, AgentName: actor.Name, Role: RoleMember, JoinedAt: now}}}
	for _, ref := range with {
		a, err := r.find(ref)
		if err != nil {
			return Conversation{}, nil, err
		}
		if !inProject(a, projectID) {
			return Conversation{}, nil, errNotAssigned(a, projectID)
		}
		if a.Status != authz.StatusActive {
			return Conversation{}, nil, core.Errorf(core.EInvalid, "Agent '%s' is %s and cannot take part in a conversation", a.Name, a.Status)
		}
		if _, dup := c.participant(a.ID); dup {
			continue
		}
		c.Participants = append(c.Participants, Participant{AgentID: a.ID, AgentName: a.Name, Role: RoleMember, JoinedAt: now})
	}
	if len(c.Participants) < 2 {
		return Conversation{}, nil, core.Errorf(core.EInvalid, "a conversation needs another agent than yourself")
	}
	var msg *Message
	err = s.atomic(func(tx Store, fx *effects) error {
		if relatedTaskID != "" {
			t, err := getTask(tx, relatedTaskID, projectID)
			if err != nil {
				return err
			}
			c.RelatedTaskID = t.ID
		}
		if err := tx.CreateConversation(c); err != nil {
			return err
		}
		if strings.TrimSpace(first) != "" {
			m := Message{ID: newID("msg_"), ConversationID: c.ID, SenderID: actorID, SenderName: actor.Name, Content: first, CreatedAt: now}
			if err := tx.AddMessage(&m); err != nil {
				return err
			}
			if err := tx.SetReadPosition(c.ID, actorID, m.Seq); err != nil {
				return err
			}
			msg = &m
		}
		for _, p := range c.Participants {
			if p.AgentID == actorID {
				continue
			}
			text := fmt.Sprintf("%s started a conversation with you", actor.Name)
			if c.Topic != "" {
				text += ": " + c.Topic
			}
			if err := fx.notify(tx, chatNotification(p.AgentID, c, actorID, text)); err != nil {
				return err
			}
		}
		fx.after(func() {
			s.events.Emit(EventConversationChanged, ConversationChanged{ProjectID: projectID, ConversationID: c.ID, State: c.State, Reason: "started"})
			if msg != nil {
				s.events.Emit(EventChatMessage, ChatMessageEvent{ProjectID: projectID, Message: *msg})
			}
		})
		return nil
	})
	if err != nil {
		return Conversation{}, nil, err
	}
	return c, msg, nil
}

// chatNotification asks agentID's task session to look at conversation c.
func chatNotification(agentID string, c Conversation, sourceID, text string) Notification {
	return Notification{TargetAgentID: agentID, TargetProjectID: c.ProjectID, Type: NotifyMessage, Action: ActionCheckChat,
		ConversationID: c.ID, TaskID: c.RelatedTaskID, SourceAgentID: sourceID, Message: text,
		Instruction: fmt.Sprintf("Someone is waiting for you in chat (conversation %s). Read it with get_conversation_messages(conversation_id: %q), "+
			"and answer from a chat session (authenticate with purpose chat, then get_pending_messages and respond_chat). "+
			"Work asked for in chat must become a task: request_task, or start_task_from_chat for a task you already have.", c.ID, c.ID)}
}

// PostMessage writes content into conversation convID as actorID, a
// member; the owner may write into any conversation (and joins it). The
// writer's read position moves to its message when it had read everything
// before; a message of another that came in since it last read stays
// pending, and Message.Unread says how many (found by a new-user test:
// an agent answered "done with v1" past "requirement changed, use v2",
// which was then marked read and never seen).
func (s *Service) PostMessage(actorID, projectID, convID, content, inReplyTo string) (Message, error) {
	r, err := s.roster()
	if err != nil {
		return Message{}, err
	}
	actor, ok := r.byID[actorID]
	if !ok {
		return Message{}, errAgentNotFound(actorID)
	}
	if err := checkText("content", content, MaxMessage, true); err != nil {
		return Message{}, err
	}
	if inReplyTo != "" && !msgIDRE.MatchString(inReplyTo) {
		return Message{}, core.Errorf(core.EInvalid, "in_reply_to %q is not a message id", inReplyTo)
	}
	var m Message
	err = s.atomic(func(tx Store, fx *effects) error {
		var err error
		if convID != "" {
			c, err := tx.GetConversation(convID)
			if err != nil {
				return notFoundAs(err, errConversationNotFound(convID))
			}
			if err := reachable(actor, c, projectID); err != nil {
				return err
			}
		}
		m, err = s.post(tx, fx, r, actor, convID, content, inReplyTo)
		return err
	})
	return m, err
}

func (s *Service) post(tx Store, fx *effects, r roster, actor authz.Agent, convID, content, inReplyTo string) (Message, error) {
	if convID == "" {
		return Message{}, core.Errorf(core.EInvalid, "conversation_id is required")
	}
	c, err := tx.GetConversation(convID)
	if err != nil {
		return Message{}, notFoundAs(err, errConversationNotFound(convID))
	}
	owner := actor.Kind == authz.KindOwner
	if !c.Member(actor.ID) && !owner {
		return Message{}, core.Errorf(ECodeUnauthorized, "You are not a participant of conversation %s", convID)
	}
	if c.State != ConversationActive {
		return Message{}, core.Errorf(ECodeConversationEnded, "Conversation %s has ended", convID).
			WithHint("start a new conversation with start_conversation or send_message")
	}
	now := s.now().UTC()
	if !c.Member(actor.ID) {
		p := Participant{AgentID: actor.ID, AgentName: actor.Name, Role: RoleMember, JoinedAt: now}
		if err := tx.AddParticipant(c.ID, p); err != nil {
			return Message{}, err
		}
		c.Participants = append(c.Participants, p)
		fx.after(func() {
			s.events.Emit(EventConversationChanged, ConversationChanged{ProjectID: c.ProjectID, ConversationID: c.ID, State: c.State, Reason: "joined"})
		})
	}
	pending, err := tx.PendingMessages(actor.ID, c.ProjectID, 0)
	if err != nil {
		return Message{}, err
	}
	unread := 0
	for _, p := range pending {
		if p.ConversationID == c.ID {
			unread++
		}
	}
	m := Message{ID: newID("msg_"), ConversationID: c.ID, SenderID: actor.ID, SenderName: actor.Name, Content: content, InReplyTo: inReplyTo, CreatedAt: now}
	if err := tx.AddMessage(&m); err != nil {
		return Message{}, err
	}
	m.Unread = unread
	if unread == 0 {
		if err := tx.SetReadPosition(c.ID, actor.ID, m.Seq); err != nil {
			return Message{}, err
		}
	}
	c.UpdatedAt = now
	if err := tx.UpdateConversation(c); err != nil {
		return Message{}, err
	}
	if unread == 0 && s.mayHaveNotifications(actor.ID) {
		if err := markChatNotificationsRead(tx, actor.ID, []string{c.ID}, now); err != nil {
			return Message{}, err
		}
	}
	if owner {
		// A word from the owner is an instruction from the top: the
		// members' task sessions hear of it, once per conversation until
		// they read it.
		for _, p := range c.Participants {
			if p.Role != RoleMember || p.AgentID == actor.ID {
				continue
			}
			pending, err := tx.UnreadNotifications(p.AgentID, c.ProjectID)
			if err != nil {
				return Message{}, err
			}
			if slices.ContainsFunc(pending, func(n Notification) bool {
				return n.ConversationID == c.ID && n.Action == ActionCheckChat && n.Type == NotifyMessage
			}) {
				continue
			}
			if err := fx.notify(tx, chatNotification(p.AgentID, c, actor.ID, "The owner wrote to you: "+clip(content, 500))); err != nil {
				return Message{}, err
			}
		}
	}
	fx.after(func() { s.events.Emit(EventChatMessage, ChatMessageEvent{ProjectID: c.ProjectID, Message: m}) })
	return m, nil
}

// markChatNotificationsRead marks agentID's unread "check the chat"
// notifications about the given conversations read: the agent is in the
// chat now, its task session need not be sent there.
func markChatNotificationsRead(tx Store, agentID string, convIDs []string, at time.Time) error {
	pending, err := tx.UnreadNotifications(agentID, "")
	if err != nil {
		return err
	}
	var ids []string
	for _, n := range pending {
		if n.Type == NotifyMessage && n.Action == ActionCheckChat && slices.Contains(convIDs, n.ConversationID) {
			ids = append(ids, n.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	_, err = tx.MarkNotificationsRead(ids, at)
	return err
}

// SendMessage sends content to the agent targetRef as actorID: into
// conversation convID when given (target must be a member), else into the
// latest active conversation of the two alone, else a new one.
func (s *Service) SendMessage(actorID, projectID, targetRef, content, convID string) (Conversation, Message, error) {
	r, err := s.roster()
	if err != nil {
		return Conversation{}, Message{}, err
	}
	actor, ok := r.byID[actorID]
	if !ok {
		return Conversation{}, Message{}, errAgentNotFound(actorID)
	}
	if targetRef == "" {
		return Conversation{}, Message{}, core.Errorf(core.EInvalid, "target_agent_id is required")
	}
	target, err := r.find(targetRef)
	if err != nil {
		return Conversation{}, Message{}, err
	}
	if !inProject(target, projectID) {
		return Conversation{}, Message{}, errNotAssigned(target, projectID)
	}
	if target.ID == actorID {
		return Conversation{}, Message{}, core.Errorf(core.EInvalid, "you cannot send a message to yourself")
	}
	if err := checkText("content", content, MaxMessage, true); err != nil {
		return Conversation{}, Message{}, err
	}
	if convID == "" {
		convs, err := s.st.ListConversations(ConversationFilter{ProjectID: projectID, MemberID: actorID, State: ConversationActive})
		if err != nil {
			return Conversation{}, Message{}, err
		}
		for _, c := range convs { // the most recently active first
			if c.Member(target.ID) && countMembers(c) == 2 {
				convID = c.ID
				break
			}
		}
	}
	if convID == "" {
		c, m, err := s.StartConversation(actorID, projectID, []string{target.ID}, "", content, "")
		if err != nil {
			return Conversation{}, Message{}, err
		}
		return c, *m, nil
	}
	var c Conversation
	var m Message
	err = s.atomic(func(tx Store, fx *effects) error {
		var err error
		if c, err = tx.GetConversation(convID); err != nil {
			return notFoundAs(err, errConversationNotFound(convID))
		}
		if c.ProjectID != projectID {
			return errConversationNotFound(convID)
		}
		if !c.Member(target.ID) {
			return core.Errorf(core.EInvalid, "Agent '%s' is not a participant of conversation %s", target.Name, convID)
		}
		m, err = s.post(tx, fx, r, actor, convID, content, "")
		return err
	})
	return c, m, err
}

func countMembers(c Conversation) int {
	n := 0
	for _, p := range c.Participants {
		if p.Role == RoleMember {
			n++
		}
	}
	return n
}

// EndConversation ends conversation convID as actorID (a member, or the
// owner), after writing summary into it when given.
func (s *Service) EndConversation(actorID, projectID, convID, summary string) (Conversation, error) {
	r, err := s.roster()
	if err != nil {
		return Conversation{}, err
	}
	actor, ok := r.byID[actorID]
	if !ok {
		return Conversation{}, errAgentNotFound(actorID)
	}
	if err := checkText("summary", summary, MaxMessage, false); err != nil {
		return Conversation{}, err
	}
	var c Conversation
	err = s.atomic(func(tx Store, fx *effects) error {
		var err error
		if c, err = tx.GetConversation(convID); err != nil {
			return notFoundAs(err, errConversationNotFound(convID))
		}
		if err := reachable(actor, c, projectID); err != nil {
			return err
		}
		if !c.Member(actorID) && actor.Kind != authz.KindOwner {
			return core.Errorf(ECodeUnauthorized, "You are not a participant of conversation %s", convID)
		}
		if c.State != ConversationActive {
			return core.Errorf(ECodeConversationEnded, "Conversation %s has ended already", convID)
		}
		if strings.TrimSpace(summary) != "" {
			if _, err := s.post(tx, fx, r, actor, convID, summary, ""); err != nil {
				return err
			}
			if c, err = tx.GetConversation(convID); err != nil {
				return err
			}
		}
		now := s.now().UTC()
		c.State, c.EndedAt, c.EndedBy, c.UpdatedAt = ConversationEnded, ptrTime(now), actorID, now
		if err := tx.UpdateConversation(c); err != nil {
			return err
		}
		fx.after(func() {
			s.events.Emit(EventConversationChanged, ConversationChanged{ProjectID: c.ProjectID, ConversationID: c.ID, State: c.State, Reason: "ended"})
		})
		return nil
	})
	return c, err
}

// ConversationMessages returns the last limit messages of conversation
// convID for actorID (a member; the owner reads every conversation) that
// were written before the message with seq before (0: the newest), in the
// order they were written, and how many the conversation has. It moves no
// read position: reading from a task session leaves the chat session's
// pending messages as they are.
func (s *Service) ConversationMessages(actorID, projectID, convID string, before int64, limit int) (Conversation, []Message, int, error) {
	if convID == "" {
		return Conversation{}, nil, 0, core.Errorf(core.EInvalid, "conversation_id is required")
	}
	c, err := s.st.GetConversation(convID)
	if err != nil {
		return Conversation{}, nil, 0, notFoundAs(err, errConversationNotFound(convID))
	}
	if actorID != authz.OwnerID {
		r, err := s.roster()
		if err != nil {
			return Conversation{}, nil, 0, err
		}
		actor, ok := r.byID[actorID]
		if !ok {
			return Conversation{}, nil, 0, errAgentNotFound(actorID)
		}
		if err := reachable(actor, c, projectID); err != nil {
			return Conversation{}, nil, 0, err
		}
	}
	if !c.Member(actorID) && actorID != authz.OwnerID {
		return Conversation{}, nil, 0, core.Errorf(ECodeUnauthorized, "You are not a participant of conversation %s", convID)
	}
	msgs, total, err := s.st.Messages(c.ID, before, limit)
	return c, msgs, total, err
}

// ClaimPendingMessages returns up to limit messages others wrote to
// actorID since it last read (in projectID's conversations, every project
// when empty), oldest first, and marks them read, in one transaction:
// each is returned once. It also says how many are left.
func (s *Service) ClaimPendingMessages(actorID, projectID string, limit int) ([]Message, int, error) {
	var msgs []Message
	var left int
	err := s.atomic(func(tx Store, fx *effects) error {
		var err error
		if msgs, err = tx.PendingMessages(actorID, projectID, limit); err != nil {
			return err
		}
		last := map[string]int64{}
		var convs []string
		for _, m := range msgs {
			if _, ok := last[m.ConversationID]; !ok {
				convs = append(convs, m.ConversationID)
			}
			last[m.ConversationID] = max(last[m.ConversationID], m.Seq)
		}
		for _, c := range convs {
			if err := tx.SetReadPosition(c, actorID, last[c]); err != nil {
				return err
			}
		}
		if len(convs) > 0 && s.mayHaveNotifications(actorID) {
			if err := markChatNotificationsRead(tx, actorID, convs, s.now().UTC()); err != nil {
				return err
			}
		}
		left, err = tx.CountPending(actorID, projectID)
		return err
	})
	if msgs == nil {
		msgs = []Message{}
	}
	return msgs, left, err
}

// CountPending counts the messages waiting for actorID.
func (s *Service) CountPending(actorID, projectID string) (int, error) {
	return s.st.CountPending(actorID, projectID)
}

// MarkRead moves viewerID's read position in conversation convID to its
// newest message; the owner, reading on the Chat screen, gets an observer
// place when it is not a member.
func (s *Service) MarkRead(viewerID, convID string) error {
	return s.atomic(func(tx Store, fx *effects) error {
		c, err := tx.GetConversation(convID)
		if err != nil {
			return notFoundAs(err, errConversationNotFound(convID))
		}
		if _, ok := c.participant(viewerID); !ok {
			if viewerID != authz.OwnerID {
				return core.Errorf(ECodeUnauthorized, "You are not a participant of conversation %s", convID)
			}
			if err := tx.AddParticipant(c.ID, Participant{AgentID: viewerID, Role: RoleObserver, JoinedAt: s.now().UTC()}); err != nil {
				return err
			}
		}
		last, err := tx.LastMessages([]string{c.ID})
		if err != nil {
			return err
		}
		if m, ok := last[c.ID]; ok {
			return tx.SetReadPosition(c.ID, viewerID, m.Seq)
		}
		return nil
	})
}

// Delegate hands a conversation with targetRef over to actorID's chat
// session (delegate_to_chat_session): it opens a conversation (or reuses
// the active one of the two) with message as actorID's first word, and
// tells the target's task session to look at the chat.
func (s *Service) Delegate(actorID, projectID, targetRef, topic, message, relatedTaskID string) (Conversation, Message, error) {
	if strings.TrimSpace(message) == "" {
		return Conversation{}, Message{}, core.Errorf(core.EInvalid, "message is required: say what the conversation is about")
	}
	r, err := s.roster()
	if err != nil {
		return Conversation{}, Message{}, err
	}
	if targetRef == "" {
		return Conversation{}, Message{}, core.Errorf(core.EInvalid, "target_agent_id is required")
	}
	target, err := r.find(targetRef)
	if err != nil {
		return Conversation{}, Message{}, err
	}
	c, m, err := s.StartConversation(actorID, projectID, []string{target.ID}, topic, message, relatedTaskID)
	if err != nil {
		return Conversation{}, Message{}, err
	}
	return c, *m, nil
}

// HasChatHistory reports whether senderID ever wrote in a conversation
// memberID is a member of, in projectID.
func (s *Service) HasChatHistory(senderID, memberID, projectID string) (bool, error) {
	return s.st.HasMessageFrom(senderID, memberID, projectID)
}
