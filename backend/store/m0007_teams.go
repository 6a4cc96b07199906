package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0007Teams creates the tables of the agent team (SPEC §6.1, seed 001):
// tasks with their dependencies, history and chat-driven modifications;
// conversations with participants and messages; agent notifications; and
// execution logs.
//
// What goes when an agent or a project is deleted: a project takes its
// tasks, conversations, notifications and executions with it; an agent
// takes its notifications, conversation places and executions, while the
// tasks it was assigned, created or last moved lose that reference (SET
// NULL) and its messages and history entries keep its id. Tables are made
// with CreateTable, not AutoMigrate: AutoMigrate would also "migrate" the
// stand-ins for agents and projects below, which only name the tables the
// foreign keys point to.
func m0007Teams() *gormigrate.Migration {
	type Agent struct {
		ID string `gorm:"primaryKey;size:64"`
	}
	type Project struct {
		ID string `gorm:"primaryKey;size:64"`
	}
	type Task struct {
		ID          string   `gorm:"primaryKey;size:64"`
		ProjectID   string   `gorm:"not null;size:64;index:idx_tasks_project,priority:1"`
		Project     *Project `gorm:"foreignKey:ProjectID;constraint:OnDelete:CASCADE"`
		Title       string   `gorm:"not null"`
		Description string   `gorm:"not null;default:''"`
		Status      string   `gorm:"not null;index:idx_tasks_project,priority:2;check:chk_tasks_status,status IN ('backlog','todo','in_progress','blocked','done','cancelled')"`
		Priority    string   `gorm:"not null;check:chk_tasks_priority,priority IN ('low','medium','high','urgent')"`
		// The ranks order an agent's task list (in progress first, the
		// most urgent first) straight from the index.
		StatusRank       int     `gorm:"not null"`
		PriorityRank     int     `gorm:"not null"`
		AssigneeID       *string `gorm:"size:64"` // idx_tasks_assignee_order below
		Assignee         *Agent  `gorm:"foreignKey:AssigneeID;constraint:OnDelete:SET NULL"`
		CreatedByAgentID *string `gorm:"size:64;index"`
		Creator          *Agent  `gorm:"foreignKey:CreatedByAgentID;constraint:OnDelete:SET NULL"`
		ParentTaskID     *string `gorm:"size:64;index"`
		Parent           *Task   `gorm:"foreignKey:ParentTaskID;constraint:OnDelete:SET NULL"`
		BlockedReason    string  `gorm:"not null;default:''"`
		// Who made the last status change (seed 001's audit trail).
		StatusChangedByAgentID *string `gorm:"size:64"`
		StatusChanger          *Agent  `gorm:"foreignKey:StatusChangedByAgentID;constraint:OnDelete:SET NULL"`
		StatusChangedAt        *time.Time
		// Conversation references have no foreign key: conversations
		// refer to tasks too, and both go only with their project.
		StartedFromConversationID string     `gorm:"not null;default:'';size:64"`
		RequestedInConversationID string     `gorm:"not null;default:'';size:64"`
		RequestedByAgentID        string     `gorm:"not null;default:'';size:64"`
		Result                    string     `gorm:"not null;default:''"`
		Summary                   string     `gorm:"not null;default:''"`
		CreatedAt                 time.Time  `gorm:"not null;autoCreateTime:false"`
		UpdatedAt                 time.Time  `gorm:"not null;autoUpdateTime:false"`
		CompletedAt               *time.Time ``
	}
	type TaskDependency struct {
		TaskID          string `gorm:"primaryKey;size:64"`
		DependsOnTaskID string `gorm:"primaryKey;size:64;index"`
		Task            *Task  `gorm:"foreignKey:TaskID;constraint:OnDelete:CASCADE"`
		DependsOn       *Task  `gorm:"foreignKey:DependsOnTaskID;constraint:OnDelete:CASCADE"`
	}
	type TaskEvent struct {
		ID             int64     `gorm:"primaryKey"`
		TaskID         string    `gorm:"not null;size:64;index"`
		Task           *Task     `gorm:"foreignKey:TaskID;constraint:OnDelete:CASCADE"`
		Kind           string    `gorm:"not null"`
		FromStatus     string    `gorm:"not null;default:''"`
		ToStatus       string    `gorm:"not null;default:''"`
		Fields         string    `gorm:"not null;default:'[]'"` // JSON array
		AgentID        string    `gorm:"not null;default:'';size:64"`
		Detail         string    `gorm:"not null;default:''"`
		ConversationID string    `gorm:"not null;default:'';size:64"`
		CreatedAt      time.Time `gorm:"not null;autoCreateTime:false"`
	}
	type TaskChatModification struct {
		ID             string    `gorm:"primaryKey;size:64"`
		TaskID         string    `gorm:"not null;size:64;index"`
		Task           *Task     `gorm:"foreignKey:TaskID;constraint:OnDelete:CASCADE"`
		ConversationID string    `gorm:"not null;default:'';size:64"`
		RequesterID    string    `gorm:"not null;size:64"`
		ExecutorID     string    `gorm:"not null;size:64"`
		Operation      string    `gorm:"not null;check:chk_task_chat_modifications_operation,operation IN ('start','update')"`
		Fields         string    `gorm:"not null;default:'[]'"` // JSON array
		Warning        bool      `gorm:"not null;default:false"`
		WarningReason  string    `gorm:"not null;default:''"`
		CreatedAt      time.Time `gorm:"not null;autoCreateTime:false"`
	}
	type Conversation struct {
		ID            string     `gorm:"primaryKey;size:64"`
		ProjectID     string     `gorm:"not null;size:64;index:idx_conversations_project,priority:1"`
		Project       *Project   `gorm:"foreignKey:ProjectID;constraint:OnDelete:CASCADE"`
		Topic         string     `gorm:"not null;default:''"`
		State         string     `gorm:"not null;check:chk_conversations_state,state IN ('active','ended')"`
		InitiatorID   string     `gorm:"not null;default:'';size:64"`
		RelatedTaskID *string    `gorm:"size:64"`
		RelatedTask   *Task      `gorm:"foreignKey:RelatedTaskID;constraint:OnDelete:SET NULL"`
		CreatedAt     time.Time  `gorm:"not null;autoCreateTime:false"`
		UpdatedAt     time.Time  `gorm:"not null;autoUpdateTime:false;index:idx_conversations_project,priority:2"`
		EndedAt       *time.Time ``
		EndedBy       string     `gorm:"not null;default:'';size:64"`
	}
	type ConversationParticipant struct {
		ConversationID string        `gorm:"primaryKey;size:64"`
		AgentID        string        `gorm:"primaryKey;size:64;index"`
		Conversation   *Conversation `gorm:"foreignKey:ConversationID;constraint:OnDelete:CASCADE"`
		Agent          *Agent        `gorm:"foreignKey:AgentID;constraint:OnDelete:CASCADE"`
		Role           string        `gorm:"not null;default:'member';check:chk_conversation_participants_role,role IN ('member','observer')"`
		LastReadSeq    int64         `gorm:"not null;default:0"`
		JoinedAt       time.Time     `gorm:"not null"`
	}
	// Seq is a rowid alias (no AUTOINCREMENT: a message costs no extra page
	// write); it orders messages and read positions point at it.
	type ChatMessage struct {
		Seq            int64         `gorm:"primaryKey;autoIncrement:false;index:idx_chat_messages_conversation,priority:2"`
		ID             string        `gorm:"not null;size:64;uniqueIndex"`
		ConversationID string        `gorm:"not null;size:64;index:idx_chat_messages_conversation,priority:1;index:idx_chat_messages_sender,priority:2"`
		Conversation   *Conversation `gorm:"foreignKey:ConversationID;constraint:OnDelete:CASCADE"`
		// No foreign key: a message keeps its sender's id when the agent
		// is deleted.
		SenderID  string    `gorm:"not null;size:64;index:idx_chat_messages_sender,priority:1"`
		Content   string    `gorm:"not null"`
		InReplyTo string    `gorm:"not null;default:'';size:64"`
		CreatedAt time.Time `gorm:"not null;autoCreateTime:false"`
	}
	type AgentNotification struct {
		ID              string     `gorm:"primaryKey;size:64"`
		TargetAgentID   string     `gorm:"not null;size:64;index:idx_agent_notifications_unread,priority:1"`
		TargetAgent     *Agent     `gorm:"foreignKey:TargetAgentID;constraint:OnDelete:CASCADE"`
		TargetProjectID *string    `gorm:"size:64"`
		TargetProject   *Project   `gorm:"foreignKey:TargetProjectID;constraint:OnDelete:CASCADE"`
		Type            string     `gorm:"not null;check:chk_agent_notifications_type,type IN ('status_change','interrupt','message','chat_session_notification')"`
		Action          string     `gorm:"not null;default:''"`
		TaskID          string     `gorm:"not null;default:'';size:64"`
		ConversationID  string     `gorm:"not null;default:'';size:64"`
		Message         string     `gorm:"not null;default:''"`
		Instruction     string     `gorm:"not null;default:''"`
		SourceAgentID   string     `gorm:"not null;default:'';size:64"`
		CreatedAt       time.Time  `gorm:"not null;autoCreateTime:false"`
		ReadAt          *time.Time `gorm:"index:idx_agent_notifications_unread,priority:2"`
	}
	type ExecutionLog struct {
		ID          string     `gorm:"primaryKey;size:64"`
		TaskID      string     `gorm:"not null;size:64;index"`
		Task        *Task      `gorm:"foreignKey:TaskID;constraint:OnDelete:CASCADE"`
		AgentID     string     `gorm:"not null;size:64;index:idx_execution_logs_agent,priority:1"`
		Agent       *Agent     `gorm:"foreignKey:AgentID;constraint:OnDelete:CASCADE"`
		ProjectID   string     `gorm:"not null;size:64"`
		Project     *Project   `gorm:"foreignKey:ProjectID;constraint:OnDelete:CASCADE"`
		Status      string     `gorm:"not null;check:chk_execution_logs_status,status IN ('running','completed','failed','stopped')"`
		StartedAt   time.Time  `gorm:"not null;index:idx_execution_logs_agent,priority:2"`
		CompletedAt *time.Time ``
		ExitCode    *int       ``
		LogFilePath string     `gorm:"not null;default:''"`
	}
	return &gormigrate.Migration{
		ID: "0007_teams",
		Migrate: func(tx *gorm.DB) error {
			if err := tx.Migrator().CreateTable(&Task{}, &TaskDependency{}, &TaskEvent{}, &TaskChatModification{}, &Conversation{},
				&ConversationParticipant{}, &ChatMessage{}, &AgentNotification{}, &ExecutionLog{}); err != nil {
				return err
			}
			// The agent's task list: its tasks in a project, in list order,
			// read from the index without a sort.
			return tx.Exec("CREATE INDEX idx_tasks_assignee_order ON tasks (assignee_id, project_id, status_rank, priority_rank, created_at, id)").Error
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("execution_logs", "agent_notifications", "chat_messages", "conversation_participants",
				"conversations", "task_chat_modifications", "task_events", "task_dependencies", "tasks")
		},
	}
}
