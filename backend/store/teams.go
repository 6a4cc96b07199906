package store

import (
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/teams"
)

var _ teams.Store = (*Teams)(nil)

type taskRow struct {
	ID                        string `gorm:"primaryKey"`
	ProjectID                 string
	Title                     string
	Description               string
	Status                    string
	Priority                  string
	StatusRank                int
	PriorityRank              int
	AssigneeID                *string
	CreatedByAgentID          *string
	ParentTaskID              *string
	BlockedReason             string
	StatusChangedByAgentID    *string
	StatusChangedAt           *time.Time
	StartedFromConversationID string
	RequestedInConversationID string
	RequestedByAgentID        string
	Result                    string
	Summary                   string
	CreatedAt                 time.Time `gorm:"autoCreateTime:false"`
	UpdatedAt                 time.Time `gorm:"autoUpdateTime:false"`
	CompletedAt               *time.Time
}

func (taskRow) TableName() string { return "tasks" }

type dependencyRow struct {
	TaskID          string `gorm:"primaryKey"`
	DependsOnTaskID string `gorm:"primaryKey"`
}

func (dependencyRow) TableName() string { return "task_dependencies" }

type taskEventRow struct {
	ID             int64 `gorm:"primaryKey;autoIncrement"`
	TaskID         string
	Kind           string
	FromStatus     string
	ToStatus       string
	Fields         string
	AgentID        string
	Detail         string
	ConversationID string
	CreatedAt      time.Time `gorm:"autoCreateTime:false"`
}

func (taskEventRow) TableName() string { return "task_events" }

type chatModRow struct {
	ID             string `gorm:"primaryKey"`
	TaskID         string
	ConversationID string
	RequesterID    string
	ExecutorID     string
	Operation      string
	Fields         string
	Warning        bool
	WarningReason  string
	CreatedAt      time.Time `gorm:"autoCreateTime:false"`
}

func (chatModRow) TableName() string { return "task_chat_modifications" }

type conversationRow struct {
	ID            string `gorm:"primaryKey"`
	ProjectID     string
	Topic         string
	State         string
	InitiatorID   string
	RelatedTaskID *string
	CreatedAt     time.Time `gorm:"autoCreateTime:false"`
	UpdatedAt     time.Time `gorm:"autoUpdateTime:false"`
	EndedAt       *time.Time
	EndedBy       string
}

func (conversationRow) TableName() string { return "conversations" }

type participantRow struct {
	ConversationID string `gorm:"primaryKey"`
	AgentID        string `gorm:"primaryKey"`
	Role           string
	LastReadSeq    int64
	JoinedAt       time.Time
	// AgentName is read with a join, never written.
	AgentName string `gorm:"->;-:migration"`
}

func (participantRow) TableName() string { return "conversation_participants" }

type messageRow struct {
	Seq            int64 `gorm:"primaryKey;autoIncrement"`
	ID             string
	ConversationID string
	SenderID       string
	Content        string
	InReplyTo      string
	CreatedAt      time.Time `gorm:"autoCreateTime:false"`
	// SenderName is read with a join, never written.
	SenderName string `gorm:"->;-:migration"`
}

func (messageRow) TableName() string { return "chat_messages" }

type notificationRow struct {
	ID              string `gorm:"primaryKey"`
	TargetAgentID   string
	TargetProjectID *string
	Type            string
	Action          string
	TaskID          string
	ConversationID  string
	Message         string
	Instruction     string
	SourceAgentID   string
	CreatedAt       time.Time `gorm:"autoCreateTime:false"`
	ReadAt          *time.Time
}

func (notificationRow) TableName() string { return "agent_notifications" }

type executionRow struct {
	ID          string `gorm:"primaryKey"`
	TaskID      string
	AgentID     string
	ProjectID   string
	Status      string
	StartedAt   time.Time
	CompletedAt *time.Time
	ExitCode    *int
	LogFilePath string
}

func (executionRow) TableName() string { return "execution_logs" }

// Teams is the repository of tasks, conversations, notifications and
// executions.
type Teams struct{ db *gorm.DB }

// NewTeams returns the repository over db.
func NewTeams(db *DB) *Teams { return &Teams{db: db.DB} }

