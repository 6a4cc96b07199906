package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0005Requests lets every MCP request kind through the pipeline, not only
// tool calls:
//   - rules get a kind (tool, prompt or resource; every existing rule is a
//     tool rule), and two visible default rules keep prompts/get and
//     resources/read running without asking, as they did before they were
//     gated (the user may change or delete them on the Rules screen);
//   - audit records and approvals say which kind of request they are, the
//     caller's agent id and session purpose, and the client's version apart
//     from its name; an approval knows its audit record, so recovery after a
//     crash completes exactly that record.
func m0005Requests() *gormigrate.Migration {
	type ToolPermissionRule struct {
		Kind string `gorm:"not null;default:'tool'"`
	}
	type AuditRecord struct {
		Kind          string `gorm:"not null;default:'tools/call'"`
		AgentID       string `gorm:"not null;default:''"`
		ClientVersion string `gorm:"not null;default:''"`
		Purpose       string `gorm:"not null;default:''"`
	}
	type Approval struct {
		AuditID       int64  `gorm:"not null;default:0"`
		Kind          string `gorm:"not null;default:'tools/call'"`
		AgentID       string `gorm:"not null;default:''"`
		ClientVersion string `gorm:"not null;default:''"`
		Purpose       string `gorm:"not null;default:''"`
	}
	type defaultRule struct {
		ID, Kind string
	}
	defaults := []defaultRule{{"default-prompts", "prompt"}, {"default-resources", "resource"}}
	add := func(tx *gorm.DB, table string, model any, cols ...string) error {
		for _, c := range cols {
			if err := tx.Table(table).Migrator().AddColumn(model, c); err != nil {
				return err
			}
		}
		return nil
	}
	drop := func(tx *gorm.DB, table string, model any, cols ...string) error {
		for _, c := range cols {
			if err := tx.Table(table).Migrator().DropColumn(model, c); err != nil {
				return err
			}
		}
		return nil
	}
	return &gormigrate.Migration{
		ID: "0005_requests",
		Migrate: func(tx *gorm.DB) error {
			if err := add(tx, "tool_permission_rules", &ToolPermissionRule{}, "Kind"); err != nil {
				return err
			}
			if err := add(tx, "audit_records", &AuditRecord{}, "Kind", "AgentID", "ClientVersion", "Purpose"); err != nil {
				return err
			}
			if err := add(tx, "approvals", &Approval{}, "AuditID", "Kind", "AgentID", "ClientVersion", "Purpose"); err != nil {
				return err
			}
			if err := tx.Exec("CREATE INDEX idx_approvals_audit_id ON approvals(audit_id)").Error; err != nil {
				return err
			}
			now := time.Now().UTC()
			for _, d := range defaults {
				if err := tx.Exec(`INSERT INTO tool_permission_rules (id, kind, auto_approve, priority, conditions, created_at, updated_at)
					VALUES (?, ?, 1, 0, '[]', ?, ?)`, d.ID, d.Kind, now, now).Error; err != nil {
					return err
				}
			}
			return bumpRulesVersion(tx)
		},
		Rollback: func(tx *gorm.DB) error {
			for _, d := range defaults {
				if err := tx.Exec("DELETE FROM tool_permission_rules WHERE id = ?", d.ID).Error; err != nil {
					return err
				}
			}
			if err := tx.Exec("DELETE FROM tool_permission_rules WHERE kind <> 'tool'").Error; err != nil {
				return err
			}
			if err := tx.Exec("DROP INDEX IF EXISTS idx_approvals_audit_id").Error; err != nil {
				return err
			}
			if err := drop(tx, "tool_permission_rules", &ToolPermissionRule{}, "Kind"); err != nil {
				return err
			}
			if err := drop(tx, "audit_records", &AuditRecord{}, "Kind", "AgentID", "ClientVersion", "Purpose"); err != nil {
				return err
			}
			return drop(tx, "approvals", &Approval{}, "AuditID", "Kind", "AgentID", "ClientVersion", "Purpose")
		},
	}
}
