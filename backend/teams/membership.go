package teams

import (
	"fmt"
	"slices"

	"github.com/airlock-dev/airlock/backend/authz"
)

// Released is an open task an agent held in a project it left, now
// nobody's.
type Released struct {
	Task Task `json:"task"`
	// Agent is the name of the agent that held it.
	Agent string `json:"agent"`
	// WasInProgress says the task went back from in_progress to todo.
	WasInProgress bool `json:"wasInProgress"`
}

// ReleaseTasksOutside unassigns the open tasks the given agents hold in
// projects they are no longer assigned to (found by a new-user test: an
// agent taken off a project kept its tasks, which it could no longer see
// or report on, and nobody else could take them without reassigning each).
// A task in progress goes back to todo, since nobody works on it now. Each
// change is in the task's history, made by the owner (the person who
// changed the agent's projects). No ids means every agent. It is safe to
// call again: tasks already released are not touched.
func (s *Service) ReleaseTasksOutside(agentIDs ...string) ([]Released, error) {
	r, err := s.roster()
	if err != nil {
		return nil, err
	}
	var agents []authz.Agent
	if len(agentIDs) == 0 {
		for _, a := range r.byID {
			agents = append(agents, a)
		}
	} else {
		for _, id := range agentIDs {
			if a, ok := r.byID[id]; ok {
				agents = append(agents, a)
			}
		}
	}
	var out []Released
	changed := map[string][]string{} // project → task ids
	err = s.atomic(func(tx Store, fx *effects) error {
		for _, a := range agents {
			if a.Kind == authz.KindOwner {
				continue // the owner is in every project
			}
			held, _, err := tx.ListTasks(TaskFilter{AssigneeID: a.ID, Statuses: OpenStatuses()})
			if err != nil {
				return err
			}
			if len(held) == 0 {
				continue
			}
			// Its projects as the transaction sees them: added back to a
			// project and given a task there since the roster was read,
			// it keeps that task (found by a code review).
			projects, err := tx.AgentProjects(a.ID)
			if err != nil {
				return err
			}
			for _, t := range held {
				if slices.Contains(projects, t.ProjectID) {
					continue
				}
				now := s.now().UTC()
				rel := Released{Agent: a.Name, WasInProgress: t.Status == StatusInProgress}
				t.AssigneeID, t.UpdatedAt = "", now
				if rel.WasInProgress {
					t.Status, t.StatusChangedByAgentID, t.StatusChangedAt = StatusTodo, authz.OwnerID, ptrTime(now)
				}
				if err := tx.UpdateTask(t); err != nil {
					return err
				}
				detail := fmt.Sprintf("unassigned: %s is no longer in the project", a.Name)
				if err := tx.AddTaskEvent(TaskEvent{TaskID: t.ID, Kind: EventAssigned, Fields: []string{"assignee"}, AgentID: authz.OwnerID, Detail: detail, CreatedAt: now}); err != nil {
					return err
				}
				if rel.WasInProgress {
					if err := tx.AddTaskEvent(TaskEvent{TaskID: t.ID, Kind: EventStatus, FromStatus: StatusInProgress, ToStatus: StatusTodo, Fields: []string{"status"},
						AgentID: authz.OwnerID, Detail: "back to todo: nobody works on it now", CreatedAt: now}); err != nil {
						return err
					}
				}
				rel.Task = t
				out = append(out, rel)
				changed[t.ProjectID] = append(changed[t.ProjectID], t.ID)
			}
		}
		fx.after(func() {
			for p, ids := range changed {
				s.boardChanged(p, EventAssigned, authz.OwnerID, ids...)
			}
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
