package teams_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/teams"
)

// Seed 001's hierarchy table: who may ask worker-frontend-01 (and
// manager-dev) to start a task from chat. Only a strict ancestor; a
// refusal changes nothing and records nothing.
func TestAncestorTable(t *testing.T) {
	cases := []struct {
		name      string
		caller    string
		requester string
		code      string
	}{
		{"owner asks a worker", "worker-frontend-01", "owner", ""},
		{"the worker's manager", "worker-frontend-01", "manager-dev", ""},
		{"the manager by id", "worker-frontend-01", "id:manager-dev", ""},
		{"owner asks a manager", "manager-dev", "owner", ""},
		{"sibling", "worker-frontend-01", "worker-frontend-02", teams.ECodeUnauthorized},
		{"another branch (worker)", "worker-frontend-01", "worker-qa-01", teams.ECodeUnauthorized},
		{"another branch (manager)", "worker-frontend-01", "qa-lead", teams.ECodeUnauthorized},
		{"self", "worker-frontend-01", "worker-frontend-01", teams.ECodeUnauthorized},
		{"manager names itself", "manager-dev", "manager-dev", teams.ECodeUnauthorized},
		{"a descendant", "manager-dev", "worker-frontend-01", teams.ECodeUnauthorized},
		{"no such agent", "worker-frontend-01", "manager-ghost", teams.ECodeAgentNotFound},
		{"not in the project", "worker-frontend-01", "outsider", teams.ECodeNotAssigned},
	}
	w := newWorld(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			task := w.task(t, "owner", c.caller, "start "+c.name, teams.StatusTodo)
			req := c.requester
			if id, ok := strings.CutPrefix(req, "id:"); ok {
				req = w.id(id)
			}
			res, err := w.svc.StartTaskFromChat(w.id(c.caller), w.project.ID, task.ID, req, "")
			if got := core.ErrorCode(err); got != c.code {
				t.Fatalf("requester %s for %s: code %q (%v), want %q", c.requester, c.caller, got, err, c.code)
			}
			d, _ := w.svc.Detail(task.ID)
			if c.code != "" {
				if d.Task.Status != teams.StatusTodo || len(d.ChatModifications) != 0 {
					t.Errorf("a refused request changed the task: %s, %d modifications", d.Task.Status, len(d.ChatModifications))
				}
				// Seed 001's words, both agents named the same way (by
				// name), however the requester was given.
				if want := fmt.Sprintf("依頼者 '%s' は '%s' の上位者ではありません。", strings.TrimPrefix(c.requester, "id:"), c.caller); c.code == teams.ECodeUnauthorized && !strings.Contains(err.Error(), want) {
					t.Errorf("refusal %q lacks the seed's words %q", err, want)
				}
				return
			}
			if res.PreviousStatus != teams.StatusTodo || res.Task.Status != teams.StatusInProgress || res.Task.StatusChangedByAgentID != w.id(c.caller) {
				t.Errorf("result = %+v", res)
			}
			if len(d.ChatModifications) != 1 || d.ChatModifications[0].RequesterID != w.id(strings.TrimPrefix(c.requester, "id:")) ||
				d.ChatModifications[0].ExecutorID != w.id(c.caller) || d.ChatModifications[0].Operation != teams.OperationStart {
				t.Errorf("audit = %+v", d.ChatModifications)
			}
		})
	}
}

// The seed's validation order: requester exists → in project → ancestor →
// task (exists, and the caller may act on it).
func TestBridgeValidationOrder(t *testing.T) {
	w := newWorld(t)
	others := w.task(t, "manager-dev", "worker-frontend-02", "someone else's", teams.StatusTodo)
	mine := w.task(t, "manager-dev", "worker-frontend-01", "mine", teams.StatusTodo)
	cases := []struct {
		name, requester, task, code string
	}{
		{"unknown requester and unknown task", "ghost", "tsk_nope", teams.ECodeAgentNotFound},
		{"requester outside the project, unknown task", "outsider", "tsk_nope", teams.ECodeNotAssigned},
		{"sibling requester, unknown task", "worker-frontend-02", "tsk_nope", teams.ECodeUnauthorized},
		{"manager, unknown task", "manager-dev", "tsk_nope", teams.ECodeTaskNotFound},
		{"manager, someone else's task", "manager-dev", others.ID, teams.ECodeUnauthorized},
		{"manager, my task", "manager-dev", mine.ID, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := w.svc.StartTaskFromChat(w.id("worker-frontend-01"), w.project.ID, c.task, c.requester, "")
			if core.ErrorCode(err) != c.code {
				t.Fatalf("code %q (%v), want %q", core.ErrorCode(err), err, c.code)
			}
		})
	}
	if _, err := w.svc.StartTaskFromChat(w.id("worker-frontend-01"), w.project.ID, others.ID, "manager-dev", ""); !strings.Contains(core.ErrorMessage(err), "自分に割り当てられたタスクのみ開始できます") {
		t.Errorf("starting someone else's task: %v", err)
	}
}

