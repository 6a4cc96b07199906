package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0002HITL creates the tables of human-in-the-loop approval:
// tool_permission_rules (seed 002, with auto_approve stored as 1/0) and
// approvals.
func m0002HITL() *gormigrate.Migration {
	type ToolPermissionRule struct {
		ID          string  `gorm:"primaryKey;size:64"`
		ServerID    *string `gorm:"index"`
		ToolName    *string
		ToolPattern *string
		AutoApprove int    `gorm:"type:integer;not null;default:0;check:chk_tool_permission_rules_auto_approve,auto_approve IN (0,1)"`
		Priority    int    `gorm:"not null;default:0;index"`
		Conditions  string `gorm:"not null;default:'[]'"`
		AgentID     *string
		SessionID   *string
		ExpiresAt   *time.Time
		CreatedAt   time.Time `gorm:"not null;autoCreateTime:false"`
		UpdatedAt   time.Time `gorm:"not null;autoUpdateTime:false"`
	}
	type Approval struct {
		ID             string    `gorm:"primaryKey;size:64"`
		Agent          string    `gorm:"not null;default:''"`
		Session        string    `gorm:"not null;default:''"`
		Server         string    `gorm:"not null;default:''"`
		Tool           string    `gorm:"not null;default:''"`
		ExposedName    string    `gorm:"not null;default:''"`
		Arguments      string    `gorm:"not null;default:'{}'"`
		Annotations    string    `gorm:"not null;default:''"`
		Risk           string    `gorm:"not null;default:''"`
		Warning        string    `gorm:"not null;default:''"`
		ForcedBy       string    `gorm:"not null;default:''"`
		RuleID         string    `gorm:"not null;default:''"`
		Reason         string    `gorm:"not null;default:''"`
		RuleSetVersion int64     `gorm:"not null;default:0"`
		CreatedAt      time.Time `gorm:"index;not null;autoCreateTime:false"`
		Deadline       time.Time `gorm:"not null"`
		Status         string    `gorm:"index;not null;default:'pending'"`
		DecidedBy      string    `gorm:"not null;default:''"`
		DeclineReason  string    `gorm:"not null;default:''"`
		DecidedAt      *time.Time
	}
	return &gormigrate.Migration{
		ID: "0002_hitl",
		Migrate: func(tx *gorm.DB) error {
			return tx.AutoMigrate(&ToolPermissionRule{}, &Approval{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("approvals", "tool_permission_rules")
		},
	}
}