// Atomic runs fn in one transaction (BEGIN IMMEDIATE: writers queue up, so
// two claims never read the same unread rows).
func (s *Teams) Atomic(fn func(teams.Store) error) error {
	return s.db.Transaction(func(tx *gorm.DB) error { return fn(&Teams{db: tx}) })
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func toTaskRow(t teams.Task) taskRow {
	return taskRow{ID: t.ID, ProjectID: t.ProjectID, Title: t.Title, Description: t.Description, Status: t.Status, Priority: t.Priority,
		StatusRank: teams.StatusRank(t.Status), PriorityRank: teams.PriorityRank(t.Priority), AssigneeID: strPtr(t.AssigneeID),
		CreatedByAgentID: strPtr(t.CreatedByAgentID), ParentTaskID: strPtr(t.ParentTaskID), BlockedReason: t.BlockedReason,
		StatusChangedByAgentID: strPtr(t.StatusChangedByAgentID), StatusChangedAt: utc(t.StatusChangedAt),
		StartedFromConversationID: t.StartedFromConversationID, RequestedInConversationID: t.RequestedInConversationID,
		RequestedByAgentID: t.RequestedByAgentID, Result: t.Result, Summary: t.Summary, CreatedAt: t.CreatedAt.UTC(),
		UpdatedAt: t.UpdatedAt.UTC(), CompletedAt: utc(t.CompletedAt)}
}

func (r taskRow) task() teams.Task {
	return teams.Task{ID: r.ID, ProjectID: r.ProjectID, Title: r.Title, Description: r.Description, Status: r.Status, Priority: r.Priority,
		AssigneeID: deref(r.AssigneeID), CreatedByAgentID: deref(r.CreatedByAgentID), ParentTaskID: deref(r.ParentTaskID), DependsOn: []string{},
		BlockedReason: r.BlockedReason, StatusChangedByAgentID: deref(r.StatusChangedByAgentID), StatusChangedAt: utc(r.StatusChangedAt),
		StartedFromConversationID: r.StartedFromConversationID, RequestedInConversationID: r.RequestedInConversationID,
		RequestedByAgentID: r.RequestedByAgentID, Result: r.Result, Summary: r.Summary, CreatedAt: r.CreatedAt.UTC(),
		UpdatedAt: r.UpdatedAt.UTC(), CompletedAt: utc(r.CompletedAt)}
}

// CreateTask inserts t and its dependencies.
func (s *Teams) CreateTask(t teams.Task) error {
	row := toTaskRow(t)
	if err := s.db.Create(&row).Error; err != nil {
		return translate(err, "task "+t.ID)
	}
	return s.SetDependencies(t.ID, t.DependsOn)
}

// GetTask returns task id with its dependencies.
func (s *Teams) GetTask(id string) (teams.Task, error) {
	var row taskRow
	err := s.db.Where("id = ?", id).Take(&row).Error
	if isNotFound(err) {
		return teams.Task{}, core.Errorf(core.ENotFound, "Task not found: %s", id)
	}
	if err != nil {
		return teams.Task{}, fmt.Errorf("read task %s: %w", id, err)
	}
	out := []teams.Task{row.task()}
	if err := s.fillDependencies(out); err != nil {
		return teams.Task{}, err
	}
	return out[0], nil
}

// UpdateTask writes every field of t but its dependencies.
func (s *Teams) UpdateTask(t teams.Task) error {
	row := toTaskRow(t)
	res := s.db.Model(&taskRow{}).Where("id = ?", t.ID).Select("*").Omit("id", "created_at").Updates(&row)
	if res.Error != nil {
		return translate(res.Error, "task "+t.ID)
	}
	if res.RowsAffected == 0 {
		return core.Errorf(core.ENotFound, "Task not found: %s", t.ID)
	}
	return nil
}

func (s *Teams) taskQuery(f teams.TaskFilter) *gorm.DB {
	q := s.db.Model(&taskRow{})
	if f.AssigneeID != "" {
		q = q.Where("assignee_id = ?", f.AssigneeID)
	}
	if f.ProjectID != "" {
		q = q.Where("project_id = ?", f.ProjectID)
	}
	if f.CreatorID != "" {
		q = q.Where("created_by_agent_id = ?", f.CreatorID)
	}
	if f.RequesterID != "" {
		q = q.Where("requested_by_agent_id = ?", f.RequesterID)
	}
	if f.ParentID != "" {
		q = q.Where("parent_task_id = ?", f.ParentID)
	}
	if len(f.Statuses) > 0 {
		q = q.Where("status IN ?", f.Statuses)
	}
	return q
}

// ListTasks returns the tasks f selects in list order and their number.
func (s *Teams) ListTasks(f teams.TaskFilter) ([]teams.Task, int, error) {
	var rows []taskRow
	q := s.taskQuery(f).Order("status_rank, priority_rank, created_at, id")
	if f.Limit > 0 {
		q = q.Limit(f.Limit)
	}
	if f.Offset > 0 {
		q = q.Offset(f.Offset)
	}
	if err := q.Find(&rows).Error; err != nil {
		return nil, 0, fmt.Errorf("list tasks: %w", err)
	}
	total := int64(len(rows))
	if f.Limit > 0 && (len(rows) == f.Limit || f.Offset > 0) {
		if err := s.taskQuery(f).Count(&total).Error; err != nil {
			return nil, 0, fmt.Errorf("count tasks: %w", err)
		}
	}
	out := make([]teams.Task, len(rows))
	for i, r := range rows {
		out[i] = r.task()
	}
	if err := s.fillDependencies(out); err != nil {
		return nil, 0, err
	}
	return out, int(total), nil
}

// fillDependencies reads the dependencies of ts in one query.
func (s *Teams) fillDependencies(ts []teams.Task) error {
	if len(ts) == 0 {
		return nil
	}
	ids := make([]string, len(ts))
	idx := make(map[string]int, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
		idx[t.ID] = i
	}
	for start := 0; start < len(ids); start += 500 { // stay under SQLite's parameter limit
		end := min(start+500, len(ids))
		var deps []dependencyRow
		if err := s.db.Where("task_id IN ?", ids[start:end]).Order("task_id, depends_on_task_id").Find(&deps).Error; err != nil {
			return fmt.Errorf("read task dependencies: %w", err)
		}
		for _, d := range deps {
			i := idx[d.TaskID]
			ts[i].DependsOn = append(ts[i].DependsOn, d.DependsOnTaskID)
		}
	}
	return nil
}

// AgentProjects returns the projects agentID is assigned to.
func (s *Teams) AgentProjects(agentID string) ([]string, error) {
	var ids []string
	if err := s.db.Model(&projectAgentRow{}).Where("agent_id = ?", agentID).Pluck("project_id", &ids).Error; err != nil {
		return nil, fmt.Errorf("read projects of agent %s: %w", agentID, err)
	}
	return ids, nil
}

// TaskCounts counts a project's tasks (every task when projectID is empty)
// by status.
func (s *Teams) TaskCounts(projectID string) (map[string]int, error) {
	var rows []struct {
		Status string
		N      int
	}
	q := s.db.Model(&taskRow{}).Select("status, COUNT(*) AS n").Group("status")
	if projectID != "" {
		q = q.Where("project_id = ?", projectID)
	}
	if err := q.Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("count tasks: %w", err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, nil
}

// ProjectDependencies returns the dependency edges among a project's tasks.
func (s *Teams) ProjectDependencies(projectID string) (map[string][]string, error) {
	var deps []dependencyRow
	err := s.db.Table("task_dependencies AS d").Select("d.task_id, d.depends_on_task_id").
		Joins("JOIN tasks t ON t.id = d.task_id").Where("t.project_id = ?", projectID).Scan(&deps).Error
	if err != nil {
		return nil, fmt.Errorf("read dependencies of project %s: %w", projectID, err)
	}
	out := map[string][]string{}
	for _, d := range deps {
		out[d.TaskID] = append(out[d.TaskID], d.DependsOnTaskID)
	}
	return out, nil
}

// SetDependencies replaces what taskID depends on.
func (s *Teams) SetDependencies(taskID string, dependsOn []string) error {
	if err := s.db.Where("task_id = ?", taskID).Delete(&dependencyRow{}).Error; err != nil {
		return fmt.Errorf("write dependencies of task %s: %w", taskID, err)
	}
	for _, d := range dependsOn {
		if err := s.db.Create(&dependencyRow{TaskID: taskID, DependsOnTaskID: d}).Error; err != nil {
			return translate(err, fmt.Sprintf("dependency of task %s on %s", taskID, d))
		}
	}
	return nil
}

// Dependents returns the tasks that depend on taskID.
func (s *Teams) Dependents(taskID string) ([]teams.Task, error) {
	var rows []taskRow
	err := s.db.Model(&taskRow{}).Joins("JOIN task_dependencies d ON d.task_id = tasks.id").
		Where("d.depends_on_task_id = ?", taskID).Order("tasks.created_at, tasks.id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("read dependents of task %s: %w", taskID, err)
	}
	out := make([]teams.Task, len(rows))
	for i, r := range rows {
		out[i] = r.task()
	}
	return out, s.fillDependencies(out)
}

func jsonList(v []string) string {
	if v == nil {
		v = []string{}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func fromJSONList(s string) []string {
	out := []string{}
	_ = json.Unmarshal([]byte(s), &out) // written by jsonList; a bad value reads as empty
	return out
}

// AddTaskEvent appends to a task's history.
func (s *Teams) AddTaskEvent(e teams.TaskEvent) error {
	row := taskEventRow{TaskID: e.TaskID, Kind: e.Kind, FromStatus: e.FromStatus, ToStatus: e.ToStatus, Fields: jsonList(e.Fields),
		AgentID: e.AgentID, Detail: e.Detail, ConversationID: e.ConversationID, CreatedAt: e.CreatedAt.UTC()}
	if err := s.db.Create(&row).Error; err != nil {
		return translate(err, "history of task "+e.TaskID)
	}
	return nil
}

// TaskEvents returns a task's history, oldest first, with agent names.
func (s *Teams) TaskEvents(taskID string) ([]teams.TaskEvent, error) {
	var rows []struct {
		ID                                                          int64
		TaskID, Kind, FromStatus, ToStatus, Fields, AgentID, Detail string
		ConversationID, AgentName                                   string
		CreatedAt                                                   time.Time
	}
	err := s.db.Table("task_events AS e").Select("e.*, COALESCE(a.name, '') AS agent_name").
		Joins("LEFT JOIN agents a ON a.id = e.agent_id").Where("e.task_id = ?", taskID).Order("e.id").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("read history of task %s: %w", taskID, err)
	}
	out := make([]teams.TaskEvent, len(rows))
	for i, r := range rows {
		out[i] = teams.TaskEvent{ID: r.ID, TaskID: r.TaskID, Kind: r.Kind, FromStatus: r.FromStatus, ToStatus: r.ToStatus,
			Fields: fromJSONList(r.Fields), AgentID: r.AgentID, AgentName: r.AgentName, Detail: r.Detail, ConversationID: r.ConversationID,
			CreatedAt: r.CreatedAt.UTC()}
	}
	return out, nil
}

// AddChatModification records a chat-driven change.
func (s *Teams) AddChatModification(m teams.ChatModification) error {
	row := chatModRow{ID: m.ID, TaskID: m.TaskID, ConversationID: m.ConversationID, RequesterID: m.RequesterID, ExecutorID: m.ExecutorID,
		Operation: m.Operation, Fields: jsonList(m.Fields), Warning: m.Warning, WarningReason: m.WarningReason, CreatedAt: m.CreatedAt.UTC()}
	if err := s.db.Create(&row).Error; err != nil {
		return translate(err, "chat modification of task "+m.TaskID)
	}
	return nil
}

// ChatModifications returns a task's chat-driven changes, oldest first.
func (s *Teams) ChatModifications(taskID string) ([]teams.ChatModification, error) {
	var rows []chatModRow
	if err := s.db.Where("task_id = ?", taskID).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read chat modifications of task %s: %w", taskID, err)
	}
	out := make([]teams.ChatModification, len(rows))
	for i, r := range rows {
		out[i] = teams.ChatModification{ID: r.ID, TaskID: r.TaskID, ConversationID: r.ConversationID, RequesterID: r.RequesterID,
			ExecutorID: r.ExecutorID, Operation: r.Operation, Fields: fromJSONList(r.Fields), Warning: r.Warning,
			WarningReason: r.WarningReason, CreatedAt: r.CreatedAt.UTC()}
	}
	return out, nil
}

func toConversationRow(c teams.Conversation) conversationRow {
	return conversationRow{ID: c.ID, ProjectID: c.ProjectID, Topic: c.Topic, State: c.State, InitiatorID: c.InitiatorID,
		RelatedTaskID: strPtr(c.RelatedTaskID), CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC(), EndedAt: utc(c.EndedAt), EndedBy: c.EndedBy}
}

func (r conversationRow) conversation() teams.Conversation {
	return teams.Conversation{ID: r.ID, ProjectID: r.ProjectID, Topic: r.Topic, State: r.State, InitiatorID: r.InitiatorID,
		RelatedTaskID: deref(r.RelatedTaskID), Participants: []teams.Participant{}, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		EndedAt: utc(r.EndedAt), EndedBy: r.EndedBy}
}

// CreateConversation inserts c with its participants.
func (s *Teams) CreateConversation(c teams.Conversation) error {
	row := toConversationRow(c)
	if err := s.db.Create(&row).Error; err != nil {
		return translate(err, "conversation "+c.ID)
	}
	for _, p := range c.Participants {
		if err := s.AddParticipant(c.ID, p); err != nil {
			return err
		}
	}
	return nil
}

// GetConversation returns conversation id with its participants.
func (s *Teams) GetConversation(id string) (teams.Conversation, error) {
	var row conversationRow
	err := s.db.Where("id = ?", id).Take(&row).Error
	if isNotFound(err) {
		return teams.Conversation{}, core.Errorf(core.ENotFound, "Conversation not found: %s", id)
	}
	if err != nil {
		return teams.Conversation{}, fmt.Errorf("read conversation %s: %w", id, err)
	}
	out := []teams.Conversation{row.conversation()}
	if err := s.fillParticipants(out); err != nil {
		return teams.Conversation{}, err
	}
	return out[0], nil
}

func (s *Teams) fillParticipants(cs []teams.Conversation) error {
	if len(cs) == 0 {
		return nil
	}
	idx := make(map[string]int, len(cs))
	ids := make([]string, len(cs))
	for i, c := range cs {
		idx[c.ID] = i
		ids[i] = c.ID
	}
	for start := 0; start < len(ids); start += 500 {
		end := min(start+500, len(ids))
		var rows []participantRow
		err := s.db.Table("conversation_participants AS p").Select("p.*, COALESCE(a.name, p.agent_id) AS agent_name").
			Joins("LEFT JOIN agents a ON a.id = p.agent_id").Where("p.conversation_id IN ?", ids[start:end]).
			Order("p.joined_at, p.agent_id").Scan(&rows).Error
		if err != nil {
			return fmt.Errorf("read participants: %w", err)
		}
		for _, r := range rows {
			i := idx[r.ConversationID]
			cs[i].Participants = append(cs[i].Participants, teams.Participant{AgentID: r.AgentID, AgentName: r.AgentName, Role: r.Role,
				LastReadSeq: r.LastReadSeq, JoinedAt: r.JoinedAt.UTC()})
		}
	}
	return nil
}

// ListConversations returns the conversations f selects, the most recently
// active first, with their participants.
func (s *Teams) ListConversations(f teams.ConversationFilter) ([]teams.Conversation, error) {
	var rows []conversationRow
	q := s.db.Model(&conversationRow{})
	if f.ProjectID != "" {
		q = q.Where("conversations.project_id = ?", f.ProjectID)
	}
	if f.State != "" {
		q = q.Where("conversations.state = ?", f.State)
	}
	if f.MemberID != "" {
		q = q.Joins("JOIN conversation_participants p ON p.conversation_id = conversations.id AND p.agent_id = ? AND p.role = ?",
			f.MemberID, teams.RoleMember)
	}
	if err := q.Order("conversations.updated_at DESC, conversations.id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list conversations: %w", err)
	}
	out := make([]teams.Conversation, len(rows))
	for i, r := range rows {
		out[i] = r.conversation()
	}
	return out, s.fillParticipants(out)
}

// UpdateConversation writes c's topic, state, ending and updated time.
func (s *Teams) UpdateConversation(c teams.Conversation) error {
	res := s.db.Model(&conversationRow{}).Where("id = ?", c.ID).Updates(map[string]any{
		"topic": c.Topic, "state": c.State, "updated_at": c.UpdatedAt.UTC(), "ended_at": utc(c.EndedAt), "ended_by": c.EndedBy})
	if res.Error != nil {
		return translate(res.Error, "conversation "+c.ID)
	}
	if res.RowsAffected == 0 {
		return core.Errorf(core.ENotFound, "Conversation not found: %s", c.ID)
	}
	return nil
}

// AddParticipant adds p to a conversation, or makes an observer a member.
func (s *Teams) AddParticipant(conversationID string, p teams.Participant) error {
	role := p.Role
	if role == "" {
		role = teams.RoleMember
	}
	err := s.db.Exec(`INSERT INTO conversation_participants (conversation_id, agent_id, role, last_read_seq, joined_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (conversation_id, agent_id) DO UPDATE SET role = CASE WHEN excluded.role = 'member' THEN 'member' ELSE conversation_participants.role END`,
		conversationID, p.AgentID, role, p.LastReadSeq, p.JoinedAt.UTC()).Error
	return translate(err, fmt.Sprintf("participant %s of conversation %s", p.AgentID, conversationID))
}

// SetReadPosition moves agentID's read position forward to seq.
func (s *Teams) SetReadPosition(conversationID, agentID string, seq int64) error {
	err := s.db.Model(&participantRow{}).Where("conversation_id = ? AND agent_id = ? AND last_read_seq < ?", conversationID, agentID, seq).
		Update("last_read_seq", seq).Error
	if err != nil {
		return fmt.Errorf("move read position in conversation %s: %w", conversationID, err)
	}
	return nil
}

// AddMessage stores m and sets its Seq.
func (s *Teams) AddMessage(m *teams.Message) error {
	row := messageRow{ID: m.ID, ConversationID: m.ConversationID, SenderID: m.SenderID, Content: m.Content, InReplyTo: m.InReplyTo,
		CreatedAt: m.CreatedAt.UTC()}
	if err := s.db.Create(&row).Error; err != nil {
		return translate(err, "message in conversation "+m.ConversationID)
	}
	m.Seq = row.Seq
	return nil
}

func (r messageRow) message() teams.Message {
	name := r.SenderName
	if name == "" {
		name = r.SenderID
	}
	return teams.Message{Seq: r.Seq, ID: r.ID, ConversationID: r.ConversationID, SenderID: r.SenderID, SenderName: name, Content: r.Content,
		InReplyTo: r.InReplyTo, CreatedAt: r.CreatedAt.UTC()}
}

func messages(rows []messageRow) []teams.Message {
	out := make([]teams.Message, len(rows))
	for i, r := range rows {
		out[i] = r.message()
	}
	return out
}

const messageColumns = "m.seq, m.id, m.conversation_id, m.sender_id, m.content, m.in_reply_to, m.created_at, COALESCE(a.name, '') AS sender_name"

// Messages returns the last limit messages of a conversation before seq
// before (all of them when before is 0), oldest first, and how many it
// has in all.
func (s *Teams) Messages(conversationID string, before int64, limit int) ([]teams.Message, int, error) {
	var rows []messageRow
	q := s.db.Table("chat_messages AS m").Select(messageColumns).Joins("LEFT JOIN agents a ON a.id = m.sender_id").
		Where("m.conversation_id = ?", conversationID).Order("m.seq DESC")
	if before > 0 {
		q = q.Where("m.seq < ?", before)
	}
	if limit > 0 {
		q = q.Limit(limit)
	}
	if err := q.Scan(&rows).Error; err != nil {
		return nil, 0, fmt.Errorf("read messages of conversation %s: %w", conversationID, err)
	}
	for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
		rows[i], rows[j] = rows[j], rows[i]
	}
	var total int64
	if err := s.db.Model(&messageRow{}).Where("conversation_id = ?", conversationID).Count(&total).Error; err != nil {
		return nil, 0, fmt.Errorf("count messages of conversation %s: %w", conversationID, err)
	}
	return messages(rows), int(total), nil
}

