package airlock_test

import (
	"testing"
)

// A session that names a project works in that project: a task of another
// project is not found from it (TestTasksOfAnotherProjectAreNotFound), and
// send_message, request_task, notify_task_session and the chat → task bridge
// answer conversation_not_found for a conversation of another project. Three
// conversation tools skip that check: from a session of proj-001, an agent
// in both projects reads (get_conversation_messages), writes into
// (respond_chat) and ends (end_conversation) a proj-002 conversation, so a
// session's project does not confine it, and what it did is recorded under
// a session of the wrong project.
func TestRedTeamProjectSessionReachesAnotherProjectsConversation(t *testing.T) {
	c := newCrew(t)
	if _, err := c.in.API.Agents.CreateProject("proj-002", "a second project"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"manager-dev", "worker-frontend-01"} {
		if _, err := c.in.API.Agents.Assign(c.id(name), "proj-002"); err != nil {
			t.Fatal(err)
		}
	}
	mgr := c.connect(t, c.agents["manager-dev"].Token, "?purpose=chat&project=proj-002", nil)
	conv := ok(t, mgr, "start_conversation", map[string]any{"participant_id": "worker-frontend-01", "initial_message": "proj-002 business"}).str("conversation_id")

	token := c.agents["worker-frontend-01"].Token
	chat := c.connect(t, token, "?purpose=chat&project="+crewProject, nil)
	// The check the other tools make, for comparison.
	refused(t, chat, "notify_task_session", map[string]any{"conversation_id": conv}, "conversation_not_found")

	task := c.connect(t, token, "?purpose=task&project="+crewProject, nil)
	if r := tool(t, task, "get_conversation_messages", map[string]any{"conversation_id": conv}); !r.res.IsError {
		t.Errorf("get_conversation_messages from a proj-001 session on a proj-002 conversation = %s; want conversation_not_found", textOf(r.res))
	}
	if r := tool(t, chat, "respond_chat", map[string]any{"conversation_id": conv, "content": "written from proj-001"}); !r.res.IsError {
		t.Errorf("respond_chat from a proj-001 session into a proj-002 conversation = %s; want conversation_not_found", textOf(r.res))
	}
	if r := tool(t, chat, "end_conversation", map[string]any{"conversation_id": conv}); !r.res.IsError {
		t.Errorf("end_conversation from a proj-001 session on a proj-002 conversation = %s; want conversation_not_found", textOf(r.res))
	}
}
