package api

import (
	"slices"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/teams"
)

// Board is the Board screen: a kanban per project, the task detail with its
// history, and what the person does there — create, edit, assign and move
// tasks. The person acts as the owner, the top of the hierarchy: every
// change is recorded as the owner's. Live updates come as board:changed
// and execution:changed events.
type Board struct{ d Deps }

// BoardAgent is an agent as the board names it (filters, assignment).
type BoardAgent struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	ParentID string `json:"parentId"`
	Status   string `json:"status"`
}

// BoardColumn is one status's tasks, in list order (the most urgent
// first).
type BoardColumn struct {
	Status string           `json:"status"`
	Tasks  []teams.TaskCard `json:"tasks"`
}

// BoardView is one project's board. Its cards carry no description: the
// task's detail (Detail) has it.
type BoardView struct {
	Project authz.Project `json:"project"`
	// Columns are every status, board order: backlog, todo, in_progress,
	// blocked, done, cancelled.
	Columns []BoardColumn `json:"columns"`
	// Agents are the project's agents (and the owner).
	Agents []BoardAgent `json:"agents"`
	// Transitions are the moves the state machine allows, by status.
	Transitions map[string][]string `json:"transitions"`
}

// Projects returns every project with its task counts.
func (b *Board) Projects() ([]teams.ProjectSummary, error) { return b.d.Teams.ProjectSummaries() }

// Get returns a project's board; assigneeID, when given, keeps only that
// agent's tasks.
func (b *Board) Get(projectID, assigneeID string) (BoardView, error) {
	p, err := b.d.Teams.Project(projectID)
	if err != nil {
		return BoardView{}, err
	}
	cards, err := b.d.Teams.Cards(p.ID, assigneeID)
	if err != nil {
		return BoardView{}, err
	}
	agents, err := b.d.Authz.Agents()
	if err != nil {
		return BoardView{}, err
	}
	v := BoardView{Project: p, Agents: []BoardAgent{}, Transitions: map[string][]string{}}
	cols := map[string]int{}
	for i, st := range teams.Statuses {
		v.Columns = append(v.Columns, BoardColumn{Status: st, Tasks: []teams.TaskCard{}})
		v.Transitions[st] = teams.Transitions(st)
		cols[st] = i
	}
	for _, c := range cards {
		// A card shows no description (the task's detail loads it), and
		// the board is read whole on every change: descriptions of up to
		// 32 KB each made one worker call add megabytes to every reload
		// (found by a red team).
		c.Description = ""
		if i, ok := cols[c.Status]; ok {
			v.Columns[i].Tasks = append(v.Columns[i].Tasks, c)
		}
	}
	for _, a := range agents {
		if a.Kind == authz.KindOwner || slices.Contains(a.Projects, p.ID) {
			v.Agents = append(v.Agents, BoardAgent{ID: a.ID, Name: a.Name, Kind: a.Kind, ParentID: a.ParentID, Status: a.Status})
		}
	}
	return v, nil
}

// Move changes a task's status, as the owner: the state machine and the
// task's dependencies still apply; blocked takes a reason (default: the
// owner blocked it on the board).
func (b *Board) Move(taskID, status, reason string) (teams.TaskCard, error) {
	if status == teams.StatusBlocked && reason == "" {
		reason = "blocked by the owner on the board"
	}
	ch, err := b.d.Teams.SetStatus(authz.OwnerID, "", taskID, status, reason)
	if err != nil {
		return teams.TaskCard{}, err
	}
	return b.d.Teams.Card(ch.Task)
}

// Create adds a task to a project, created by the owner.
func (b *Board) Create(projectID string, in teams.TaskInput) (teams.TaskCard, error) {
	p, err := b.d.Teams.Project(projectID)
	if err != nil {
		return teams.TaskCard{}, err
	}
	ts, err := b.d.Teams.CreateTasks(authz.OwnerID, p.ID, []teams.TaskInput{in})
	if err != nil {
		return teams.TaskCard{}, err
	}
	return b.d.Teams.Card(ts[0])
}

// Update changes the given fields of a task, as the owner.
func (b *Board) Update(taskID string, up teams.TaskUpdate) (teams.TaskCard, error) {
	t, _, err := b.d.Teams.EditTask(authz.OwnerID, "", taskID, up)
	if err != nil {
		return teams.TaskCard{}, err
	}
	return b.d.Teams.Card(t)
}

// Assign gives a task to an agent (empty: takes it away), as the owner.
func (b *Board) Assign(taskID, agentID string) (teams.TaskCard, error) {
	res, err := b.d.Teams.AssignTask(authz.OwnerID, "", taskID, agentID)
	if err != nil {
		return teams.TaskCard{}, err
	}
	return b.d.Teams.Card(res.Task)
}

// TaskDetailView is a task with its history, and the names of the agents
// it mentions.
type TaskDetailView struct {
	teams.TaskDetail
	Card teams.TaskCard `json:"card"`
	// AgentNames maps every agent id to its name.
	AgentNames map[string]string `json:"agentNames"`
}

// Detail returns a task with its status changes (and who made them), its
// chat-driven modifications, its linked conversations and its executions.
func (b *Board) Detail(taskID string) (TaskDetailView, error) {
	d, err := b.d.Teams.Detail(taskID)
	if err != nil {
		return TaskDetailView{}, err
	}
	card, err := b.d.Teams.Card(d.Task)
	if err != nil {
		return TaskDetailView{}, err
	}
	agents, err := b.d.Authz.Agents()
	if err != nil {
		return TaskDetailView{}, err
	}
	names := make(map[string]string, len(agents))
	for _, a := range agents {
		names[a.ID] = a.Name
	}
	return TaskDetailView{TaskDetail: d, Card: card, AgentNames: names}, nil
}

// ExecutionLogView is the tail of an execution's log.
type ExecutionLogView struct {
	Execution teams.Execution `json:"execution"`
	teams.LogChunk
}

// Log returns the last tail lines (default 100) of an execution's log.
func (b *Board) Log(executionID string, tail int) (ExecutionLogView, error) {
	var tp *int
	if tail > 0 {
		tp = &tail
	}
	e, chunk, err := b.d.Teams.ReadLog(authz.OwnerID, executionID, tp, nil)
	if err != nil {
		return ExecutionLogView{}, err
	}
	if chunk.Lines == nil {
		chunk.Lines = []string{}
	}
	return ExecutionLogView{Execution: e, LogChunk: chunk}, nil
}
