package store

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0004Client records which MCP client (Claude Code, Cursor, ...) made a
// call, as the client names itself, next to the agent identity.
func m0004Client() *gormigrate.Migration {
	type AuditRecord struct {
		Client string `gorm:"not null;default:''"`
	}
	type Approval struct {
		Client string `gorm:"not null;default:''"`
	}
	return &gormigrate.Migration{
		ID: "0004_client",
		Migrate: func(tx *gorm.DB) error {
			if err := tx.Table("audit_records").Migrator().AddColumn(&AuditRecord{}, "Client"); err != nil {
				return err
			}
			return tx.Table("approvals").Migrator().AddColumn(&Approval{}, "Client")
		},
		Rollback: func(tx *gorm.DB) error {
			if err := tx.Table("audit_records").Migrator().DropColumn(&AuditRecord{}, "Client"); err != nil {
				return err
			}
			return tx.Table("approvals").Migrator().DropColumn(&Approval{}, "Client")
		},
	}
}
