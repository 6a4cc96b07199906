package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0009Runs creates what the agent runner keeps (SPEC §9): each agent's
// launcher profile, and per run what the task board's execution record does
// not hold (the launcher used, the process id, why it failed, whether its
// process may still be alive). A profile goes with its agent.
func m0009Runs() *gormigrate.Migration {
	type Agent struct {
		ID string `gorm:"primaryKey;size:64"`
	}
	type RunProfile struct {
		AgentID   string    `gorm:"primaryKey;size:64"`
		Agent     *Agent    `gorm:"foreignKey:AgentID;constraint:OnDelete:CASCADE"`
		Template  string    `gorm:"not null"`
		Command   string    `gorm:"not null;default:''"`
		Args      string    `gorm:"not null;default:'[]'"` // JSON array
		ExtraArgs string    `gorm:"not null;default:'[]'"` // JSON array
		WorkDir   string    `gorm:"not null;default:''"`
		Model     string    `gorm:"not null;default:''"`
		Env       string    `gorm:"not null;default:'{}'"` // JSON object
		Prompt    string    `gorm:"not null;default:''"`
		UpdatedAt time.Time `gorm:"not null;autoUpdateTime:false"`
	}
	// Runs outlive their agents and tasks: they are history.
	type AgentRun struct {
		ID        string    `gorm:"primaryKey;size:64"`
		TaskID    string    `gorm:"not null;index:idx_agent_runs_task,priority:1"`
		AgentID   string    `gorm:"not null;size:64"`
		Trigger   string    `gorm:"not null;check:chk_agent_runs_trigger,trigger IN ('manual','auto')"`
		Attempt   int       `gorm:"not null;default:0"`
		Template  string    `gorm:"not null;default:''"`
		Command   string    `gorm:"not null;default:''"`
		WorkDir   string    `gorm:"not null;default:''"`
		PID       int       `gorm:"column:pid;not null;default:0"`
		Reason    string    `gorm:"not null;default:''"`
		Active    bool      `gorm:"not null;default:false;index"`
		CreatedAt time.Time `gorm:"not null;autoCreateTime:false;index:idx_agent_runs_task,priority:2"`
	}
	return &gormigrate.Migration{
		ID: "0009_runs",
		Migrate: func(tx *gorm.DB) error {
			return tx.AutoMigrate(&RunProfile{}, &AgentRun{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("agent_runs", "run_profiles")
		},
	}
}