// LastMessages returns the newest message of each conversation.
func (s *Teams) LastMessages(conversationIDs []string) (map[string]teams.Message, error) {
	out := map[string]teams.Message{}
	for start := 0; start < len(conversationIDs); start += 500 {
		end := min(start+500, len(conversationIDs))
		var rows []messageRow
		err := s.db.Table("chat_messages AS m").Select(messageColumns).Joins("LEFT JOIN agents a ON a.id = m.sender_id").
			Where("m.seq IN (SELECT MAX(seq) FROM chat_messages WHERE conversation_id IN ? GROUP BY conversation_id)", conversationIDs[start:end]).
			Scan(&rows).Error
		if err != nil {
			return nil, fmt.Errorf("read last messages: %w", err)
		}
		for _, r := range rows {
			out[r.ConversationID] = r.message()
		}
	}
	return out, nil
}

// UnreadCounts counts, per conversation, the messages others wrote after
// agentID's read position (all of them where it has none).
func (s *Teams) UnreadCounts(agentID string, conversationIDs []string) (map[string]int, error) {
	out := map[string]int{}
	for start := 0; start < len(conversationIDs); start += 500 {
		end := min(start+500, len(conversationIDs))
		var rows []struct {
			ConversationID string
			N              int
		}
		err := s.db.Raw(`SELECT m.conversation_id, COUNT(*) AS n FROM chat_messages m
			LEFT JOIN conversation_participants p ON p.conversation_id = m.conversation_id AND p.agent_id = ?
			WHERE m.conversation_id IN ? AND m.sender_id <> ? AND m.seq > COALESCE(p.last_read_seq, 0)
			GROUP BY m.conversation_id`, agentID, conversationIDs[start:end], agentID).Scan(&rows).Error
		if err != nil {
			return nil, fmt.Errorf("count unread messages: %w", err)
		}
		for _, r := range rows {
			out[r.ConversationID] = r.N
		}
	}
	return out, nil
}

