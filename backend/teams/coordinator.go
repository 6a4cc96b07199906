package teams

import (
	"fmt"
	"slices"
	"time"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
)

// Health is health_check's view of the team services.
type Health struct {
	Status              string    `json:"status"`
	Database            string    `json:"database"`
	Agents              int       `json:"agents"`
	Projects            int       `json:"projects"`
	OpenTasks           int       `json:"openTasks"`
	ActiveConversations int       `json:"activeConversations"`
	RunningExecutions   int       `json:"runningExecutions"`
	Time                time.Time `json:"time"`
}

// Health reports that the task services are up, with counts of what
// callerID may see: the owner every project's, anyone else only its own
// projects' agents, open tasks, active conversations and runs (found by a
// red team: a coordinator of one project watched another team's workload).
func (s *Service) Health(callerID string) (Health, error) {
	h := Health{Status: "ok", Database: "ok", Time: s.now().UTC()}
	r, err := s.roster()
	if err != nil {
		return Health{}, err
	}
	caller, ok := r.byID[callerID]
	if !ok {
		return Health{}, errAgentNotFound(callerID)
	}
	projects, err := s.dir.Projects()
	if err != nil {
		return Health{}, fmt.Errorf("list projects: %w", err)
	}
	var mine []string
	for _, p := range projects {
		if inProject(caller, p.ID) {
			mine = append(mine, p.ID)
		}
	}
	h.Projects = len(mine)
	for _, a := range r.byID {
		if a.ID == caller.ID || a.Kind == authz.KindOwner || caller.Kind == authz.KindOwner || slices.ContainsFunc(mine, func(p string) bool { return slices.Contains(a.Projects, p) }) {
			h.Agents++
		}
	}
	for _, p := range mine {
		counts, err := s.st.TaskCounts(p)
		if err != nil {
			return Health{}, err
		}
		for st, n := range counts {
			if Open(st) {
				h.OpenTasks += n
			}
		}
		convs, err := s.st.ListConversations(ConversationFilter{ProjectID: p, State: ConversationActive})
		if err != nil {
			return Health{}, err
		}
		h.ActiveConversations += len(convs)
		_, running, err := s.st.ListExecutions(ExecutionFilter{ProjectID: p, Status: ExecRunning, Limit: 1})
		if err != nil {
			return Health{}, err
		}
		h.RunningExecutions += running
	}
	return h, nil
}

// AgentSummary is an agent with what is open for it (list_managed_agents).
type AgentSummary struct {
	Agent               authz.Agent `json:"agent"`
	InProgress          int         `json:"inProgress"`
	Todo                int         `json:"todo"`
	Blocked             int         `json:"blocked"`
	Backlog             int         `json:"backlog"`
	PendingMessages     int         `json:"pendingMessages"`
	UnreadNotifications int         `json:"unreadNotifications"`
	RunningExecutionID  string      `json:"runningExecutionId"`
}

// ManagedAgents lists the agents Airlock manages for a coordinator: every
// agent but the caller and the owner (the person) in projectID when given,
// else in the caller's projects. A coordinator starts and stops agent
// processes, whatever branch of the hierarchy they sit in, but only in the
// projects it works in, like every agent (found by a seed audit: a
// coordinator of one project read another's agents and tasks).
func (s *Service) ManagedAgents(callerID, projectID string) ([]AgentSummary, error) {
	agents, err := s.dir.Agents()
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(agents, func(a authz.Agent) bool { return a.ID == callerID })
	if i < 0 {
		return nil, errAgentNotFound(callerID)
	}
	caller := agents[i]
	if projectID, err = s.coordinatorProject(caller, projectID); err != nil {
		return nil, err
	}
	out := []AgentSummary{}
	for _, a := range agents {
		if a.ID == callerID || a.Kind == authz.KindOwner || !inProject(a, projectID) {
			continue
		}
		a.Projects = sharedProjects(caller, a)
		sum, err := s.summarize(a, projectID)
		if err != nil {
			return nil, err
		}
		out = append(out, sum)
	}
	return out, nil
}

