package airlock_test

import (
	"testing"
)

// start_task_from_chat records which conversation the request came from
// (SPEC §6.3: "Every chat-driven change is recorded with requester and
// conversation"; seed 001 counts on that record to catch a false
// requester_id). The caller may name the conversation, and the bridge only
// checks that the caller is in it — not the requester. A worker can say its
// manager asked in a chat between two workers that the manager never saw,
// and the record carries no warning (the manager once wrote to it
// elsewhere). request_task refuses exactly this ("… is not a participant of
// conversation …, so it cannot have asked for the task there").
func TestRedTeamBridgeRecordsARequestInAConversationTheRequesterWasNeverIn(t *testing.T) {
	c := newCrew(t)
	mgrTask := c.session(t, "manager-dev", "task")
	task := c.createTask(t, mgrTask, "build login", c.id("worker-frontend-01"))
	mgr := c.session(t, "manager-dev", "chat")
	ok(t, mgr, "start_conversation", map[string]any{"participant_id": "worker-frontend-01", "initial_message": "lunch at noon?"})

	w1 := c.session(t, "worker-frontend-01", "chat")
	between := ok(t, w1, "start_conversation", map[string]any{"participant_id": "worker-frontend-02", "initial_message": "let's just start it"}).str("conversation_id")
	r := tool(t, w1, "start_task_from_chat", map[string]any{"task_id": task, "requester_id": "manager-dev", "conversation_id": between})
	if r.res.IsError {
		return // refused, as request_task refuses it
	}
	d, err := c.in.API.Board.Detail(task)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range d.ChatModifications {
		if m.ConversationID == between && m.RequesterID == c.id("manager-dev") && !m.Warning {
			t.Errorf("the audit says manager-dev asked in conversation %s (worker-frontend-01 ↔ worker-frontend-02), where it never was, with no warning: %+v", between, m)
		}
	}
}
