package airlock_test

import (
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/authz"
)

// An agent taken off a project keeps no part in that project's chat: it
// may not read what is written there afterwards (get_conversation_messages
// from a session of its other project, get_pending_messages from a session
// that names no project), nor write or end a conversation there
// (respond_chat, end_conversation). Tasks already work this way ("a task
// of a project the caller is not in (any more) does not exist for it");
// the conversation tools check only that the agent is a participant, and
// nothing takes it out of the project's conversations when it leaves.
func TestRedTeamAgentTakenOffAProjectStillReadsAndWritesItsChat(t *testing.T) {
	c := newCrew(t)
	if _, err := c.in.API.Agents.CreateProject("proj-002", "the worker's next project"); err != nil {
		t.Fatal(err)
	}
	worker := c.id("worker-frontend-01")
	mgr := c.session(t, "manager-dev", "chat")
	conv := ok(t, mgr, "start_conversation", map[string]any{"participant_id": worker, "initial_message": "welcome to the team"}).str("conversation_id")

	// The person moves the worker to another project.
	projects := []string{"proj-002"}
	if _, err := c.in.API.Agents.Update(worker, authz.AgentUpdate{Projects: &projects}); err != nil {
		t.Fatal(err)
	}
	const secret = "proj-001 only: the launch date is March 3"
	ok(t, mgr, "respond_chat", map[string]any{"conversation_id": conv, "content": secret})

	token := c.agents["worker-frontend-01"].Token
	task := c.connect(t, token, "?purpose=task&project=proj-002", nil)
	if r := tool(t, task, "get_conversation_messages", map[string]any{"conversation_id": conv}); !r.res.IsError || strings.Contains(textOf(r.res), secret) {
		t.Errorf("get_conversation_messages on proj-001's conversation by an agent now only in proj-002 = %s; want a refusal", textOf(r.res))
	}
	chat := c.connect(t, token, "?purpose=chat", nil) // its only project now: proj-002
	if r := tool(t, chat, "get_pending_messages", nil); strings.Contains(textOf(r.res), secret) {
		t.Errorf("get_pending_messages of an agent now only in proj-002 hands it proj-001's message: %s", textOf(r.res))
	}
	chat2 := c.connect(t, token, "?purpose=chat&project=proj-002", nil)
	if r := tool(t, chat2, "respond_chat", map[string]any{"conversation_id": conv, "content": "still listening"}); !r.res.IsError {
		t.Errorf("respond_chat into proj-001's conversation by an agent now only in proj-002 = %s; want a refusal", textOf(r.res))
	}
	if r := tool(t, chat2, "end_conversation", map[string]any{"conversation_id": conv}); !r.res.IsError {
		t.Errorf("end_conversation of proj-001's conversation by an agent now only in proj-002 = %s; want a refusal", textOf(r.res))
	}
}