func (s *Service) summarize(a authz.Agent, projectID string) (AgentSummary, error) {
	sum := AgentSummary{Agent: a}
	tasks, _, err := s.st.ListTasks(TaskFilter{ProjectID: projectID, AssigneeID: a.ID, Statuses: []string{StatusInProgress, StatusTodo, StatusBlocked, StatusBacklog}})
	if err != nil {
		return AgentSummary{}, err
	}
	for _, t := range tasks {
		switch t.Status {
		case StatusInProgress:
			sum.InProgress++
		case StatusTodo:
			sum.Todo++
		case StatusBlocked:
			sum.Blocked++
		case StatusBacklog:
			sum.Backlog++
		}
	}
	if sum.PendingMessages, err = s.st.CountPending(a.ID, projectID); err != nil {
		return AgentSummary{}, err
	}
	ns, err := s.st.UnreadNotifications(a.ID, projectID)
	if err != nil {
		return AgentSummary{}, err
	}
	sum.UnreadNotifications = len(ns)
	// Its run in this project: a run for another project's task is not the
	// coordinator's to see, nor to stop (found by a red team: an agent in
	// two projects running for the other one was to be stopped, as nothing
	// was open for it here).
	runs, _, err := s.st.ListExecutions(ExecutionFilter{AgentID: a.ID, ProjectID: projectID, Status: ExecRunning, Limit: 1})
	if err != nil {
		return AgentSummary{}, err
	}
	if len(runs) > 0 {
		sum.RunningExecutionID = runs[0].ID
	}
	return sum, nil
}

// coordinatorProject is the project a coordinator's tool works in: the
// one asked for, which the caller must be in, else the caller's only one.
// A coordinator of several projects names one: an agent's work in a
// project the caller is not in (its tasks, messages, runs) is not the
// caller's to see (found by a review: an agent in two projects showed its
// work in both). The owner, in every project, may ask across them all ("").
func (s *Service) coordinatorProject(caller authz.Agent, projectID string) (string, error) {
	if projectID != "" {
		if !inProject(caller, projectID) {
			return "", errNotAssigned(caller, projectID)
		}
		return projectID, nil
	}
	if caller.Kind == authz.KindOwner {
		return "", nil
	}
	switch len(caller.Projects) {
	case 1:
		return caller.Projects[0], nil
	case 0:
		return "", core.Errorf(ECodeNotAssigned, "Agent '%s' (%s) is assigned to no project", caller.Name, caller.ID).
			WithHint(fmt.Sprintf("put agent '%s' on a project: Agents screen, Projects tab", caller.Name))
	}
	return "", core.Errorf(ECodeProjectRequired, "Agent '%s' is assigned to %d projects; name one with project_id", caller.Name, len(caller.Projects)).
		WithHint("give project_id, or connect with ?project=NAME")
}

// sharedProjects are the projects of a that the caller is in (all of them
// for the owner).
func sharedProjects(caller, a authz.Agent) []string {
	if caller.Kind == authz.KindOwner {
		return a.Projects
	}
	var out []string
	for _, p := range a.Projects {
		if slices.Contains(caller.Projects, p) {
			out = append(out, p)
		}
	}
	return out
}

// shareProject reports whether a coordinator (or the owner, in every
// project) works in a project of agent a.
func shareProject(caller, a authz.Agent) bool {
	if caller.Kind == authz.KindOwner {
		return true
	}
	for _, p := range a.Projects {
		if slices.Contains(caller.Projects, p) {
			return true
		}
	}
	return false
}

// Agent actions get_agent_action gives a coordinator.
const (
	AgentStart       = "start"
	AgentKeepRunning = "keep_running"
	AgentStop        = "stop"
	AgentNone        = "none"
)

// AgentAction is what a coordinator should do about one agent.
type AgentAction struct {
	AgentID string `json:"agentId"`
	Action  string `json:"action"`
	// Purpose is the session purpose to start the agent with.
	Purpose     string       `json:"purpose,omitempty"`
	TaskID      string       `json:"taskId,omitempty"`
	Reason      string       `json:"reason"`
	Summary     AgentSummary `json:"summary"`
	ExecutionID string       `json:"executionId,omitempty"`
}