// pendingQuery selects the messages waiting for agentID: in projectID's
// conversations, or in every project's when it is empty; in either case
// only in the projects agentID is in now. A conversation of a project it
// was taken off is not its any more (found by a red team: the messages
// written there after it left reached it through any session that named no
// project).
func (s *Teams) pendingQuery(agentID, projectID string) *gorm.DB {
	q := s.db.Table("conversation_participants AS p").
		Joins("JOIN chat_messages m ON m.conversation_id = p.conversation_id AND m.seq > p.last_read_seq").
		Joins("JOIN conversations c ON c.id = p.conversation_id").
		Where("p.agent_id = ? AND p.role = ? AND m.sender_id <> ?", agentID, teams.RoleMember, agentID)
	if projectID != "" {
		q = q.Where("c.project_id = ?", projectID)
	}
	return q.Where(inProjectsOf("c.project_id", agentID))
}

// inProjectsOf is the condition that column names a project agentID is in
// now (the owner is in every project).
func inProjectsOf(column, agentID string) clause.Expr {
	return gorm.Expr("(? = ? OR "+column+" IN (SELECT project_id FROM project_agents WHERE agent_id = ?))", agentID, authz.OwnerID, agentID)
}

// PendingMessages returns the messages waiting for agentID, oldest first.
func (s *Teams) PendingMessages(agentID, projectID string, limit int) ([]teams.Message, error) {
	var rows []messageRow
	q := s.pendingQuery(agentID, projectID).Select(messageColumns).Joins("LEFT JOIN agents a ON a.id = m.sender_id").Order("m.seq")
	if limit > 0 {
		q = q.Limit(limit)
	}
	if err := q.Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("read pending messages of %s: %w", agentID, err)
	}
	return messages(rows), nil
}