// update_task_from_chat: the assignee or the creator, at a superior's
// request; updated_fields lists what changed; the audit says whether the
// requester ever wrote to the caller.
func TestUpdateTaskFromChat(t *testing.T) {
	w := newWorld(t)
	task := w.task(t, "manager-dev", "worker-frontend-01", "dashboard", teams.StatusTodo)
	conv := w.conversation(t, "manager-dev", "worker-frontend-01", "要件が変わりました")
	desc, prio := "新しい要件", teams.PriorityHigh
	res, err := w.svc.UpdateTaskFromChat(w.id("worker-frontend-01"), w.project.ID, task.ID, "manager-dev", "", teams.TaskUpdate{Description: &desc, Priority: &prio})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"description", "priority"}, res.UpdatedFields); diff != "" {
		t.Errorf("updated_fields (-want +got):\n%s", diff)
	}
	if res.Modification.ConversationID != conv.ID || res.Modification.Warning {
		t.Errorf("audit of a request the requester made in chat: %+v", res.Modification)
	}
	got, _ := w.svc.Task(task.ID)
	if got.Description != desc || got.Priority != prio {
		t.Errorf("task after update = %+v", got)
	}
	// UC2: the manager (the creator) changes it at the owner's request;
	// the owner never wrote to the manager: flagged, not refused.
	title := "dashboard v2"
	res, err = w.svc.UpdateTaskFromChat(w.id("manager-dev"), w.project.ID, task.ID, "owner", "", teams.TaskUpdate{Title: &title})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Modification.Warning || !strings.Contains(res.Modification.WarningReason, "no chat history") {
		t.Errorf("a requester without chat history is not flagged: %+v", res.Modification)
	}
	// Neither assignee nor creator.
	other := w.task(t, "owner", "worker-frontend-02", "other", teams.StatusTodo)
	if _, err := w.svc.UpdateTaskFromChat(w.id("worker-frontend-01"), w.project.ID, other.ID, "manager-dev", "", teams.TaskUpdate{Title: &title}); !strings.Contains(core.ErrorMessage(err), "このタスクの修正権限がありません") {
		t.Errorf("changing someone else's task: %v", err)
	}
	// Status through the state machine; blocked needs a reason.
	blocked := teams.StatusBlocked
	if _, err := w.svc.UpdateTaskFromChat(w.id("worker-frontend-01"), w.project.ID, task.ID, "manager-dev", "", teams.TaskUpdate{Status: &blocked}); core.ErrorCode(err) != core.EInvalid {
		t.Errorf("blocked without a reason: %v", err)
	}
	done := teams.StatusDone
	if _, err := w.svc.UpdateTaskFromChat(w.id("worker-frontend-01"), w.project.ID, task.ID, "manager-dev", "", teams.TaskUpdate{Status: &done}); core.ErrorCode(err) != teams.ECodeInvalidTransition {
		t.Errorf("todo → done from chat: %v", err)
	}
	if _, err := w.svc.UpdateTaskFromChat(w.id("worker-frontend-01"), w.project.ID, task.ID, "manager-dev", "", teams.TaskUpdate{}); core.ErrorCode(err) != core.EInvalid {
		t.Errorf("nothing to change: %v", err)
	}
	// A conversation the caller is not in.
	theirs := w.conversation(t, "manager-dev", "worker-frontend-02", "private")
	if _, err := w.svc.UpdateTaskFromChat(w.id("worker-frontend-01"), w.project.ID, task.ID, "manager-dev", theirs.ID, teams.TaskUpdate{Title: &title}); core.ErrorCode(err) != teams.ECodeUnauthorized {
		t.Errorf("naming someone else's conversation: %v", err)
	}
	d, _ := w.svc.Detail(task.ID)
	if len(d.ChatModifications) != 2 {
		t.Errorf("%d chat modifications recorded, want 2 (refusals record nothing)", len(d.ChatModifications))
	}
}

// An agent taken off a project cannot go on changing that project's tasks
// from chat when its session names no project: the task is not found for
// it, as for update_task_status, and nothing changes (found by a security
// test).
func TestBridgeRefusesATaskOfAProjectTheCallerLeft(t *testing.T) {
	w := newWorld(t)
	ids := map[string]string{"proj-001": w.project.ID}
	for _, p := range []string{"proj-002", "proj-003"} {
		pr, err := w.az.CreateProject(p, "")
		if err != nil {
			t.Fatal(err)
		}
		ids[p] = pr.ID
	}
	c, err := w.az.CreateAgent(authz.AgentInput{Name: "w4", Kind: authz.KindWorker, Parent: "manager-dev", Projects: []string{ids["proj-001"], ids["proj-003"]}})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := w.svc.CreateTasks(authz.OwnerID, ids["proj-003"], []teams.TaskInput{{Title: "p3 secret task", AssigneeID: c.Agent.ID, Status: teams.StatusTodo}})
	if err != nil {
		t.Fatal(err)
	}
	projects := []string{ids["proj-001"], ids["proj-002"]}
	if _, err := w.az.UpdateAgent(c.Agent.ID, authz.AgentUpdate{Projects: &projects}); err != nil {
		t.Fatal(err)
	}
	title := "changed after removal"
	if _, err := w.svc.UpdateTaskFromChat(c.Agent.ID, "", ts[0].ID, "owner", "", teams.TaskUpdate{Title: &title}); core.ErrorCode(err) != teams.ECodeTaskNotFound {
		t.Errorf("update_task_from_chat on a task of a project it left = %v, want %s", err, teams.ECodeTaskNotFound)
	}
	if _, err := w.svc.StartTaskFromChat(c.Agent.ID, "", ts[0].ID, "owner", ""); core.ErrorCode(err) != teams.ECodeTaskNotFound {
		t.Errorf("start_task_from_chat on a task of a project it left = %v, want %s", err, teams.ECodeTaskNotFound)
	}
	got, _ := w.svc.Task(ts[0].ID)
	if got.Title != "p3 secret task" || got.Status != teams.StatusTodo {
		t.Errorf("the task changed: %+v", got)
	}
}
