package teams_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/teams"
)

// Pending messages: each is returned once (also to concurrent readers),
// oldest first, never the reader's own; answering marks the conversation
// read.
func TestPendingMessagesOnce(t *testing.T) {
	w := newWorld(t)
	conv := w.conversation(t, "manager-dev", "worker-frontend-01", "m0")
	const n = 60
	for i := 1; i < n; i++ {
		if _, err := w.svc.PostMessage(w.id("manager-dev"), "", conv.ID, fmt.Sprintf("m%d", i), ""); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var got []string
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				msgs, _, err := w.svc.ClaimPendingMessages(w.id("worker-frontend-01"), w.project.ID, 7)
				if err != nil {
					t.Error(err)
					return
				}
				if len(msgs) == 0 {
					return
				}
				mu.Lock()
				for _, m := range msgs {
					got = append(got, m.Content)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("m%d", i))
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("messages claimed by concurrent readers (-want +got):\n%s", diff)
	}
	// The sender's own messages never wait for it.
	if left, _ := w.svc.CountPending(w.id("manager-dev"), w.project.ID); left != 0 {
		t.Errorf("the sender has %d pending messages of its own", left)
	}
	// An answer is pending for the other side, and the answerer's
	// position moves past it.
	if _, err := w.svc.PostMessage(w.id("worker-frontend-01"), "", conv.ID, "ok", ""); err != nil {
		t.Fatal(err)
	}
	msgs, _, _ := w.svc.ClaimPendingMessages(w.id("manager-dev"), w.project.ID, 100)
	if len(msgs) != 1 || msgs[0].Content != "ok" || msgs[0].SenderName != "worker-frontend-01" {
		t.Errorf("manager's pending after the answer: %+v", msgs)
	}
}

