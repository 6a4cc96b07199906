package teams

import (
	"fmt"
	"slices"
	"strings"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
)

// transitions is the task state machine: the statuses each status may move
// to. Work starts (in_progress) from backlog, todo or blocked; it is done
// only from in_progress; a done task may be reopened (todo) and a
// cancelled one restored (backlog, todo); nothing else leaves a closed
// task.
var transitions = map[string][]string{
	StatusBacklog:    {StatusTodo, StatusInProgress, StatusBlocked, StatusCancelled},
	StatusTodo:       {StatusBacklog, StatusInProgress, StatusBlocked, StatusCancelled},
	StatusInProgress: {StatusTodo, StatusBlocked, StatusDone, StatusCancelled},
	StatusBlocked:    {StatusBacklog, StatusTodo, StatusInProgress, StatusCancelled},
	StatusDone:       {StatusTodo},
	StatusCancelled:  {StatusBacklog, StatusTodo},
}

// Transitions returns the statuses a task in status from may move to.
func Transitions(from string) []string { return slices.Clone(transitions[from]) }

func checkTransition(t Task, to string) error {
	if err := validStatus(to); err != nil {
		return err
	}
	if t.Status == to {
		return core.Errorf(ECodeInvalidTransition, "Task %s (%q) is already %s", t.ID, t.Title, to)
	}
	if !slices.Contains(transitions[t.Status], to) {
		return core.Errorf(ECodeInvalidTransition, "Task %s (%q) cannot go from %s to %s", t.ID, t.Title, t.Status, to).
			WithHint(fmt.Sprintf("from %s a task may go to: %s", t.Status, strings.Join(transitions[t.Status], ", ")))
	}
	return nil
}

// TaskInput is a new task.
type TaskInput struct {
	// LocalID names the task within one batch, so that other tasks of the
	// batch can depend on it before it has an id.
	LocalID     string `json:"localId"`
	Title       string `json:"title"`
	Description string `json:"description"`
	// Priority defaults to medium.
	Priority string `json:"priority"`
	// Status is backlog (the default) or todo.
	Status string `json:"status"`
	// AssigneeID is an agent id or name: the creator or an agent below it.
	AssigneeID   string `json:"assigneeId"`
	ParentTaskID string `json:"parentTaskId"`
	// DependsOn are task ids, or LocalIDs of the same batch.
	DependsOn []string `json:"dependsOn"`
}

// effects collects what a change does besides its rows: the agents whose
// notifications hint must be set and the events to emit once it is
// committed.
type effects struct {
	s    *Service
	emit []func()
}

func (fx *effects) after(f func()) { fx.emit = append(fx.emit, f) }

// notify creates n in tx. The hint is set at once (a rolled-back
// notification leaves a hint that costs one query, never a lost
// notification).
func (fx *effects) notify(tx Store, n Notification) error {
	if n.TargetAgentID == "" || n.TargetAgentID == authz.OwnerID {
		// The owner is the person using Airlock: the screens show them
		// everything, no session waits for a notification.
		return nil
	}
	if n.ID == "" {
		n.ID = newID("ntf_")
	}
	if n.CreatedAt.IsZero() {
		n.CreatedAt = fx.s.now().UTC()
	}
	n.Message = clip(n.Message, MaxMessage)
	fx.s.hint(n.TargetAgentID)
	return tx.CreateNotification(n)
}

// atomic runs fn in one transaction and, once it is committed, emits what
// fn asked for.
func (s *Service) atomic(fn func(tx Store, fx *effects) error) error {
	fx := &effects{s: s}
	if err := s.st.Atomic(func(tx Store) error { return fn(tx, fx) }); err != nil {
		return err
	}
	for _, f := range fx.emit {
		f()
	}
	return nil
}

// getTask returns task id of projectID (any project when empty); a task of
// another project is not found.
func getTask(tx Store, id, projectID string) (Task, error) {
	if id == "" {
		return Task{}, core.Errorf(core.EInvalid, "task_id is required")
	}
	t, err := tx.GetTask(id)
	if err != nil {
		return Task{}, notFoundAs(err, errTaskNotFound(id))
	}
	if projectID != "" && t.ProjectID != projectID {
		return Task{}, errTaskNotFound(id)
	}
	return t, nil
}

// taskOf is getTask for an agent acting on a task. Without a project (an
// agent token that connected without ?project=) the task must be in one of
// the agent's projects: a task elsewhere is not found, as in a session of
// another project, rather than refused for reasons that confirm it exists.
func taskOf(tx Store, r roster, actorID, taskID, projectID string) (Task, error) {
	t, err := getTask(tx, taskID, projectID)
	if err == nil && projectID == "" && !inProject(r.byID[actorID], t.ProjectID) {
		return Task{}, errTaskNotFound(taskID)
	}
	return t, err
}

// Task returns task id (any project).
func (s *Service) Task(id string) (Task, error) { return getTask(s.st, id, "") }

// Tasks returns the tasks f selects and how many there are without its
// limit.
func (s *Service) Tasks(f TaskFilter) ([]Task, int, error) { return s.st.ListTasks(f) }

// OpenTasksOf returns the open tasks assigned to agentID in every project:
// the ones deleting the agent leaves without an assignee.
func (s *Service) OpenTasksOf(agentID string) ([]Task, error) {
	list, _, err := s.st.ListTasks(TaskFilter{AssigneeID: agentID, Statuses: OpenStatuses()})
	return list, err
}