// AgentActionFor decides, for callerID (a coordinator or the owner), what
// to do about agent agentRef: start it (with a task or chat session), keep
// it running, stop it, or leave it (a person is never started).
func (s *Service) AgentActionFor(callerID, agentRef, projectID string) (AgentAction, error) {
	if agentRef == "" {
		return AgentAction{}, core.Errorf(core.EInvalid, "agent_id is required")
	}
	r, err := s.roster()
	if err != nil {
		return AgentAction{}, err
	}
	a, err := r.find(agentRef)
	if err != nil {
		return AgentAction{}, err
	}
	caller, ok := r.byID[callerID]
	if !ok {
		return AgentAction{}, errAgentNotFound(callerID)
	}
	if a.ID == callerID || a.Kind == authz.KindOwner || !shareProject(caller, a) {
		return AgentAction{}, core.Errorf(ECodeUnauthorized, "Agent '%s' is not managed by '%s'", a.Name, caller.Name).
			WithHint("a coordinator manages the agents of the projects it is assigned to; list_managed_agents lists them")
	}
	if projectID, err = s.coordinatorProject(caller, projectID); err != nil {
		return AgentAction{}, err
	}
	if !inProject(a, projectID) {
		return AgentAction{}, errNotAssigned(a, projectID)
	}
	a.Projects = sharedProjects(caller, a)
	sum, err := s.summarize(a, projectID)
	if err != nil {
		return AgentAction{}, err
	}
	out := AgentAction{AgentID: a.ID, Summary: sum, ExecutionID: sum.RunningExecutionID}
	running := sum.RunningExecutionID != ""
	ready, _, err := s.st.ListTasks(TaskFilter{ProjectID: projectID, AssigneeID: a.ID, Statuses: []string{StatusInProgress, StatusTodo}, Limit: 20})
	if err != nil {
		return AgentAction{}, err
	}
	var startable *Task
	for i, t := range ready {
		if t.Status == StatusInProgress {
			startable = &ready[i]
			break
		}
		if b, err := openBlockers(s.st, t); err == nil && len(b) == 0 && startable == nil {
			startable = &ready[i]
		} else if err != nil {
			return AgentAction{}, err
		}
	}
	// A call to the chat is answered in a chat session; any other
	// notification waits for the task session.
	ns, err := s.st.UnreadNotifications(a.ID, projectID)
	if err != nil {
		return AgentAction{}, err
	}
	taskNotes, chatNotes := 0, 0
	for _, n := range ns {
		if n.Type == NotifyMessage && n.Action == ActionCheckChat {
			chatNotes++
		} else {
			taskNotes++
		}
	}
	work := startable != nil || taskNotes > 0
	chat := sum.PendingMessages > 0 || chatNotes > 0
	switch {
	case a.Human:
		out.Action, out.Reason = AgentNone, "the agent is a person: Airlock does not start people"
	case a.Status != authz.StatusActive && running:
		out.Action, out.Reason = AgentStop, "the agent is "+a.Status
	case a.Status != authz.StatusActive:
		out.Action, out.Reason = AgentNone, "the agent is "+a.Status
	case running && (work || chat):
		out.Action, out.Reason = AgentKeepRunning, "it is running and has work"
	case running:
		out.Action, out.Reason = AgentStop, "it is running but nothing is open for it"
	case work:
		out.Action, out.Purpose, out.Reason = AgentStart, core.PurposeTask, "a task is ready for it"
		if startable != nil {
			out.TaskID = startable.ID
		} else {
			out.Reason = "notifications wait for its task session"
		}
	case chat:
		out.Action, out.Purpose = AgentStart, core.PurposeChat
		out.Reason = fmt.Sprintf("%d message(s) wait for it in chat", max(sum.PendingMessages, chatNotes))
	default:
		out.Action, out.Reason = AgentNone, "nothing is open for it"
	}
	return out, nil
}
