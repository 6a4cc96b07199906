package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// OwnToolsRuleID is the default rule that lets calls to Airlock's own tools
// (server "airlock": help, authenticate, the task and chat tools) run
// without asking. Who may call which of them is the permission levels'
// decision, made before the rules; asking a person about every help or
// get_my_task call would make a team of agents unusable. It is a visible
// rule: the user may raise, narrow or delete it on the Rules screen.
const OwnToolsRuleID = "default-airlock"

// FileReadRuleID is the default rule that lets the built-in file_read tool
// run without asking: it reads only inside the folders the user allowed
// (the built-in policy refuses the rest before the rules), and changes
// nothing, like a resource read. file_write and shell_exec have no default
// rule: they ask until the user adds one.
const FileReadRuleID = "default-file-read"

// m0010DefaultRules adds the default rules for Airlock's own tools and for
// the built-in file_read.
func m0010DefaultRules() *gormigrate.Migration {
	defaults := []struct{ ID, Server string }{{OwnToolsRuleID, "airlock"}, {FileReadRuleID, "file-read"}}
	return &gormigrate.Migration{
		ID: "0010_default_rules",
		Migrate: func(tx *gorm.DB) error {
			now := time.Now().UTC()
			for _, d := range defaults {
				if err := tx.Exec(`INSERT INTO tool_permission_rules (id, kind, server_id, auto_approve, priority, conditions, created_at, updated_at)
					VALUES (?, 'tool', ?, 1, 0, '[]', ?, ?)`, d.ID, d.Server, now, now).Error; err != nil {
					return err
				}
			}
			return bumpRulesVersion(tx)
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Exec("DELETE FROM tool_permission_rules WHERE id IN (?, ?)", OwnToolsRuleID, FileReadRuleID).Error
		},
	}
}
