package teams

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
)

// Notification priorities of notify_task_session.
const (
	PriorityNormal = "normal"
	// PriorityInterrupt ("high") makes the notification an interrupt: it
	// replaces the task session's next tool response.
	PriorityInterrupt = "high"
)

// FromSelfChatSession is the "from" of a notification an agent's chat
// session sent to its own task session (seed 001).
const FromSelfChatSession = "self_chat_session"

// NotifyTaskSession is notify_task_session: from its chat session,
// callerID asks its own task session to read conversation convID (a
// conversation it is a member of). priority "high" makes it an interrupt.
func (s *Service) NotifyTaskSession(callerID, sessionProject, convID, message, relatedTaskID, priority string) (Notification, error) {
	if priority == "" {
		priority = PriorityNormal
	}
	if priority != PriorityNormal && priority != PriorityInterrupt {
		return Notification{}, core.Errorf(core.EInvalid, "Invalid priority: %s. Valid values: normal, high", priority)
	}
	if err := checkText("message", message, MaxMessage, false); err != nil {
		return Notification{}, err
	}
	r, err := s.roster()
	if err != nil {
		return Notification{}, err
	}
	projectID, err := s.project(r, callerID, sessionProject)
	if err != nil {
		return Notification{}, err
	}
	n := Notification{ID: newID("ntf_"), TargetAgentID: callerID, TargetProjectID: projectID, Type: NotifyChatSession,
		Action: ActionCheckChat, Message: message, SourceAgentID: callerID, CreatedAt: s.now().UTC()}
	if priority == PriorityInterrupt {
		n.Type = NotifyInterrupt
	}
	err = s.atomic(func(tx Store, fx *effects) error {
		c, err := memberConversation(tx, convID, callerID)
		if err != nil {
			return err
		}
		if c.ProjectID != projectID {
			return errConversationNotFound(convID)
		}
		n.ConversationID = c.ID
		if relatedTaskID != "" {
			t, err := getTask(tx, relatedTaskID, projectID)
			if err != nil {
				return err
			}
			n.TaskID = t.ID
		}
		n.Instruction = selfInstruction(c.ID)
		return fx.notify(tx, n)
	})
	if err != nil {
		return Notification{}, err
	}
	return n, nil
}

// selfInstruction is the instruction of seed 001's chat-session
// notification: it says plainly that the agent sent it to itself.
func selfInstruction(convID string) string {
	return fmt.Sprintf("This notification comes from your own chat session. IMPORTANT: you sent it yourself, from another session "+
		"(your chat session) of the same agent; it is not from anyone else. Read the conversation: call "+
		"get_conversation_messages(conversation_id: %q), then act on it.", convID)
}

// ClaimNotifications returns agentID's unread notifications for projectID
// (and for any project), at most MaxNotificationsPerResponse, and marks
// them read, in one transaction: each notification is claimed once, by
// whichever call comes first.
func (s *Service) ClaimNotifications(agentID, projectID string) ([]Notification, error) {
	ns, _, err := s.claimNotifications(agentID, projectID)
	return ns, err
}

// MaxNotificationsPerResponse is how many notifications one response
// carries at most; the rest stay unread for the next (found by a new-user
// test: 300 task assignments made one answer of 430 KB, enough to fill an
// agent's context).
const MaxNotificationsPerResponse = 20