// CountPending counts the messages waiting for agentID.
func (s *Teams) CountPending(agentID, projectID string) (int, error) {
	var n int64
	if err := s.pendingQuery(agentID, projectID).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count pending messages of %s: %w", agentID, err)
	}
	return int(n), nil
}

// HasMessageFrom reports whether senderID wrote in a conversation memberID
// is a member of.
func (s *Teams) HasMessageFrom(senderID, memberID, projectID string) (bool, error) {
	q := s.db.Table("chat_messages AS m").Select("1").
		Joins("JOIN conversation_participants p ON p.conversation_id = m.conversation_id AND p.agent_id = ? AND p.role = ?", memberID, teams.RoleMember).
		Where("m.sender_id = ?", senderID)
	if projectID != "" {
		q = q.Joins("JOIN conversations c ON c.id = m.conversation_id").Where("c.project_id = ?", projectID)
	}
	var found []int
	if err := q.Limit(1).Scan(&found).Error; err != nil {
		return false, fmt.Errorf("look for messages from %s: %w", senderID, err)
	}
	return len(found) > 0, nil
}

// CreateNotification stores n.
func (s *Teams) CreateNotification(n teams.Notification) error {
	row := notificationRow{ID: n.ID, TargetAgentID: n.TargetAgentID, TargetProjectID: strPtr(n.TargetProjectID), Type: n.Type, Action: n.Action,
		TaskID: n.TaskID, ConversationID: n.ConversationID, Message: n.Message, Instruction: n.Instruction, SourceAgentID: n.SourceAgentID,
		CreatedAt: n.CreatedAt.UTC(), ReadAt: utc(n.ReadAt)}
	if err := s.db.Create(&row).Error; err != nil {
		return translate(err, "notification for "+n.TargetAgentID)
	}
	return nil
}