// Bad input to the chat: unknown ids, someone else's conversation, an
// ended conversation, oversized messages — the seed-style codes, nothing
// stored.
func TestChatBadInput(t *testing.T) {
	w := newWorld(t)
	conv := w.conversation(t, "manager-dev", "worker-frontend-01", "hello")
	count := func() int {
		_, _, n, err := w.svc.ConversationMessages(w.id("manager-dev"), "", conv.ID, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	cases := []struct {
		name string
		do   func() error
		code string
	}{
		{"unknown conversation", func() error {
			_, err := w.svc.PostMessage(w.id("worker-frontend-01"), "", "conv_nope", "x", "")
			return err
		}, teams.ECodeConversationNotFound},
		{"not a participant", func() error {
			_, err := w.svc.PostMessage(w.id("worker-frontend-02"), "", conv.ID, "x", "")
			return err
		}, teams.ECodeUnauthorized},
		{"oversized", func() error {
			_, err := w.svc.PostMessage(w.id("worker-frontend-01"), "", conv.ID, strings.Repeat("x", teams.MaxMessage+1), "")
			return err
		}, core.ETooLarge},
		{"empty", func() error {
			_, err := w.svc.PostMessage(w.id("worker-frontend-01"), "", conv.ID, " ", "")
			return err
		}, core.EInvalid},
		{"not UTF-8", func() error {
			_, err := w.svc.PostMessage(w.id("worker-frontend-01"), "", conv.ID, "\xff\xfe", "")
			return err
		}, core.EInvalid},
		{"bad in_reply_to", func() error {
			_, err := w.svc.PostMessage(w.id("worker-frontend-01"), "", conv.ID, "x", "'; DROP TABLE")
			return err
		}, core.EInvalid},
		{"send to an unknown agent", func() error {
			_, _, err := w.svc.SendMessage(w.id("worker-frontend-01"), w.project.ID, "ghost", "x", "")
			return err
		}, teams.ECodeAgentNotFound},
		{"send to an agent outside the project", func() error {
			_, _, err := w.svc.SendMessage(w.id("worker-frontend-01"), w.project.ID, "outsider", "x", "")
			// The agent is named as the caller named it, with its id.
			if want := "Agent 'outsider' (" + w.id("outsider") + ") is not assigned to project"; err != nil && !strings.Contains(err.Error(), want) {
				t.Errorf("%v, want it to say %q", err, want)
			}
			return err
		}, teams.ECodeNotAssigned},
		{"read someone else's conversation", func() error {
			_, _, _, err := w.svc.ConversationMessages(w.id("worker-qa-01"), "", conv.ID, 0, 10)
			return err
		}, teams.ECodeUnauthorized},
		{"notify with an unknown conversation", func() error {
			_, err := w.svc.NotifyTaskSession(w.id("worker-frontend-01"), w.project.ID, "conv_abc", "x", "", "")
			return err
		}, teams.ECodeConversationNotFound},
		{"notify with an unknown task", func() error {
			_, err := w.svc.NotifyTaskSession(w.id("worker-frontend-01"), w.project.ID, conv.ID, "x", "tsk_001", "")
			return err
		}, teams.ECodeTaskNotFound},
		{"notify with a bad priority", func() error {
			_, err := w.svc.NotifyTaskSession(w.id("worker-frontend-01"), w.project.ID, conv.ID, "x", "", "urgent")
			return err
		}, core.EInvalid},
		{"notify with an oversized message", func() error {
			_, err := w.svc.NotifyTaskSession(w.id("worker-frontend-01"), w.project.ID, conv.ID, strings.Repeat("é", teams.MaxMessage), "", "")
			return err
		}, core.ETooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.do(); core.ErrorCode(err) != c.code {
				t.Fatalf("code %q (%v), want %q", core.ErrorCode(err), err, c.code)
			}
			if count() != before {
				t.Errorf("a refused write stored a message")
			}
			if ns := w.unread(t, "worker-frontend-01"); slices.ContainsFunc(ns, func(n teams.Notification) bool { return n.Type == teams.NotifyChatSession }) {
				t.Errorf("a refused notify stored a notification")
			}
		})
	}
	if _, err := w.svc.EndConversation(w.id("worker-frontend-01"), "", conv.ID, "bye"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.PostMessage(w.id("manager-dev"), "", conv.ID, "wait", ""); core.ErrorCode(err) != teams.ECodeConversationEnded {
		t.Errorf("writing into an ended conversation: %v", err)
	}
	if _, err := w.svc.EndConversation(w.id("manager-dev"), "", conv.ID, ""); core.ErrorCode(err) != teams.ECodeConversationEnded {
		t.Errorf("ending it twice: %v", err)
	}
}

// The owner writes into any conversation (and joins it); the members'
// task sessions hear of it once until they read it. Reading in chat
// clears that call to the chat.
func TestOwnerWritesAnywhere(t *testing.T) {
	w := newWorld(t)
	conv := w.conversation(t, "manager-dev", "worker-frontend-01", "hi")
	w.svc.ClaimNotifications(w.id("worker-frontend-01"), "") // the invitation
	for _, text := range []string{"owner here", "and again"} {
		if _, err := w.svc.PostMessage(authz.OwnerID, "", conv.ID, text, ""); err != nil {
			t.Fatal(err)
		}
	}
	c, err := w.svc.Conversation(conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Member(authz.OwnerID) {
		t.Errorf("the owner did not join: %+v", c.Participants)
	}
	ns := w.unread(t, "worker-frontend-01")
	if len(ns) != 1 || ns[0].Action != teams.ActionCheckChat || ns[0].ConversationID != conv.ID {
		t.Fatalf("worker's notifications after two owner messages: %+v", ns)
	}
	msgs, _, _ := w.svc.ClaimPendingMessages(w.id("worker-frontend-01"), w.project.ID, 10)
	if len(msgs) != 3 {
		t.Errorf("pending = %+v", msgs)
	}
	if ns := w.unread(t, "worker-frontend-01"); len(ns) != 0 {
		t.Errorf("reading the chat left the call to the chat unread: %+v", ns)
	}
	// Starting a conversation with an agent, as the owner.
	c2, _, err := w.svc.StartConversation(authz.OwnerID, w.project.ID, []string{"worker-qa-01"}, "a question", "are you there?", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := w.svc.CountPending(w.id("worker-qa-01"), w.project.ID); got != 1 || c2.InitiatorID != authz.OwnerID {
		t.Errorf("the owner's new conversation: %d pending, %+v", got, c2)
	}
	// Unread counts for the owner's screen.
	if err := w.svc.MarkRead(authz.OwnerID, conv.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.PostMessage(w.id("worker-frontend-01"), "", conv.ID, "yes?", ""); err != nil {
		t.Fatal(err)
	}
	counts, _ := w.svc.UnreadCounts(authz.OwnerID, []string{conv.ID})
	if counts[conv.ID] != 1 {
		t.Errorf("owner's unread count = %v, want 1", counts)
	}
}

// Notifications are claimed once, also by concurrent claimers (two task
// sessions of the same agent calling at the same time).
func TestNotificationsClaimedOnce(t *testing.T) {
	w := newWorld(t)
	conv := w.conversation(t, "manager-dev", "worker-frontend-01", "hi")
	w.svc.ClaimNotifications(w.id("worker-frontend-01"), "")
	const n = 40
	var want []string
	for i := range n {
		prio := teams.PriorityNormal
		if i%5 == 0 {
			prio = teams.PriorityInterrupt
		}
		nt, err := w.svc.NotifyTaskSession(w.id("worker-frontend-01"), w.project.ID, conv.ID, fmt.Sprint(i), "", prio)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, nt.ID)
	}
	var mu sync.Mutex
	var got []string
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				ns, err := w.svc.ClaimNotifications(w.id("worker-frontend-01"), w.project.ID)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, x := range ns {
					got = append(got, x.ID)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("claimed notifications (-want +got):\n%s", diff)
	}
	if ns, _ := w.svc.ClaimNotifications(w.id("worker-frontend-01"), w.project.ID); len(ns) != 0 {
		t.Errorf("claimed again: %+v", ns)
	}
}

// Seed 001 Phase 1-1 and 4-1: notify_task_session makes a
// chat_session_notification for the caller itself (interrupt when high),
// with the conversation and a self-aware instruction.
func TestNotifyTaskSessionCreatesNotification(t *testing.T) {
	w := newWorld(t)
	conv := w.conversation(t, "manager-dev", "worker-frontend-01", "today, please")
	task := w.task(t, "manager-dev", "worker-frontend-01", "tsk", teams.StatusTodo)
	w.svc.ClaimNotifications(w.id("worker-frontend-01"), "")
	for _, c := range []struct{ priority, typ string }{{"", teams.NotifyChatSession}, {"high", teams.NotifyInterrupt}} {
		n, err := w.svc.NotifyTaskSession(w.id("worker-frontend-01"), w.project.ID, conv.ID, "確認してください", task.ID, c.priority)
		if err != nil {
			t.Fatal(err)
		}
		got := w.unread(t, "worker-frontend-01")
		if len(got) != 1 {
			t.Fatalf("priority %q: %d unread", c.priority, len(got))
		}
		g := got[0]
		want := teams.Notification{ID: n.ID, TargetAgentID: w.id("worker-frontend-01"), TargetProjectID: w.project.ID, Type: c.typ,
			Action: teams.ActionCheckChat, TaskID: task.ID, ConversationID: conv.ID, Message: "確認してください", SourceAgentID: w.id("worker-frontend-01")}
		g.Instruction, g.CreatedAt = "", n.CreatedAt.UTC()
		want.CreatedAt = n.CreatedAt.UTC()
		if diff := cmp.Diff(want, g); diff != "" {
			t.Errorf("priority %q (-want +got):\n%s", c.priority, diff)
		}
		if !strings.Contains(got[0].Instruction, "you sent it yourself") || !strings.Contains(got[0].Instruction, `get_conversation_messages(conversation_id: "`+conv.ID+`")`) {
			t.Errorf("instruction = %q", got[0].Instruction)
		}
		w.svc.ClaimNotifications(w.id("worker-frontend-01"), "")
	}
}

// An answer written past a message the writer has not read leaves that
// message pending, and says so (found by a new-user test: "use v2" came in
// just before "done with v1 as asked", was marked read, and never seen).
func TestAnswerPastAnUnreadMessageLeavesItPending(t *testing.T) {
	w := newWorld(t)
	conv := w.conversation(t, "manager-dev", "worker-frontend-01", "please do v1")
	wa := w.id("worker-frontend-01")
	if msgs, _, err := w.svc.ClaimPendingMessages(wa, w.project.ID, 10); err != nil || len(msgs) != 1 {
		t.Fatalf("pending = %d, %v; want the first message", len(msgs), err)
	}
	if _, err := w.svc.PostMessage(w.id("manager-dev"), "", conv.ID, "IMPORTANT: requirement changed, use v2", ""); err != nil {
		t.Fatal(err)
	}
	m, err := w.svc.PostMessage(wa, "", conv.ID, "Done with v1 as asked.", "")
	if err != nil {
		t.Fatal(err)
	}
	if m.Unread != 1 {
		t.Errorf("the answer's unread count = %d, want 1", m.Unread)
	}
	msgs, _, err := w.svc.ClaimPendingMessages(wa, w.project.ID, 10)
	if err != nil || len(msgs) != 1 || !strings.Contains(msgs[0].Content, "use v2") {
		t.Fatalf("pending after the answer = %+v, %v; want the message it had not read", msgs, err)
	}
	// Having read everything, an answer moves the read position past itself.
	m, _ = w.svc.PostMessage(wa, "", conv.ID, "Switching to v2.", "")
	if m.Unread != 0 {
		t.Errorf("unread after reading everything = %d, want 0", m.Unread)
	}
	if msgs, _, _ := w.svc.ClaimPendingMessages(wa, w.project.ID, 10); len(msgs) != 0 {
		t.Errorf("pending after an answer with nothing unread = %+v, want none", msgs)
	}
}

// One response carries at most MaxNotificationsPerResponse notifications
// and says how many wait; the rest come with the next calls (found by a
// new-user test: 300 assignments made one answer of 430 KB).
func TestNotificationsArePaged(t *testing.T) {
	w := newWorld(t)
	var in []teams.TaskInput
	for i := range teams.MaxNotificationsPerResponse + 5 {
		in = append(in, teams.TaskInput{Title: fmt.Sprintf("task %d", i), AssigneeID: "worker-frontend-01", Status: teams.StatusTodo})
	}
	if _, err := w.svc.CreateTasks(w.id("manager-dev"), w.project.ID, in); err != nil {
		t.Fatal(err)
	}
	req := &core.Request{Kind: core.KindToolCall, Server: "other", Exposed: "other__x",
		Caller: core.Caller{AgentID: w.id("worker-frontend-01"), Purpose: core.PurposeTask, ProjectID: w.project.ID}}
	respond := func() teams.NotificationBlock {
		out := w.svc.Responder().Respond(context.Background(), req, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}})
		var b teams.NotificationBlock
		if out != nil {
			raw, _ := json.Marshal(out.Meta[teams.MetaNotifications])
			json.Unmarshal(raw, &b)
		}
		return b
	}
	first := respond()
	if len(first.Notifications) != teams.MaxNotificationsPerResponse || !strings.Contains(first.Instruction, "5 more notification(s) wait") {
		t.Errorf("first response: %d notifications, instruction %q; want %d and 5 more waiting", len(first.Notifications), first.Instruction, teams.MaxNotificationsPerResponse)
	}
	second := respond()
	if len(second.Notifications) != 5 || second.Instruction != "" {
		t.Errorf("second response: %d notifications, instruction %q; want the other 5", len(second.Notifications), second.Instruction)
	}
	if third := respond(); len(third.Notifications) != 0 {
		t.Errorf("third response: %d notifications, want none", len(third.Notifications))
	}
}

// A long conversation reads back to its start a page at a time: before
// is the seq of the oldest message the reader has, and each page ends
// right before it.
func TestConversationMessagesPagesBack(t *testing.T) {
	w := newWorld(t)
	conv := w.conversation(t, "manager-dev", "worker-frontend-01", "message 1")
	for i := 2; i <= 7; i++ {
		if _, err := w.svc.PostMessage(w.id("manager-dev"), "", conv.ID, fmt.Sprintf("message %d", i), ""); err != nil {
			t.Fatal(err)
		}
	}
	_, all, _, err := w.svc.ConversationMessages(authz.OwnerID, "", conv.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	seq := func(n int) int64 { return all[n-1].Seq } // the seq of "message n"
	cases := []struct {
		name   string
		before int64
		limit  int
		want   []string
	}{
		{"the newest", 0, 3, []string{"message 5", "message 6", "message 7"}},
		{"the page before it", seq(5), 3, []string{"message 2", "message 3", "message 4"}},
		{"the start, fewer than a page", seq(2), 3, []string{"message 1"}},
		{"nothing before the first", seq(1), 3, nil},
		{"every earlier one without a limit", seq(4), 0, []string{"message 1", "message 2", "message 3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, msgs, total, err := w.svc.ConversationMessages(authz.OwnerID, "", conv.ID, tc.before, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range msgs {
				got = append(got, m.Content)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("messages before seq %d (-want +got):\n%s", tc.before, diff)
			}
			if total != 7 {
				t.Errorf("total = %d, want every message of the conversation, 7", total)
			}
		})
	}
}
