package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/teams"
)

var (
	projectsCmd dbCommand = RunProjects
	tasksCmd    dbCommand = RunTasks
	chatCmd     dbCommand = RunChat
)

func decodeJSON[T any](t *testing.T, out string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	return v
}

// The CLI lists, creates, moves and reads what the Board and Chat screens
// show, as the owner, and a running Airlock's service sees the same.
func TestTasksAndChatCLI(t *testing.T) {
	db := rulesDB(t)
	mustRun(t, projectsCmd, db, "add", "apollo", "--description", "the moon")
	mustRun(t, agentsCmd, db, "add", "mgr", "--kind", "manager", "--project", "apollo")
	mustRun(t, agentsCmd, db, "add", "w1", "--parent", "mgr", "--project", "apollo")

	api := decodeJSON[teams.TaskCard](t, mustRun(t, tasksCmd, db, "add", "Orders API", "--project", "apollo", "--assignee", "w1", "--status", "todo", "--priority", "high", "--json"))
	page := decodeJSON[teams.TaskCard](t, mustRun(t, tasksCmd, db, "add", "Orders page", "--project", "apollo", "--depends-on", api.ID, "--json"))
	if api.AssigneeName != "w1" || api.CreatorName != "owner" || api.Priority != teams.PriorityHigh || page.OpenBlockers != 1 {
		t.Fatalf("added cards: %+v %+v", api, page)
	}
	list := decodeJSON[[]teams.TaskCard](t, mustRun(t, tasksCmd, db, "list", "--project", "apollo", "--json"))
	svc, _, err := teamServices(db) // what a running Airlock's service reads
	if err != nil {
		t.Fatal(err)
	}
	p, _ := svc.Project("apollo")
	cards, err := svc.Cards(p.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(roundTrip(t, cards), list); diff != "" {
		t.Errorf("tasks list --json vs the board's cards (-board +cli):\n%s", diff)
	}
	if got := decodeJSON[[]teams.TaskCard](t, mustRun(t, tasksCmd, db, "list", "--project", "apollo", "--assignee", "w1", "--json")); len(got) != 1 || got[0].ID != api.ID {
		t.Errorf("list --assignee w1 = %+v", got)
	}

	moved := decodeJSON[teams.TaskCard](t, mustRun(t, tasksCmd, db, "move", api.ID, "in_progress", "--json"))
	if moved.Status != teams.StatusInProgress || moved.StatusChangedByName != "owner" {
		t.Errorf("moved = %+v", moved)
	}
	if _, err := runCmd(t, tasksCmd, db, "move", page.ID, "in_progress"); core.ErrorCode(err) != teams.ECodeTaskBlocked {
		t.Errorf("moving a task with an open blocker: %v", err)
	}
	if _, err := runCmd(t, tasksCmd, db, "move", api.ID, "backlog", "--json"); core.ErrorCode(err) != teams.ECodeInvalidTransition {
		t.Errorf("in_progress → backlog: %v", err)
	}
	if _, err := runCmd(t, tasksCmd, db, "move", "tsk_nope", "todo"); core.ErrorCode(err) != teams.ECodeTaskNotFound {
		t.Errorf("an unknown task: %v", err)
	}
	mustRun(t, tasksCmd, db, "move", api.ID, "done")
	assigned := decodeJSON[teams.TaskCard](t, mustRun(t, tasksCmd, db, "assign", page.ID, "w1", "--json"))
	if assigned.AssigneeName != "w1" || assigned.OpenBlockers != 0 {
		t.Errorf("assigned = %+v", assigned)
	}
	mgrID := mustAgent(t, db, "mgr")
	w1ID := mustAgent(t, db, "w1")
	ns, _ := store.NewTeams(db).UnreadNotifications(w1ID, "")
	if len(ns) == 0 {
		t.Error("the agent was not told of the owner's changes")
	}
	detail := decodeJSON[taskDetailOut](t, mustRun(t, tasksCmd, db, "show", api.ID, "--json"))
	var steps []string
	for _, h := range detail.History {
		steps = append(steps, h.Kind+":"+h.ToStatus+":"+h.AgentName)
	}
	if diff := cmp.Diff([]string{"created:todo:owner", "status:in_progress:owner", "status:done:owner"}, steps); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if out := mustRun(t, tasksCmd, db, "show", api.ID); !strings.Contains(out, "in_progress → done") {
		t.Errorf("tasks show:\n%s", out)
	}

	if _, err := runCmd(t, chatCmd, db, "start", " ", "--project", "apollo", "--with", "w1"); core.ErrorCode(err) != core.EInvalid || !strings.Contains(err.Error(), "the MESSAGE is empty") {
		t.Errorf("chat start with an empty message = %v, want it refused", err)
	}
	conv := decodeJSON[teams.ConversationSummary](t, mustRun(t, chatCmd, db, "start", "Please review the page.", "--project", "apollo", "--with", "w1", "--with", "mgr", "--topic", "review", "--json"))
	if len(conv.Participants) != 3 || conv.LastMessage == nil || conv.LastMessage.SenderName != "owner" {
		t.Fatalf("started = %+v", conv)
	}
	mustRun(t, chatCmd, db, "send", conv.ID, "Today, please.")
	if _, err := svc.PostMessage(w1ID, "", conv.ID, "On it.", ""); err != nil {
		t.Fatal(err)
	}
	convs := decodeJSON[[]teams.ConversationSummary](t, mustRun(t, chatCmd, db, "list", "--project", "apollo", "--json"))
	if len(convs) != 1 || convs[0].Unread != 1 || convs[0].LastMessage.Content != "On it." {
		t.Errorf("chat list = %+v", convs)
	}
	shown := decodeJSON[messagesOut](t, mustRun(t, chatCmd, db, "show", conv.ID, "--json"))
	var said []string
	for _, m := range shown.Messages {
		said = append(said, m.SenderName+": "+m.Content)
	}
	if diff := cmp.Diff([]string{"owner: Please review the page.", "owner: Today, please.", "w1: On it."}, said); diff != "" || shown.Total != 3 {
		t.Errorf("chat show (-want +got):\n%s", diff)
	}
	pending, _ := svc.CountPending(mgrID, p.ID)
	if pending != 3 {
		t.Errorf("the manager has %d messages waiting, want 3", pending)
	}
	mustRun(t, chatCmd, db, "end", conv.ID)
	if _, err := runCmd(t, chatCmd, db, "send", conv.ID, "late"); core.ErrorCode(err) != teams.ECodeConversationEnded {
		t.Errorf("sending into an ended conversation: %v", err)
	}
	projects := decodeJSON[[]teams.ProjectSummary](t, mustRun(t, projectsCmd, db, "list", "--json"))
	if len(projects) != 1 || projects[0].Counts[teams.StatusDone] != 1 || projects[0].Counts[teams.StatusBacklog] != 1 || len(projects[0].Agents) != 2 {
		t.Errorf("projects list = %+v", projects)
	}
	for _, bad := range [][]string{{"list"}, {"add", "x"}, {"move", "one"}, {"frobnicate"}} {
		if _, err := runCmd(t, tasksCmd, db, bad...); core.ErrorCode(err) != core.EInvalid {
			t.Errorf("tasks %v: %v, want a usage error", bad, err)
		}
	}
}

func mustAgent(t *testing.T, db *store.DB, name string) string {
	t.Helper()
	svc, err := authz.New(store.NewAgents(db), authz.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := svc.Agent(name)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// roundTrip is v as it reads back from JSON (times lose their monotonic
// part, nil slices stay nil).
func roundTrip[T any](t *testing.T, v T) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return decodeJSON[T](t, string(b))
}

// TestAgentsRemoveListsUnassignedTasks: deleting an agent leaves its tasks
// on the board without an assignee, and says which open ones that was.
func TestAgentsRemoveListsUnassignedTasks(t *testing.T) {
	db := rulesDB(t)
	mustRun(t, projectsCmd, db, "add", "apollo")
	mustRun(t, agentsCmd, db, "add", "w1", "--project", "apollo")
	open := decodeJSON[teams.TaskCard](t, mustRun(t, tasksCmd, db, "add", "Orders API", "--project", "apollo", "--assignee", "w1", "--status", "todo", "--json"))
	done := decodeJSON[teams.TaskCard](t, mustRun(t, tasksCmd, db, "add", "Old one", "--project", "apollo", "--assignee", "w1", "--status", "todo", "--json"))
	mustRun(t, tasksCmd, db, "move", done.ID, "in_progress")
	mustRun(t, tasksCmd, db, "move", done.ID, "done")

	out := mustRun(t, agentsCmd, db, "rm", "w1")
	if !strings.Contains(out, "1 open task(s) it was assigned are unassigned now") || !strings.Contains(out, open.ID) ||
		!strings.Contains(out, "Orders API") || strings.Contains(out, done.ID) {
		t.Errorf("rm printed:\n%s", out)
	}
	list := decodeJSON[[]teams.TaskCard](t, mustRun(t, tasksCmd, db, "list", "--project", "apollo", "--json"))
	for _, c := range list {
		if c.AssigneeID != "" {
			t.Errorf("task %s still assigned to %s", c.ID, c.AssigneeID)
		}
	}
	mustRun(t, agentsCmd, db, "add", "w2")
	if out := mustRun(t, agentsCmd, db, "rm", "w2"); strings.Contains(out, "task") {
		t.Errorf("rm of an agent without tasks printed:\n%s", out)
	}
}

// TestAgentsUpdateProjectsReleasesTasks: taking an agent off a project with
// `agents update --project` unassigns the open tasks it held there, and
// says which (found by a new-user test: they stayed with an agent that
// could no longer see them).
func TestAgentsUpdateProjectsReleasesTasks(t *testing.T) {
	db := rulesDB(t)
	mustRun(t, projectsCmd, db, "add", "apollo")
	mustRun(t, projectsCmd, db, "add", "gemini")
	mustRun(t, agentsCmd, db, "add", "w1", "--project", "apollo", "--project", "gemini")
	started := decodeJSON[teams.TaskCard](t, mustRun(t, tasksCmd, db, "add", "Orders API", "--project", "apollo", "--assignee", "w1", "--status", "todo", "--json"))
	mustRun(t, tasksCmd, db, "move", started.ID, "in_progress")
	stays := decodeJSON[teams.TaskCard](t, mustRun(t, tasksCmd, db, "add", "Launch", "--project", "gemini", "--assignee", "w1", "--status", "todo", "--json"))

	out := mustRun(t, agentsCmd, db, "update", "w1", "--project", "gemini")
	if !strings.Contains(out, "1 open task(s) it held in projects it left are unassigned now") || !strings.Contains(out, started.ID) ||
		!strings.Contains(out, "in_progress → todo") || strings.Contains(out, stays.ID) {
		t.Errorf("update printed:\n%s", out)
	}
	for _, c := range decodeJSON[[]teams.TaskCard](t, mustRun(t, tasksCmd, db, "list", "--project", "apollo", "--json")) {
		if c.AssigneeID != "" || c.Status != teams.StatusTodo {
			t.Errorf("task %s is %s, assigned to %q; want todo, unassigned", c.ID, c.Status, c.AssigneeID)
		}
	}
	for _, c := range decodeJSON[[]teams.TaskCard](t, mustRun(t, tasksCmd, db, "list", "--project", "gemini", "--json")) {
		if c.AssigneeName != "w1" {
			t.Errorf("task %s of the project w1 stays in is assigned to %q", c.ID, c.AssigneeName)
		}
	}
}
