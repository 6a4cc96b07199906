package teams

import (
	"slices"

	"github.com/airlock-dev/airlock/backend/authz"
)

// Views for people: the board's cards and the chat's conversation list,
// with agent names filled in. The Board and Chat screens and the CLI show
// the same thing from the same code.

// TaskCard is a task as the board shows it: with the names of the agents
// it refers to and how many of its dependencies are still open.
type TaskCard struct {
	Task
	AssigneeName        string `json:"assigneeName"`
	CreatorName         string `json:"creatorName"`
	StatusChangedByName string `json:"statusChangedByName"`
	OpenBlockers        int    `json:"openBlockers"`
}

// Cards returns a project's tasks as cards in list order (the most
// pressing first); assigneeID, when given, keeps that agent's only.
func (s *Service) Cards(projectID, assigneeID string) ([]TaskCard, error) {
	r, err := s.roster()
	if err != nil {
		return nil, err
	}
	all, _, err := s.st.ListTasks(TaskFilter{ProjectID: projectID})
	if err != nil {
		return nil, err
	}
	status := make(map[string]string, len(all))
	for _, t := range all {
		status[t.ID] = t.Status
	}
	out := []TaskCard{}
	for _, t := range all {
		if assigneeID == "" || t.AssigneeID == assigneeID {
			out = append(out, r.card(t, status))
		}
	}
	return out, nil
}

// Card returns task t as a card.
func (s *Service) Card(t Task) (TaskCard, error) {
	r, err := s.roster()
	if err != nil {
		return TaskCard{}, err
	}
	status := map[string]string{}
	for _, d := range t.DependsOn {
		if dt, err := s.st.GetTask(d); err == nil {
			status[d] = dt.Status
		}
	}
	return r.card(t, status), nil
}

func (r roster) card(t Task, status map[string]string) TaskCard {
	c := TaskCard{Task: t}
	if t.AssigneeID != "" {
		c.AssigneeName = r.name(t.AssigneeID)
	}
	if t.CreatedByAgentID != "" {
		c.CreatorName = r.name(t.CreatedByAgentID)
	}
	if t.StatusChangedByAgentID != "" {
		c.StatusChangedByName = r.name(t.StatusChangedByAgentID)
	}
	for _, d := range t.DependsOn {
		if st, ok := status[d]; ok && Open(st) {
			c.OpenBlockers++
		}
	}
	return c
}

// ConversationSummary is a conversation as the chat list shows it to one
// viewer.
type ConversationSummary struct {
	Conversation
	// Unread counts the messages the viewer has not read.
	Unread      int      `json:"unread"`
	LastMessage *Message `json:"lastMessage"`
	// RelatedTaskTitle is the title of the task the conversation is about
	// ("" when none, or when it is gone).
	RelatedTaskTitle string `json:"relatedTaskTitle,omitempty"`
}

// Summaries returns the conversations f selects as viewerID sees them in a
// list, the most recently active first.
func (s *Service) Summaries(viewerID string, f ConversationFilter) ([]ConversationSummary, error) {
	convs, err := s.st.ListConversations(f)
	if err != nil {
		return nil, err
	}
	return s.summarizeConversations(viewerID, convs)
}

func (s *Service) summarizeConversations(viewerID string, convs []Conversation) ([]ConversationSummary, error) {
	ids := make([]string, len(convs))
	for i, c := range convs {
		ids[i] = c.ID
	}
	last, err := s.st.LastMessages(ids)
	if err != nil {
		return nil, err
	}
	unread, err := s.st.UnreadCounts(viewerID, ids)
	if err != nil {
		return nil, err
	}
	out := make([]ConversationSummary, len(convs))
	for i, c := range convs {
		out[i] = ConversationSummary{Conversation: c, Unread: unread[c.ID]}
		if m, ok := last[c.ID]; ok {
			out[i].LastMessage = &m
		}
		if c.RelatedTaskID != "" {
			if t, err := s.st.GetTask(c.RelatedTaskID); err == nil {
				out[i].RelatedTaskTitle = t.Title
			}
		}
	}
	return out, nil
}

// Summary returns conversation c as viewerID sees it in a list.
func (s *Service) Summary(viewerID string, c Conversation) (ConversationSummary, error) {
	out, err := s.summarizeConversations(viewerID, []Conversation{c})
	if err != nil {
		return ConversationSummary{}, err
	}
	return out[0], nil
}

// Project returns the project with id or name ref (project_not_found
// otherwise).
func (s *Service) Project(ref string) (authz.Project, error) { return s.checkProject(ref) }

// ProjectSummary is a project with its task counts by status.
type ProjectSummary struct {
	authz.Project
	Counts map[string]int `json:"counts"`
	// Agents are the ids of the agents assigned to it.
	Agents []string `json:"agents"`
}

// ProjectSummaries returns every project with its task counts and agents.
func (s *Service) ProjectSummaries() ([]ProjectSummary, error) {
	projects, err := s.dir.Projects()
	if err != nil {
		return nil, err
	}
	agents, err := s.dir.Agents()
	if err != nil {
		return nil, err
	}
	out := make([]ProjectSummary, 0, len(projects))
	for _, p := range projects {
		counts, err := s.st.TaskCounts(p.ID)
		if err != nil {
			return nil, err
		}
		sum := ProjectSummary{Project: p, Counts: counts, Agents: []string{}}
		for _, a := range agents {
			if slices.Contains(a.Projects, p.ID) {
				sum.Agents = append(sum.Agents, a.ID)
			}
		}
		out = append(out, sum)
	}
	return out, nil
}
