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

// m0010OwnToolsRule adds the default rule for Airlock's own tools.
func m0010OwnToolsRule() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0010_own_tools_rule",
		Migrate: func(tx *gorm.DB) error {
			now := time.Now().UTC()
			if err := tx.Exec(`INSERT INTO tool_permission_rules (id, kind, server_id, auto_approve, priority, conditions, created_at, updated_at)
				VALUES (?, 'tool', 'airlock', 1, 0, '[]', ?, ?)`, OwnToolsRuleID, now, now).Error; err != nil {
				return err
			}
			return bumpRulesVersion(tx)
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Exec("DELETE FROM tool_permission_rules WHERE id = ?", OwnToolsRuleID).Error
		},
	}
}