// claimNotifications is ClaimNotifications, with how many unread
// notifications for projectID are left for later calls. Interrupts and
// calls to the chat are claimed first, then the oldest.
func (s *Service) claimNotifications(agentID, projectID string) ([]Notification, int, error) {
	gen := s.hintGen(agentID)
	var out []Notification
	left, here := 0, 0
	err := s.st.Atomic(func(tx Store) error {
		unread, err := tx.UnreadNotifications(agentID, projectID)
		if err != nil {
			return err
		}
		if len(unread) > MaxNotificationsPerResponse {
			slices.SortStableFunc(unread, func(a, b Notification) int {
				return cmp.Compare(notificationRank(a), notificationRank(b))
			})
			unread = unread[:MaxNotificationsPerResponse]
		}
		if len(unread) > 0 {
			ids := make([]string, len(unread))
			for i, n := range unread {
				ids[i] = n.ID
			}
			at := s.now().UTC()
			if _, err := tx.MarkNotificationsRead(ids, at); err != nil {
				return err
			}
			for i := range unread {
				unread[i].ReadAt = &at
			}
			out = unread
		}
		all, err := tx.UnreadNotifications(agentID, "")
		left = len(all)
		for _, n := range all {
			if projectID == "" || n.TargetProjectID == "" || n.TargetProjectID == projectID {
				here++
			}
		}
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	if left == 0 {
		s.unhintIf(agentID, gen)
	}
	return out, here, nil
}

// notificationRank orders notifications for a capped claim: an interrupt,
// then a call to the chat, then the rest.
func notificationRank(n Notification) int {
	switch n.Type {
	case NotifyInterrupt:
		return 0
	case NotifyChatSession:
		return 1
	}
	return 2
}

// hint state: a generation per agent, so that a claim that found nothing
// left never clears a hint set by a notification made meanwhile.
func (s *Service) hintGen(agentID string) uint64 {
	s.hintMu.Lock()
	defer s.hintMu.Unlock()
	return s.hinted[agentID]
}

func (s *Service) unhintIf(agentID string, gen uint64) {
	s.hintMu.Lock()
	if s.hinted[agentID] == gen {
		delete(s.hinted, agentID)
	}
	s.hintMu.Unlock()
}

// Delivered is a notification as a task session receives it: the fields of
// seed 001's _chat_notification, and the notification's id and type.
type Delivered struct {
	NotificationID string `json:"notification_id"`
	Type           string `json:"type"`
	Action         string `json:"action,omitempty"`
	ConversationID string `json:"conversation_id,omitempty"`
	Message        string `json:"message"`
	Instruction    string `json:"instruction"`
	// From is "self_chat_session" for what the agent's own chat session
	// sent; otherwise the id of the agent whose action caused it.
	From          string    `json:"from"`
	RelatedTaskID string    `json:"related_task_id,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
}

func deliver(n Notification) Delivered {
	from := n.SourceAgentID
	if n.SourceAgentID == n.TargetAgentID && (n.Type == NotifyChatSession || n.Type == NotifyInterrupt) {
		from = FromSelfChatSession
	}
	return Delivered{NotificationID: n.ID, Type: n.Type, Action: n.Action, ConversationID: n.ConversationID, Message: n.Message,
		Instruction: n.Instruction, From: from, RelatedTaskID: n.TaskID, CreatedAt: n.CreatedAt}
}

// NotificationBlock is what a task session's tool response carries.
//
// Where it goes in an MCP CallToolResult (the seed puts _chat_notification
// beside the content, where MCP has no room):
//   - as an extra text content block holding this object as JSON, so
//     that a model reads it (many clients show models the text only);
//   - in _meta under MetaNotifications, the same object, for programs
//     (an MCP _meta key must start with a letter: "_chat_notification"
//     cannot be one);
//   - for Airlock's own tools, also merged into structuredContent, whose
//     shape Airlock controls, so result["_chat_notification"] reads as
//     the seed writes it. Downstream tools' structured content is left
//     alone: it must keep matching their output schemas.
//
// An interrupt replaces the response: the content is this object alone,
// with Interrupted set and the name of the call whose answer it withholds.
type NotificationBlock struct {
	// ChatNotification is the first chat-session notification or
	// interrupt (seed 001's _chat_notification).
	ChatNotification *Delivered `json:"_chat_notification,omitempty"`
	// Notifications are the others claimed with it (task assignments,
	// status changes, dependencies resolved, chat invitations).
	Notifications []Delivered `json:"_notifications,omitempty"`
	Interrupted   bool        `json:"interrupted,omitempty"`
	// InterruptedTool is the tool whose answer an interrupt withholds;
	// CallStatus says whether that call completed or failed.
	InterruptedTool string `json:"interrupted_tool,omitempty"`
	CallStatus      string `json:"call_status,omitempty"`
	Instruction     string `json:"instruction,omitempty"`
}

// MetaNotifications is the _meta key of the NotificationBlock.
const MetaNotifications = "airlock.dev/notifications"

// block arranges claimed notifications for a response.
func block(ns []Notification) NotificationBlock {
	var b NotificationBlock
	for _, n := range ns {
		d := deliver(n)
		if b.ChatNotification == nil && (n.Type == NotifyChatSession || n.Type == NotifyInterrupt) {
			b.ChatNotification = &d
			continue
		}
		b.Notifications = append(b.Notifications, d)
	}
	for _, n := range ns {
		if n.Type == NotifyInterrupt {
			b.Interrupted = true
			if b.ChatNotification.Type != NotifyInterrupt {
				// The interrupt goes first: it is what the agent must
				// act on.
				d := deliver(n)
				b.Notifications = append([]Delivered{*b.ChatNotification}, without(b.Notifications, n.ID)...)
				b.ChatNotification = &d
			}
			break
		}
	}
	return b
}

func without(ds []Delivered, id string) []Delivered {
	var out []Delivered
	for _, d := range ds {
		if d.NotificationID != id {
			out = append(out, d)
		}
	}
	return out
}

// Responder returns the pipeline's respond stage for notifications: on
// every tool response to an agent's task session it claims that agent's
// unread notifications and attaches them (see NotificationBlock); an
// interrupt replaces the response. Nothing is delivered to chat sessions,
// to unidentified callers, or with the refusal of a suspended agent.
func (s *Service) Responder() pipeline.Responder { return responder{s: s} }

type responder struct{ s *Service }

var _ pipeline.Responder = responder{}

func (rp responder) Respond(_ context.Context, r *core.Request, res *mcp.CallToolResult) *mcp.CallToolResult {
	c := r.Caller
	if c.AgentID == "" || c.Purpose != core.PurposeTask || res == nil || !rp.s.mayHaveNotifications(c.AgentID) {
		return nil
	}
	// A server's result comes as it was sent (see catalog): read it before
	// anything is claimed for it. One that cannot be read goes as it came,
	// and the notifications wait for the next call.
	if err := res.DecodeVerbatim(); err != nil {
		rp.s.log.Warn("a tool result could not be read to add notifications; they wait for the next call", "agent", c.AgentID, "err", err)
		return nil
	}
	if res.IsError && refusedAccount(res) {
		return nil
	}
	ns, left, err := rp.s.claimNotifications(c.AgentID, c.ProjectID)
	if err != nil {
		rp.s.log.Error("claim notifications; they stay for the next call", "agent", c.AgentID, "err", err)
		return nil
	}
	if len(ns) == 0 {
		return nil
	}
	b := block(ns)
	if left > 0 {
		b.Instruction = fmt.Sprintf("%d more notification(s) wait; they come with your next calls (get_my_tasks lists your tasks).", left)
	}
	own := r.Server == authz.Server
	if b.Interrupted {
		b.InterruptedTool = r.Exposed
		b.CallStatus = "completed"
		if res.IsError {
			b.CallStatus = "failed"
		}
		b.Instruction = fmt.Sprintf("INTERRUPT: act on _chat_notification before anything else. Your call to %s was carried out (%s); "+
			"its answer is withheld by this interrupt.", r.Exposed, b.CallStatus)
		schema := r.Tool != nil && len(r.Tool.OutputSchema) > 0
		if schema {
			b.Instruction += " This answer is marked as an error only because the tool's answers have a fixed shape; call_status says how the call went."
		}
		text := mustJSON(b)
		out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, Meta: mcp.Meta{MetaNotifications: json.RawMessage(text)}}
		switch {
		case schema:
			// A tool with an output schema must answer with structured
			// content matching it, or with an error: clients that check
			// (the TypeScript SDK's, Claude Code's) throw at anything
			// else, and the interrupt, read as it is sent, would be lost
			// (found by a seed audit). The block is no answer of that
			// shape, so the interrupt comes as an error result, whose
			// content every client hands to the model; call_status says
			// the call itself was carried out.
			out.IsError = true
		case own:
			out.StructuredContent = json.RawMessage(text)
		}
		return out
	}
	text := mustJSON(b)
	out := *res
	out.Content = append(append([]mcp.Content{}, res.Content...), &mcp.TextContent{Text: text})
	out.Meta = mcp.Meta{}
	for k, v := range res.Meta {
		out.Meta[k] = v
	}
	out.Meta[MetaNotifications] = json.RawMessage(text)
	if own {
		out.StructuredContent = mergeObject(res.StructuredContent, b)
	}
	return &out
}

// refusedAccount reports whether res is the refusal of an agent that may
// do nothing (suspended, disabled): it gets no notifications either.
func refusedAccount(res *mcp.CallToolResult) bool {
	var e struct {
		Code string `json:"code"`
	}
	raw, err := json.Marshal(res.Meta["airlock/error"])
	if err != nil || json.Unmarshal(raw, &e) != nil {
		return false
	}
	return e.Code == authz.ReasonSuspended || e.Code == core.EUnauthorized
}

// mergeObject adds the block's keys to a JSON object; anything that is not
// an object is left as it is.
func mergeObject(structured any, b NotificationBlock) any {
	raw, err := json.Marshal(structured)
	if err != nil {
		return structured
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return structured
	}
	if b.ChatNotification != nil {
		obj["_chat_notification"] = json.RawMessage(mustJSON(b.ChatNotification))
	}
	if len(b.Notifications) > 0 {
		obj["_notifications"] = json.RawMessage(mustJSON(b.Notifications))
	}
	return obj
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs reach here
	}
	return string(b)
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
