package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0008RelayRules adds the visible default rules for the requests a
// downstream server makes of the agent's client during a call (sampling
// and elicitation): they are relayed without asking here, because the
// agent's client shows them to its user itself (the MCP specification asks
// clients to). The user may change or delete them on the Rules screen.
func m0008RelayRules() *gormigrate.Migration {
	defaults := []struct{ ID, Kind string }{{"default-sampling", "sampling"}, {"default-elicitation", "elicitation"}}
	return &gormigrate.Migration{
		ID: "0008_relay_rules",
		Migrate: func(tx *gorm.DB) error {
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
			return tx.Exec("DELETE FROM tool_permission_rules WHERE kind IN ('sampling', 'elicitation')").Error
		},
	}
}
