package teams_test

import (
	"testing"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/teams"
)

// A suspended or disabled agent is refused everything (SPEC §2 gate 1,
// seed 003: "suspended/disabled → 全ツール拒否"): the person has cut it
// off. Its name must not go on authorizing changes either: start_task_from_chat
// and update_task_from_chat accept a requester_id only from an agent that
// may act now. Today a worker names its suspended manager and the task
// starts or changes, recorded as done at that manager's request.
func TestBridgeRefusesARequesterWhoIsCutOff(t *testing.T) {
	for _, status := range []string{authz.StatusSuspended, authz.StatusDisabled} {
		t.Run(status, func(t *testing.T) {
			w := newWorld(t)
			start := w.task(t, "manager-dev", "worker-frontend-01", "start me", teams.StatusTodo)
			change := w.task(t, "manager-dev", "worker-frontend-01", "change me", teams.StatusTodo)
			w.conversation(t, "manager-dev", "worker-frontend-01", "please start it")
			if _, err := w.az.SetStatus("manager-dev", status); err != nil {
				t.Fatal(err)
			}
			if _, err := w.svc.StartTaskFromChat(w.id("worker-frontend-01"), w.project.ID, start.ID, "manager-dev", ""); err == nil {
				t.Errorf("start_task_from_chat at the request of a %s manager succeeded", status)
			} else if code := core.ErrorCode(err); code != teams.ECodeUnauthorized && code != authz.ReasonSuspended {
				t.Errorf("start_task_from_chat at the request of a %s manager: code %q (%v)", status, code, err)
			}
			prio := teams.PriorityUrgent
			if _, err := w.svc.UpdateTaskFromChat(w.id("worker-frontend-01"), w.project.ID, change.ID, "manager-dev", "", teams.TaskUpdate{Priority: &prio}); err == nil {
				t.Errorf("update_task_from_chat at the request of a %s manager succeeded", status)
			}
			for _, id := range []string{start.ID, change.ID} {
				d, _ := w.svc.Detail(id)
				if len(d.ChatModifications) != 0 {
					t.Errorf("task %s changed at the request of a %s manager: %+v", d.Task.Title, status, d.ChatModifications)
				}
			}
		})
	}
}
