package api

import (
	"slices"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/teams"
)

// Board is the Board screen: a kanban per project, the task detail with its
// history, and what the person does there — create, edit, assign and move
// tasks. The person acts as the owner, the top of the hierarchy: every
// change is recorded as the owner's. Live updates come as board:changed
// and execution:changed events.
type Board struct{ d Deps }

// ProjectSummary is a project with its task counts by status.
type ProjectSummary struct {
	authz.Project
	Counts map[string]int `json:"counts"`
	// Agents are the ids of the agents assigned to it.
	Agents []string `json:"agents"`
}

// BoardAgent is an agent as the board names it (filters, assignment).
type BoardAgent struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	ParentID string `json:"parentId"`
	Status   string `json:"status"`
}

// TaskCard is a task on the board, with the names of the agents it refers
// to and how many of its dependencies are still open.
type TaskCard struct {
	teams.Task
	AssigneeName        string `json:"assigneeName"`
	CreatorName         string `json:"creatorName"`
	StatusChangedByName string `json:"statusChangedByName"`
	OpenBlockers        int    `json:"openBlockers"`
}

// BoardColumn is one status's tasks, in list order (the most urgent
// first).
type BoardColumn struct {
	Status string     `json:"status"`
	Tasks  []TaskCard `json:"tasks"`
}

// BoardView is one project's board.
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
func (b *Board) Projects() ([]ProjectSummary, error) {
	projects, err := b.d.Authz.Projects()
	if err != nil {
		return nil, err
	}
	agents, err := b.d.Authz.Agents()
	if err != nil {
		return nil, err
	}
	out := make([]ProjectSummary, 0, len(projects))
	for _, p := range projects {
		counts, err := b.d.Teams.TaskCounts(p.ID)
		if err != nil {
			return nil, err
		}
		s := ProjectSummary{Project: p, Counts: counts, Agents: []string{}}
		for _, a := range agents {
			if slices.Contains(a.Projects, p.ID) {
				s.Agents = append(s.Agents, a.ID)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// names maps agent ids to names.
func (b *Board) names() (map[string]string, []authz.Agent, error) {
	agents, err := b.d.Authz.Agents()
	if err != nil {
		return nil, nil, err
	}
	m := make(map[string]string, len(agents))
	for _, a := range agents {
		m[a.ID] = a.Name
	}
	return m, agents, nil
}

func card(t teams.Task, names map[string]string, status map[string]string) TaskCard {
	c := TaskCard{Task: t, AssigneeName: names[t.AssigneeID], CreatorName: names[t.CreatedByAgentID], StatusChangedByName: names[t.StatusChangedByAgentID]}
	for _, d := range t.DependsOn {
		if st, ok := status[d]; ok && teams.Open(st) {
			c.OpenBlockers++
		}
	}
	return c
}

// Get returns a project's board; assigneeID, when given, keeps only that
// agent's tasks.
func (b *Board) Get(projectID, assigneeID string) (BoardView, error) {
	var p authz.Project
	projects, err := b.d.Authz.Projects()
	if err != nil {
		return BoardView{}, err
	}
	for _, x := range projects {
		if x.ID == projectID || x.Name == projectID {
			p = x
		}
	}
	if p.ID == "" {
		return BoardView{}, core.Errorf(teams.ECodeProjectNotFound, "Project not found: %s", projectID)
	}
	names, agents, err := b.names()
	if err != nil {
		return BoardView{}, err
	}
	all, _, err := b.d.Teams.Tasks(teams.TaskFilter{ProjectID: p.ID})
	if err != nil {
		return BoardView{}, err
	}
	status := make(map[string]string, len(all))
	for _, t := range all {
		status[t.ID] = t.Status
	}
	v := BoardView{Project: p, Agents: []BoardAgent{}, Transitions: map[string][]string{}}
	cols := map[string]*BoardColumn{}
	for _, st := range teams.Statuses {
		v.Columns = append(v.Columns, BoardColumn{Status: st, Tasks: []TaskCard{}})
		v.Transitions[st] = teams.Transitions(st)
	}
	for i := range v.Columns {
		cols[v.Columns[i].Status] = &v.Columns[i]
	}
	for _, t := range all {
		if assigneeID != "" && t.AssigneeID != assigneeID {
			continue
		}
		if c := cols[t.Status]; c != nil {
			c.Tasks = append(c.Tasks, card(t, names, status))
		}
	}
	for _, a := range agents {
		if a.Kind == authz.KindOwner || slices.Contains(a.Projects, p.ID) {
			v.Agents = append(v.Agents, BoardAgent{ID: a.ID, Name: a.Name, Kind: a.Kind, ParentID: a.ParentID, Status: a.Status})
		}
	}
	return v, nil
}

func (b *Board) cardOf(t teams.Task) (TaskCard, error) {
	names, _, err := b.names()
	if err != nil {
		return TaskCard{}, err
	}
	status := map[string]string{}
	for _, d := range t.DependsOn {
		if dt, err := b.d.Teams.Task(d); err == nil {
			status[d] = dt.Status
		}
	}
	return card(t, names, status), nil
}

// Move changes a task's status, as the owner: the state machine and the
// task's dependencies still apply; blocked takes a reason (default: the
// owner blocked it on the board).
func (b *Board) Move(taskID, status, reason string) (TaskCard, error) {
	if status == teams.StatusBlocked && reason == "" {
		reason = "blocked by the owner on the board"
	}
	ch, err := b.d.Teams.SetStatus(authz.OwnerID, "", taskID, status, reason)
	if err != nil {
		return TaskCard{}, err
	}
	return b.cardOf(ch.Task)
}

// Create adds a task to a project, created by the owner.
func (b *Board) Create(projectID string, in teams.TaskInput) (TaskCard, error) {
	p, err := b.project(projectID)
	if err != nil {
		return TaskCard{}, err
	}
	ts, err := b.d.Teams.CreateTasks(authz.OwnerID, p.ID, []teams.TaskInput{in})
	if err != nil {
		return TaskCard{}, err
	}
	return b.cardOf(ts[0])
}

func (b *Board) project(ref string) (authz.Project, error) {
	projects, err := b.d.Authz.Projects()
	if err != nil {
		return authz.Project{}, err
	}
	for _, p := range projects {
		if p.ID == ref || p.Name == ref {
			return p, nil
		}
	}
	return authz.Project{}, core.Errorf(teams.ECodeProjectNotFound, "Project not found: %s", ref)
}

// Update changes the given fields of a task, as the owner.
func (b *Board) Update(taskID string, up teams.TaskUpdate) (TaskCard, error) {
	t, _, err := b.d.Teams.EditTask(authz.OwnerID, "", taskID, up)
	if err != nil {
		return TaskCard{}, err
	}
	return b.cardOf(t)
}

// Assign gives a task to an agent (empty: takes it away), as the owner.
func (b *Board) Assign(taskID, agentID string) (TaskCard, error) {
	res, err := b.d.Teams.AssignTask(authz.OwnerID, "", taskID, agentID)
	if err != nil {
		return TaskCard{}, err
	}
	return b.cardOf(res.Task)
}

// TaskDetailView is a task with its history, and the names of the agents
// it mentions.
type TaskDetailView struct {
	teams.TaskDetail
	Card TaskCard `json:"card"`
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
	names, _, err := b.names()
	if err != nil {
		return TaskDetailView{}, err
	}
	status := map[string]string{}
	for _, bt := range d.Blockers {
		status[bt.ID] = bt.Status
	}
	return TaskDetailView{TaskDetail: d, Card: card(d.Task, names, status), AgentNames: names}, nil
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