func (r notificationRow) notification() teams.Notification {
	return teams.Notification{ID: r.ID, TargetAgentID: r.TargetAgentID, TargetProjectID: deref(r.TargetProjectID), Type: r.Type, Action: r.Action,
		TaskID: r.TaskID, ConversationID: r.ConversationID, Message: r.Message, Instruction: r.Instruction, SourceAgentID: r.SourceAgentID,
		CreatedAt: r.CreatedAt.UTC(), ReadAt: utc(r.ReadAt)}
}

// UnreadNotifications returns agentID's unread notifications for
// projectID (and for no project), or all of them when projectID is empty;
// never those of a project agentID is not in now (found by a red team: a
// manager taken off a project still heard of its tasks' news through a
// session that named no project).
func (s *Teams) UnreadNotifications(agentID, projectID string) ([]teams.Notification, error) {
	var rows []notificationRow
	q := s.db.Where("target_agent_id = ? AND read_at IS NULL", agentID).
		Where(gorm.Expr("(target_project_id IS NULL OR ?)", inProjectsOf("target_project_id", agentID)))
	if projectID != "" {
		q = q.Where("(target_project_id IS NULL OR target_project_id = ?)", projectID)
	}
	if err := q.Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read notifications of %s: %w", agentID, err)
	}
	out := make([]teams.Notification, len(rows))
	for i, r := range rows {
		out[i] = r.notification()
	}
	return out, nil
}