// TaskCounts counts a project's tasks by status.
func (s *Service) TaskCounts(projectID string) (map[string]int, error) {
	return s.st.TaskCounts(projectID)
}

// CreateTasks creates tasks in a project for actorID, all or none. Each
// assignee must be actorID or an agent below it, assigned to the project;
// dependencies may name tasks of the project or of the batch, and must not
// make a cycle.
func (s *Service) CreateTasks(actorID, projectID string, in []TaskInput) ([]Task, error) {
	r, err := s.roster()
	if err != nil {
		return nil, err
	}
	actor, ok := r.byID[actorID]
	if !ok {
		return nil, errAgentNotFound(actorID)
	}
	if !inProject(actor, projectID) {
		return nil, errNotAssigned(actor, projectID)
	}
	if len(in) == 0 {
		return nil, core.Errorf(core.EInvalid, "tasks is empty: give at least one task")
	}
	if len(in) > MaxBatch {
		return nil, core.Errorf(core.ETooLarge, "%d tasks in one batch; at most %d are allowed", len(in), MaxBatch)
	}
	now := s.now().UTC()
	tasks := make([]Task, len(in))
	local := map[string]string{}
	for i, t := range in {
		where := fmt.Sprintf("tasks[%d]", i)
		if err := checkLine(where+".title", t.Title, MaxTitle, true); err != nil {
			return nil, err
		}
		if err := checkText(where+".description", t.Description, MaxDescription, false); err != nil {
			return nil, err
		}
		if err := checkDependsOn(where+".depends_on", t.DependsOn); err != nil {
			return nil, err
		}
		if t.Priority == "" {
			t.Priority = PriorityMedium
		}
		if err := validPriority(t.Priority); err != nil {
			return nil, err
		}
		if t.Status == "" {
			t.Status = StatusBacklog
		}
		if t.Status != StatusBacklog && t.Status != StatusTodo {
			return nil, core.Errorf(core.EInvalid, "%s.status: a new task is backlog or todo, not %q", where, t.Status).
				WithHint("create it, then change its status with update_task_status")
		}
		assignee := ""
		if t.AssigneeID != "" {
			a, err := r.find(t.AssigneeID)
			if err != nil {
				return nil, err
			}
			if !inProject(a, projectID) {
				return nil, errNotAssigned(a, projectID)
			}
			if !r.managesOrIs(actorID, a.ID) {
				return nil, core.Errorf(ECodeUnauthorized, "You can assign tasks only to yourself or to agents below you; '%s' is not below '%s'", a.Name, actor.Name)
			}
			assignee = a.ID
		}
		id := newID("tsk_")
		if t.LocalID != "" {
			if _, dup := local[t.LocalID]; dup {
				return nil, core.Errorf(core.EInvalid, "%s.local_id %q is used twice", where, t.LocalID)
			}
			local[t.LocalID] = id
		}
		tasks[i] = Task{ID: id, ProjectID: projectID, Title: strings.TrimSpace(t.Title), Description: t.Description, Status: t.Status,
			Priority: t.Priority, AssigneeID: assignee, CreatedByAgentID: actorID, DependsOn: []string{},
			CreatedAt: now, UpdatedAt: now, StatusChangedByAgentID: actorID, StatusChangedAt: ptrTime(now)}
	}
	err = s.atomic(func(tx Store, fx *effects) error {
		resolve := func(ref string) (string, error) {
			if id, ok := local[ref]; ok {
				return id, nil
			}
			t, err := getTask(tx, ref, projectID)
			return t.ID, err
		}
		graph, err := tx.ProjectDependencies(projectID)
		if err != nil {
			return err
		}
		// Which field named a task that is not there, and where it was
		// looked for.
		unknown := func(err error, field, ref string) error {
			if core.ErrorCode(err) != ECodeTaskNotFound {
				return err
			}
			return core.Errorf(ECodeTaskNotFound, "%s: %q is neither a local_id of this batch nor a task of the project", field, ref).
				WithHint("give a local_id set on another task of the batch, or the id of a task of the project (get_my_tasks lists yours)")
		}
		for i, t := range in {
			if t.ParentTaskID != "" {
				if tasks[i].ParentTaskID, err = resolve(t.ParentTaskID); err != nil {
					return unknown(err, fmt.Sprintf("tasks[%d].parent_task_id", i), t.ParentTaskID)
				}
			}
			for _, ref := range t.DependsOn {
				id, err := resolve(ref)
				if err != nil {
					return unknown(err, fmt.Sprintf("tasks[%d].depends_on", i), ref)
				}
				if id == tasks[i].ID {
					return core.Errorf(ECodeDependencyCycle, "tasks[%d] cannot depend on itself", i)
				}
				if !slices.Contains(tasks[i].DependsOn, id) {
					tasks[i].DependsOn = append(tasks[i].DependsOn, id)
				}
			}
			graph[tasks[i].ID] = tasks[i].DependsOn
		}
		if cyc := findCycle(graph); cyc != nil {
			// The batch's tasks have no id the caller knows yet: name them
			// as the caller did (local_id, else their place in the batch).
			label := map[string]string{}
			for i, t := range in {
				label[tasks[i].ID] = fmt.Sprintf("tasks[%d]", i)
				if t.LocalID != "" {
					label[tasks[i].ID] = fmt.Sprintf("%s (local_id)", t.LocalID)
				}
			}
			for i, id := range cyc {
				if l, ok := label[id]; ok {
					cyc[i] = l
				}
			}
			return core.Errorf(ECodeDependencyCycle, "These dependencies make a cycle: %s", strings.Join(cyc, " → "))
		}
		for _, t := range tasks {
			if err := tx.CreateTask(t); err != nil {
				return err
			}
			if err := tx.AddTaskEvent(TaskEvent{TaskID: t.ID, Kind: EventCreated, ToStatus: t.Status, AgentID: actorID, CreatedAt: now}); err != nil {
				return err
			}
			if t.AssigneeID != "" && t.AssigneeID != actorID {
				if err := fx.notify(tx, assignedNotification(t, actorID, r)); err != nil {
					return err
				}
			}
		}
		ids := make([]string, len(tasks))
		for i, t := range tasks {
			ids[i] = t.ID
		}
		fx.after(func() { s.boardChanged(projectID, EventCreated, actorID, ids...) })
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tasks, nil
}

func assignedNotification(t Task, actorID string, r roster) Notification {
	return Notification{TargetAgentID: t.AssigneeID, TargetProjectID: t.ProjectID, Type: NotifyMessage, Action: ActionTaskAssigned,
		TaskID: t.ID, SourceAgentID: actorID,
		Message:     fmt.Sprintf("%s assigned you task %s: %s (status %s, priority %s)", r.name(actorID), t.ID, t.Title, t.Status, t.Priority),
		Instruction: "A task was assigned to you. Call get_my_tasks to see it, or get_next_action for what to do next."}
}

// findCycle returns a dependency cycle of graph (task → the tasks it
// depends on) as a path that ends where it starts, or nil.
func findCycle(graph map[string][]string) []string {
	const (
		unvisited = iota
		onPath
		finished
	)
	state := map[string]int{}
	var path []string
	var visit func(n string) []string
	visit = func(n string) []string {
		state[n] = onPath
		path = append(path, n)
		for _, m := range graph[n] {
			switch state[m] {
			case onPath:
				i := slices.Index(path, m)
				return append(slices.Clone(path[i:]), m)
			case unvisited:
				if c := visit(m); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[n] = finished
		return nil
	}
	keys := make([]string, 0, len(graph))
	for k := range graph {
		keys = append(keys, k)
	}
	slices.Sort(keys) // a stable report
	for _, k := range keys {
		if state[k] == unvisited {
			if c := visit(k); c != nil {
				return c
			}
		}
	}
	return nil
}

// mayChange reports whether actor may change task t as an agent: its
// assignee, its creator, an agent above its assignee, or the owner.
func (r roster) mayChange(actorID string, t Task) bool {
	if actorID == t.AssigneeID || actorID == t.CreatedByAgentID || r.byID[actorID].Kind == authz.KindOwner {
		return true
	}
	return t.AssigneeID != "" && r.isStrictAncestor(actorID, t.AssigneeID)
}

// StatusChange is the outcome of a status change.
type StatusChange struct {
	Task           Task   `json:"task"`
	PreviousStatus string `json:"previousStatus"`
	// Notified are the agents told about the change.
	Notified []string `json:"notified"`
}

// SetStatus moves task taskID (of projectID; any project when empty) to
// status for actorID: the task's assignee, its creator, an agent above the
// assignee, or the owner. The state machine and the task's dependencies
// decide whether it may; blocked needs a reason.
func (s *Service) SetStatus(actorID, projectID, taskID, status, reason string) (StatusChange, error) {
	r, err := s.roster()
	if err != nil {
		return StatusChange{}, err
	}
	if _, ok := r.byID[actorID]; !ok {
		return StatusChange{}, errAgentNotFound(actorID)
	}
	var out StatusChange
	err = s.atomic(func(tx Store, fx *effects) error {
		t, err := taskOf(tx, r, actorID, taskID, projectID)
		if err != nil {
			return err
		}
		if !r.mayChange(actorID, t) {
			return core.Errorf(ECodeUnauthorized, "Only the task's assignee, its creator or an agent above the assignee may change its status; '%s' is none of them",
				r.name(actorID))
		}
		out.PreviousStatus = t.Status
		out.Notified, err = s.applyStatus(tx, fx, r, &t, status, reason, actorID, "")
		out.Task = t
		return err
	})
	return out, err
}

// applyStatus moves t to status in tx and tells the agents concerned:
// the assignee when someone else moved its task, the creator when it is
// blocked or done, and the assignees of the tasks waiting on it when it
// closes.
func (s *Service) applyStatus(tx Store, fx *effects, r roster, t *Task, to, reason, actorID, conversationID string) ([]string, error) {
	if err := checkTransition(*t, to); err != nil {
		return nil, err
	}
	if to == StatusInProgress || to == StatusDone {
		open, err := openBlockers(tx, *t)
		if err != nil {
			return nil, err
		}
		if len(open) > 0 {
			var list []string
			for _, b := range open {
				list = append(list, fmt.Sprintf("%s (%s, %s)", b.ID, b.Title, b.Status))
			}
			return nil, core.Errorf(ECodeTaskBlocked, "Task %s cannot be %s: it depends on %d open task(s): %s", t.ID, to, len(open), strings.Join(list, "; ")).
				WithHint("those tasks must be done (or cancelled) first; get_next_action says what you can do meanwhile")
		}
	}
	reason = strings.TrimSpace(reason)
	if to == StatusBlocked {
		if reason == "" {
			return nil, core.Errorf(core.EInvalid, "blocked_reason is required when the status is blocked")
		}
		if err := checkText("blocked_reason", reason, MaxMessage, true); err != nil {
			return nil, err
		}
	}
	now := s.now().UTC()
	from := t.Status
	t.Status, t.UpdatedAt, t.StatusChangedByAgentID, t.StatusChangedAt = to, now, actorID, ptrTime(now)
	t.BlockedReason = ""
	if to == StatusBlocked {
		t.BlockedReason = reason
	}
	switch {
	case to == StatusDone:
		t.CompletedAt = ptrTime(now)
	case from == StatusDone:
		t.CompletedAt, t.Result, t.Summary = nil, "", ""
	}
	if err := tx.UpdateTask(*t); err != nil {
		return nil, err
	}
	if err := tx.AddTaskEvent(TaskEvent{TaskID: t.ID, Kind: EventStatus, FromStatus: from, ToStatus: to, AgentID: actorID,
		Detail: t.BlockedReason, ConversationID: conversationID, CreatedAt: now}); err != nil {
		return nil, err
	}
	var told []string
	tell := func(n Notification) error {
		if n.TargetAgentID == "" || n.TargetAgentID == actorID || slices.Contains(told, n.TargetAgentID) {
			return nil
		}
		if r.byID[n.TargetAgentID].Kind == authz.KindOwner {
			return nil
		}
		told = append(told, n.TargetAgentID)
		n.TargetProjectID, n.SourceAgentID = t.ProjectID, actorID
		return fx.notify(tx, n)
	}
	actor := r.name(actorID)
	if t.AssigneeID != actorID {
		msg := fmt.Sprintf("%s moved your task %s (%s) from %s to %s", actor, t.ID, t.Title, from, to)
		if to == StatusBlocked {
			msg += ": " + t.BlockedReason
		}
		if err := tell(Notification{TargetAgentID: t.AssigneeID, Type: NotifyStatusChange, Action: ActionTaskChanged, TaskID: t.ID, Message: msg,
			Instruction: "A task of yours changed. Call get_my_tasks to see your tasks, or get_next_action for what to do next."}); err != nil {
			return nil, err
		}
	}
	if to == StatusBlocked || to == StatusDone {
		msg := fmt.Sprintf("Task %s (%s) you created is %s", t.ID, t.Title, to)
		if to == StatusBlocked {
			msg += ": " + t.BlockedReason
		}
		if actorID != t.AssigneeID || t.AssigneeID == "" {
			msg += " (by " + actor + ")"
		}
		instr := "Check whether the work is what you asked for, then plan what follows."
		if to == StatusBlocked {
			instr = "Help unblock it: answer the question, fix what it waits for, or reassign it."
		}
		if err := tell(Notification{TargetAgentID: t.CreatedByAgentID, Type: NotifyStatusChange, Action: ActionTaskChanged, TaskID: t.ID, Message: msg, Instruction: instr}); err != nil {
			return nil, err
		}
		// Work asked for in chat (request_task): who asked is told too.
		if t.RequestedByAgentID != "" {
			asked := strings.Replace(msg, "you created", "you asked for", 1)
			if err := tell(Notification{TargetAgentID: t.RequestedByAgentID, Type: NotifyStatusChange, Action: ActionTaskChanged, TaskID: t.ID, Message: asked, Instruction: instr}); err != nil {
				return nil, err
			}
		}
	}
	if !Open(to) {
		deps, err := tx.Dependents(t.ID)
		if err != nil {
			return nil, err
		}
		for _, d := range deps {
			if !Open(d.Status) || d.AssigneeID == "" {
				continue
			}
			rest, err := openBlockers(tx, d)
			if err != nil {
				return nil, err
			}
			msg := fmt.Sprintf("Task %s (%s), which your task %s (%s) depends on, is %s.", t.ID, t.Title, d.ID, d.Title, to)
			instr := "Your task can start now: call get_next_action."
			if len(rest) > 0 {
				msg += fmt.Sprintf(" It still waits for %d other task(s).", len(rest))
				instr = "Your task still waits for other tasks; get_next_action says what you can do meanwhile."
			}
			if err := tell(Notification{TargetAgentID: d.AssigneeID, Type: NotifyStatusChange, Action: ActionUnblocked, TaskID: d.ID, Message: msg, Instruction: instr}); err != nil {
				return nil, err
			}
		}
	}
	task := *t
	fx.after(func() { s.boardChanged(task.ProjectID, EventStatus, actorID, task.ID) })
	if told == nil {
		told = []string{}
	}
	return told, nil
}

// OpenBlockers returns the open tasks task id depends on: while there are
// any, it cannot start.
func (s *Service) OpenBlockers(id string) ([]Task, error) {
	t, err := s.st.GetTask(id)
	if err != nil {
		return nil, notFoundAs(err, errTaskNotFound(id))
	}
	return openBlockers(s.st, t)
}

// openBlockers returns the open tasks t depends on.
func openBlockers(tx Store, t Task) ([]Task, error) {
	var open []Task
	for _, id := range t.DependsOn {
		b, err := tx.GetTask(id)
		if core.ErrorCode(err) == core.ENotFound {
			continue // deleted with its project; it blocks nothing
		}
		if err != nil {
			return nil, err
		}
		if Open(b.Status) {
			open = append(open, b)
		}
	}
	return open, nil
}

// TaskUpdate changes the fields that are set.
type TaskUpdate struct {
	Title         *string `json:"title,omitempty"`
	Description   *string `json:"description,omitempty"`
	Priority      *string `json:"priority,omitempty"`
	Status        *string `json:"status,omitempty"`
	BlockedReason *string `json:"blockedReason,omitempty"`
	// DependsOn replaces the task's dependencies (task ids of its project).
	DependsOn *[]string `json:"dependsOn,omitempty"`
	// ParentTaskID moves the task under another task of its project ("":
	// no parent). A task cannot end up below itself.
	ParentTaskID *string `json:"parentTaskId,omitempty"`
}

func (u TaskUpdate) empty() bool {
	return u.Title == nil && u.Description == nil && u.Priority == nil && u.Status == nil && u.BlockedReason == nil && u.DependsOn == nil &&
		u.ParentTaskID == nil
}

// EditTask changes task taskID for actorID, under the same permission as
// SetStatus. A status in up goes through the state machine.
func (s *Service) EditTask(actorID, projectID, taskID string, up TaskUpdate) (Task, []string, error) {
	r, err := s.roster()
	if err != nil {
		return Task{}, nil, err
	}
	if _, ok := r.byID[actorID]; !ok {
		return Task{}, nil, errAgentNotFound(actorID)
	}
	var t Task
	var fields []string
	err = s.atomic(func(tx Store, fx *effects) error {
		var err error
		if t, err = taskOf(tx, r, actorID, taskID, projectID); err != nil {
			return err
		}
		if !r.mayChange(actorID, t) {
			return core.Errorf(ECodeUnauthorized, "Only the task's assignee, its creator or an agent above the assignee may change it; '%s' is none of them", r.name(actorID))
		}
		fields, err = s.applyEdit(tx, fx, r, &t, up, actorID, "")
		return err
	})
	return t, fields, err
}

// applyEdit applies up to t in tx and returns the names of the fields it
// changed (seed 001's updated_fields).
func (s *Service) applyEdit(tx Store, fx *effects, r roster, t *Task, up TaskUpdate, actorID, conversationID string) ([]string, error) {
	if up.empty() {
		return nil, core.Errorf(core.EInvalid, "nothing to change: give at least one of title, description, status, priority, blocked_reason, depends_on, parent")
	}
	var fields []string
	if up.Title != nil {
		if err := checkLine("title", *up.Title, MaxTitle, true); err != nil {
			return nil, err
		}
		if v := strings.TrimSpace(*up.Title); v != t.Title {
			t.Title = v
			fields = append(fields, "title")
		}
	}
	if up.Description != nil {
		if err := checkText("description", *up.Description, MaxDescription, false); err != nil {
			return nil, err
		}
		if *up.Description != t.Description {
			t.Description = *up.Description
			fields = append(fields, "description")
		}
	}
	if up.Priority != nil {
		if err := validPriority(*up.Priority); err != nil {
			return nil, err
		}
		if *up.Priority != t.Priority {
			t.Priority = *up.Priority
			fields = append(fields, "priority")
		}
	}
	if up.DependsOn != nil {
		if err := checkDependsOn("depends_on", *up.DependsOn); err != nil {
			return nil, err
		}
		var ids []string
		for _, ref := range *up.DependsOn {
			d, err := getTask(tx, ref, t.ProjectID)
			if err != nil {
				return nil, err
			}
			if d.ID == t.ID {
				return nil, core.Errorf(ECodeDependencyCycle, "Task %s cannot depend on itself", t.ID)
			}
			if !slices.Contains(ids, d.ID) {
				ids = append(ids, d.ID)
			}
		}
		if ids == nil {
			ids = []string{}
		}
		graph, err := tx.ProjectDependencies(t.ProjectID)
		if err != nil {
			return nil, err
		}
		graph[t.ID] = ids
		if cyc := findCycle(graph); cyc != nil {
			return nil, core.Errorf(ECodeDependencyCycle, "These dependencies make a cycle: %s", strings.Join(cyc, " → "))
		}
		if !slices.Equal(sorted(ids), sorted(t.DependsOn)) {
			if err := tx.SetDependencies(t.ID, ids); err != nil {
				return nil, err
			}
			t.DependsOn = ids
			fields = append(fields, "depends_on")
		}
	}
	if up.ParentTaskID != nil {
		parent := ""
		if ref := strings.TrimSpace(*up.ParentTaskID); ref != "" {
			p, err := getTask(tx, ref, t.ProjectID)
			if err != nil {
				return nil, err
			}
			// Walk up from the new parent: meeting the task itself would
			// put it below itself.
			for cur, seen := p, 0; ; seen++ {
				if cur.ID == t.ID {
					return nil, core.Errorf(ECodeDependencyCycle, "Task %s cannot be placed under %s: %s is already below it", t.ID, p.ID, p.ID)
				}
				if cur.ParentTaskID == "" || seen > 10000 {
					break
				}
				if cur, err = getTask(tx, cur.ParentTaskID, t.ProjectID); err != nil {
					return nil, err
				}
			}
			parent = p.ID
		}
		if parent != t.ParentTaskID {
			t.ParentTaskID = parent
			fields = append(fields, "parent_task_id")
		}
	}
	now := s.now().UTC()
	if len(fields) > 0 {
		t.UpdatedAt = now
		if err := tx.UpdateTask(*t); err != nil {
			return nil, err
		}
		if err := tx.AddTaskEvent(TaskEvent{TaskID: t.ID, Kind: EventEdited, Fields: fields, AgentID: actorID, ConversationID: conversationID, CreatedAt: now}); err != nil {
			return nil, err
		}
		task := *t
		fx.after(func() { s.boardChanged(task.ProjectID, EventEdited, actorID, task.ID) })
		if t.AssigneeID != "" && t.AssigneeID != actorID {
			if err := fx.notify(tx, Notification{TargetAgentID: t.AssigneeID, TargetProjectID: t.ProjectID, Type: NotifyStatusChange,
				Action: ActionTaskChanged, TaskID: t.ID, SourceAgentID: actorID,
				Message:     fmt.Sprintf("%s changed %s of your task %s (%s)", r.name(actorID), strings.Join(fields, ", "), t.ID, t.Title),
				Instruction: "Read the task again (get_my_tasks) before you go on."}); err != nil {
				return nil, err
			}
		}
	}
	switch {
	case up.Status != nil && *up.Status != t.Status:
		reason := ""
		if up.BlockedReason != nil {
			reason = *up.BlockedReason
		}
		if _, err := s.applyStatus(tx, fx, r, t, *up.Status, reason, actorID, conversationID); err != nil {
			return nil, err
		}
		fields = append(fields, "status")
		if *up.Status == StatusBlocked {
			fields = append(fields, "blocked_reason")
		}
	case up.Status != nil:
		return nil, core.Errorf(ECodeInvalidTransition, "Task %s is already %s", t.ID, t.Status)
	case up.BlockedReason != nil:
		if t.Status != StatusBlocked {
			return nil, core.Errorf(core.EInvalid, "blocked_reason applies to a blocked task; task %s is %s", t.ID, t.Status).
				WithHint("give status blocked with it")
		}
		if err := checkText("blocked_reason", *up.BlockedReason, MaxMessage, true); err != nil {
			return nil, err
		}
		if *up.BlockedReason != t.BlockedReason {
			t.BlockedReason, t.UpdatedAt = *up.BlockedReason, now
			if err := tx.UpdateTask(*t); err != nil {
				return nil, err
			}
			if err := tx.AddTaskEvent(TaskEvent{TaskID: t.ID, Kind: EventEdited, Fields: []string{"blocked_reason"}, AgentID: actorID,
				Detail: t.BlockedReason, ConversationID: conversationID, CreatedAt: now}); err != nil {
				return nil, err
			}
			fields = append(fields, "blocked_reason")
		}
	}
	if fields == nil {
		fields = []string{}
	}
	return fields, nil
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// AssignResult is the outcome of an assignment.
type AssignResult struct {
	Task               Task   `json:"task"`
	PreviousAssigneeID string `json:"previousAssigneeId"`
}

// AssignTask gives task taskID to assigneeRef (an id or name; "" takes the
// task away). actorID must be the task's creator or above its current
// assignee, and be the new assignee or above it; the owner may do anything.
func (s *Service) AssignTask(actorID, projectID, taskID, assigneeRef string) (AssignResult, error) {
	r, err := s.roster()
	if err != nil {
		return AssignResult{}, err
	}
	actor, ok := r.byID[actorID]
	if !ok {
		return AssignResult{}, errAgentNotFound(actorID)
	}
	var assignee authz.Agent
	if assigneeRef != "" {
		if assignee, err = r.find(assigneeRef); err != nil {
			return AssignResult{}, err
		}
	}
	var out AssignResult
	err = s.atomic(func(tx Store, fx *effects) error {
		t, err := taskOf(tx, r, actorID, taskID, projectID)
		if err != nil {
			return err
		}
		if assignee.ID != "" && !inProject(assignee, t.ProjectID) {
			return errNotAssigned(assignee, t.ProjectID)
		}
		owner := actor.Kind == authz.KindOwner
		// The creator, or an agent above the current assignee; a task
		// nobody holds is its creator's to give, and so of those above
		// the creator (found by a security test: any manager took another
		// manager's unassigned task).
		above := t.AssigneeID
		if above == "" {
			above = t.CreatedByAgentID
		}
		if !owner && t.CreatedByAgentID != actorID && (above == "" || !r.managesOrIs(actorID, above)) {
			if t.AssigneeID == "" {
				return core.Errorf(ECodeUnauthorized, "'%s' may not assign task %s: nobody holds it, and '%s' neither created it nor is above its creator", actor.Name, t.ID, actor.Name)
			}
			return core.Errorf(ECodeUnauthorized, "'%s' may not reassign task %s: it neither created it nor is above its assignee", actor.Name, t.ID)
		}
		if assignee.ID != "" && !r.managesOrIs(actorID, assignee.ID) {
			return core.Errorf(ECodeUnauthorized, "You can assign tasks only to yourself or to agents below you; '%s' is not below '%s'", assignee.Name, actor.Name)
		}
		out.PreviousAssigneeID = t.AssigneeID
		if t.AssigneeID == assignee.ID {
			out.Task = t
			return nil
		}
		now := s.now().UTC()
		prev := t.AssigneeID
		t.AssigneeID, t.UpdatedAt = assignee.ID, now
		if err := tx.UpdateTask(t); err != nil {
			return err
		}
		detail := "unassigned"
		if assignee.ID != "" {
			detail = "assigned to " + assignee.Name
		}
		if err := tx.AddTaskEvent(TaskEvent{TaskID: t.ID, Kind: EventAssigned, Fields: []string{"assignee"}, AgentID: actorID, Detail: detail, CreatedAt: now}); err != nil {
			return err
		}
		if assignee.ID != "" && assignee.ID != actorID {
			if err := fx.notify(tx, assignedNotification(t, actorID, r)); err != nil {
				return err
			}
		}
		if prev != "" && prev != actorID {
			if err := fx.notify(tx, Notification{TargetAgentID: prev, TargetProjectID: t.ProjectID, Type: NotifyStatusChange, Action: ActionTaskChanged,
				TaskID: t.ID, SourceAgentID: actorID, Message: fmt.Sprintf("%s took task %s (%s) from you (%s)", actor.Name, t.ID, t.Title, detail),
				Instruction: "Stop working on it; call get_next_action for what to do next."}); err != nil {
				return err
			}
		}
		out.Task = t
		fx.after(func() { s.boardChanged(t.ProjectID, EventAssigned, actorID, t.ID) })
		return nil
	})
	return out, err
}

// RequestInput is work an agent takes on itself (request_task): often
// asked for in chat, so that it is tracked as a task.
type RequestInput struct {
	Title       string `json:"title"`
	Description string `json:"description"`
	Priority    string `json:"priority"`
	// ConversationID is where the work was asked for; the agent must be a
	// member.
	ConversationID string `json:"conversationId"`
	// RequesterID is who asked for it (id or name), assigned to the
	// project.
	RequesterID  string `json:"requesterId"`
	ParentTaskID string `json:"parentTaskId"`
}

// RequestTask creates a todo task assigned to actorID itself.
func (s *Service) RequestTask(actorID, projectID string, in RequestInput) (Task, error) {
	r, err := s.roster()
	if err != nil {
		return Task{}, err
	}
	actor, ok := r.byID[actorID]
	if !ok {
		return Task{}, errAgentNotFound(actorID)
	}
	if !inProject(actor, projectID) {
		return Task{}, errNotAssigned(actor, projectID)
	}
	if err := checkLine("title", in.Title, MaxTitle, true); err != nil {
		return Task{}, err
	}
	if err := checkText("description", in.Description, MaxDescription, false); err != nil {
		return Task{}, err
	}
	if in.Priority == "" {
		in.Priority = PriorityMedium
	}
	if err := validPriority(in.Priority); err != nil {
		return Task{}, err
	}
	requester := ""
	if in.RequesterID != "" {
		a, err := r.find(in.RequesterID)
		if err != nil {
			return Task{}, err
		}
		if !inProject(a, projectID) {
			return Task{}, errNotAssigned(a, projectID)
		}
		requester = a.ID
		if in.ConversationID == "" && requester != actorID {
			// Whoever is named is told and sees the task as theirs to
			// follow: the claim must rest on a conversation.
			wrote, err := s.st.HasMessageFrom(requester, actorID, projectID)
			if err != nil {
				return Task{}, err
			}
			if !wrote {
				return Task{}, core.Errorf(ECodeUnauthorized, "'%s' never wrote to you in this project, so it cannot be named as who asked for the task", a.Name).
					WithHint("give the conversation it asked in (conversation_id), or leave requester_id out")
			}
		}
	}
	now := s.now().UTC()
	t := Task{ID: newID("tsk_"), ProjectID: projectID, Title: strings.TrimSpace(in.Title), Description: in.Description, Status: StatusTodo,
		Priority: in.Priority, AssigneeID: actorID, CreatedByAgentID: actorID, DependsOn: []string{}, RequestedByAgentID: requester,
		StatusChangedByAgentID: actorID, StatusChangedAt: ptrTime(now), CreatedAt: now, UpdatedAt: now}
	err = s.atomic(func(tx Store, fx *effects) error {
		if in.ConversationID != "" {
			c, err := memberConversation(tx, in.ConversationID, actorID)
			if err != nil {
				return err
			}
			if c.ProjectID != projectID {
				return errConversationNotFound(in.ConversationID)
			}
			if requester != "" && !c.Member(requester) {
				return core.Errorf(ECodeUnauthorized, "'%s' is not a participant of conversation %s, so it cannot have asked for the task there", r.name(requester), c.ID).
					WithHint("name who asked you in that conversation, or leave requester_id out")
			}
			t.RequestedInConversationID = c.ID
		}
		if in.ParentTaskID != "" {
			p, err := getTask(tx, in.ParentTaskID, projectID)
			if err != nil {
				return err
			}
			t.ParentTaskID = p.ID
		}
		if err := tx.CreateTask(t); err != nil {
			return err
		}
		detail := "requested for itself"
		if requester != "" {
			detail = "requested by " + r.name(requester)
		}
		if err := tx.AddTaskEvent(TaskEvent{TaskID: t.ID, Kind: EventCreated, ToStatus: t.Status, AgentID: actorID, Detail: detail,
			ConversationID: t.RequestedInConversationID, CreatedAt: now}); err != nil {
			return err
		}
		if requester != "" && requester != actorID {
			if err := fx.notify(tx, Notification{TargetAgentID: requester, TargetProjectID: projectID, Type: NotifyMessage, Action: ActionTaskChanged,
				TaskID: t.ID, ConversationID: t.RequestedInConversationID, SourceAgentID: actorID,
				Message:     fmt.Sprintf("%s tracks the work you asked for as task %s: %s", actor.Name, t.ID, t.Title),
				Instruction: "The work you asked for in chat is now a tracked task; its status shows on the board."}); err != nil {
				return err
			}
		}
		fx.after(func() { s.boardChanged(projectID, EventCreated, actorID, t.ID) })
		return nil
	})
	if err != nil {
		return Task{}, err
	}
	return t, nil
}

// Report results (report_completed).
const (
	ResultSuccess = "success"
	ResultFailed  = "failed"
	ResultBlocked = "blocked"
)

// ReportCompleted ends actorID's work on a task: success makes it done;
// failed and blocked make it blocked with the summary as the reason, so
// that its creator hears of it. taskID may be empty when actorID has
// exactly one task in progress.
func (s *Service) ReportCompleted(actorID, projectID, taskID, result, summary string) (StatusChange, error) {
	switch result {
	case ResultSuccess, ResultFailed, ResultBlocked:
	default:
		return StatusChange{}, core.Errorf(core.EInvalid, "Invalid result: %s. Valid values: success, failed, blocked", result)
	}
	if err := checkText("summary", summary, MaxDescription, false); err != nil {
		return StatusChange{}, err
	}
	r, err := s.roster()
	if err != nil {
		return StatusChange{}, err
	}
	var out StatusChange
	err = s.atomic(func(tx Store, fx *effects) error {
		var t Task
		if taskID != "" {
			var err error
			if t, err = taskOf(tx, r, actorID, taskID, projectID); err != nil {
				return err
			}
			if t.AssigneeID != actorID {
				return core.Errorf(ECodeUnauthorized, "Task %s is not assigned to you", t.ID)
			}
		} else {
			list, _, err := tx.ListTasks(TaskFilter{ProjectID: projectID, AssigneeID: actorID, Statuses: []string{StatusInProgress}, Limit: 2})
			if err != nil {
				return err
			}
			switch len(list) {
			case 0:
				return core.Errorf(core.EInvalid, "You have no task in progress to report").
					WithHint("call get_my_tasks, or give task_id")
			case 1:
				t = list[0]
			default:
				return core.Errorf(core.EInvalid, "You have several tasks in progress; say which one with task_id")
			}
		}
		to, reason := StatusDone, ""
		if result != ResultSuccess {
			to, reason = StatusBlocked, summary
			if strings.TrimSpace(reason) == "" {
				reason = "reported " + result
			}
			if result == ResultFailed {
				reason = "failed: " + reason
			}
		}
		out.PreviousStatus = t.Status
		t.Result, t.Summary = result, summary
		var err error
		if out.Notified, err = s.applyStatus(tx, fx, r, &t, to, reason, actorID, ""); err != nil {
			return err
		}
		out.Task = t
		return nil
	})
	return out, err
}

// TaskDetail is a task with its history, for the board's task detail.
type TaskDetail struct {
	Task Task `json:"task"`
	// Blockers are the tasks it depends on; Dependents the tasks that
	// depend on it.
	Blockers   []Task      `json:"blockers"`
	Dependents []Task      `json:"dependents"`
	Subtasks   []Task      `json:"subtasks"`
	History    []TaskEvent `json:"history"`
	// ChatModifications are the changes made from chat (seed 001's audit).
	ChatModifications []ChatModification `json:"chatModifications"`
	// Conversations are those it was started from, requested in, or is
	// about.
	Conversations []Conversation `json:"conversations"`
	Executions    []Execution    `json:"executions"`
}

// Detail returns task id with its history.
func (s *Service) Detail(id string) (TaskDetail, error) {
	t, err := getTask(s.st, id, "")
	if err != nil {
		return TaskDetail{}, err
	}
	d := TaskDetail{Task: t, Blockers: []Task{}, Subtasks: []Task{}, Conversations: []Conversation{}}
	for _, b := range t.DependsOn {
		if bt, err := s.st.GetTask(b); err == nil {
			d.Blockers = append(d.Blockers, bt)
		}
	}
	if d.Dependents, err = s.st.Dependents(t.ID); err != nil {
		return TaskDetail{}, err
	}
	if d.Subtasks, _, err = s.st.ListTasks(TaskFilter{ParentID: t.ID}); err != nil {
		return TaskDetail{}, err
	}
	if d.History, err = s.st.TaskEvents(t.ID); err != nil {
		return TaskDetail{}, err
	}
	if d.ChatModifications, err = s.st.ChatModifications(t.ID); err != nil {
		return TaskDetail{}, err
	}
	convIDs := []string{t.StartedFromConversationID, t.RequestedInConversationID}
	for _, m := range d.ChatModifications {
		convIDs = append(convIDs, m.ConversationID)
	}
	convs, err := s.st.ListConversations(ConversationFilter{ProjectID: t.ProjectID})
	if err != nil {
		return TaskDetail{}, err
	}
	for _, c := range convs {
		if c.RelatedTaskID == t.ID || slices.Contains(convIDs, c.ID) {
			d.Conversations = append(d.Conversations, c)
		}
	}
	if d.Executions, _, err = s.st.ListExecutions(ExecutionFilter{TaskID: t.ID}); err != nil {
		return TaskDetail{}, err
	}
	return d, nil
}

// checkDependsOn refuses a depends_on list longer than MaxDependsOn before
// anything is looked up.
func checkDependsOn(where string, refs []string) error {
	if len(refs) > MaxDependsOn {
		return core.Errorf(core.ETooLarge, "%s names %d tasks; at most %d are allowed", where, len(refs), MaxDependsOn).
			WithHint("split the work: a task that waits on this many is a project of its own")
	}
	return nil
}