// MarkNotificationsRead marks the unread ones among ids read.
func (s *Teams) MarkNotificationsRead(ids []string, at time.Time) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	res := s.db.Model(&notificationRow{}).Where("id IN ? AND read_at IS NULL", ids).Update("read_at", at.UTC())
	if res.Error != nil {
		return 0, fmt.Errorf("mark notifications read: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// AgentsWithUnreadNotifications lists the agents with unread
// notifications.
func (s *Teams) AgentsWithUnreadNotifications() ([]string, error) {
	var ids []string
	if err := s.db.Model(&notificationRow{}).Where("read_at IS NULL").Distinct().Pluck("target_agent_id", &ids).Error; err != nil {
		return nil, fmt.Errorf("list agents with notifications: %w", err)
	}
	return ids, nil
}

func toExecutionRow(e teams.Execution) executionRow {
	return executionRow{ID: e.ID, TaskID: e.TaskID, AgentID: e.AgentID, ProjectID: e.ProjectID, Status: e.Status, StartedAt: e.StartedAt.UTC(),
		CompletedAt: utc(e.CompletedAt), ExitCode: e.ExitCode, LogFilePath: e.LogFilePath}
}

func (r executionRow) execution() teams.Execution {
	return teams.Execution{ID: r.ID, TaskID: r.TaskID, AgentID: r.AgentID, ProjectID: r.ProjectID, Status: r.Status, StartedAt: r.StartedAt.UTC(),
		CompletedAt: utc(r.CompletedAt), ExitCode: r.ExitCode, LogFilePath: r.LogFilePath}
}

// CreateExecution stores e.
func (s *Teams) CreateExecution(e teams.Execution) error {
	row := toExecutionRow(e)
	if err := s.db.Create(&row).Error; err != nil {
		return translate(err, "execution "+e.ID)
	}
	return nil
}

// GetExecution returns execution id.
func (s *Teams) GetExecution(id string) (teams.Execution, error) {
	var row executionRow
	err := s.db.Where("id = ?", id).Take(&row).Error
	if isNotFound(err) {
		return teams.Execution{}, core.Errorf(core.ENotFound, "Execution not found: %s", id)
	}
	if err != nil {
		return teams.Execution{}, fmt.Errorf("read execution %s: %w", id, err)
	}
	return row.execution(), nil
}

// UpdateExecution writes e's status, end and exit code.
func (s *Teams) UpdateExecution(e teams.Execution) error {
	res := s.db.Model(&executionRow{}).Where("id = ?", e.ID).Updates(map[string]any{
		"status": e.Status, "completed_at": utc(e.CompletedAt), "exit_code": e.ExitCode})
	if res.Error != nil {
		return translate(res.Error, "execution "+e.ID)
	}
	if res.RowsAffected == 0 {
		return core.Errorf(core.ENotFound, "Execution not found: %s", e.ID)
	}
	return nil
}

// ListExecutions returns the executions f selects, newest first, and
// their number.
func (s *Teams) ListExecutions(f teams.ExecutionFilter) ([]teams.Execution, int, error) {
	q := func() *gorm.DB {
		q := s.db.Model(&executionRow{})
		if f.AgentID != "" {
			q = q.Where("agent_id = ?", f.AgentID)
		}
		if f.TaskID != "" {
			q = q.Where("task_id = ?", f.TaskID)
		}
		if f.ProjectID != "" {
			q = q.Where("project_id = ?", f.ProjectID)
		}
		if f.Status != "" {
			q = q.Where("status = ?", f.Status)
		}
		return q
	}
	var rows []executionRow
	lq := q().Order("started_at DESC, id DESC")
	if f.Limit > 0 {
		lq = lq.Limit(f.Limit)
	}
	if err := lq.Find(&rows).Error; err != nil {
		return nil, 0, fmt.Errorf("list executions: %w", err)
	}
	var total int64
	if err := q().Count(&total).Error; err != nil {
		return nil, 0, fmt.Errorf("count executions: %w", err)
	}
	out := make([]teams.Execution, len(rows))
	for i, r := range rows {
		out[i] = r.execution()
	}
	return out, int(total), nil
}
