package store

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0013SessionSubs keeps the resources a kept MCP session is subscribed
// to (JSON: server and URI pairs), so that its client hears of their
// updates after a restart of Airlock as before it.
func m0013SessionSubs() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0013_session_subs",
		Migrate: func(tx *gorm.DB) error {
			return tx.Exec(`ALTER TABLE mcp_sessions ADD COLUMN subs TEXT NOT NULL DEFAULT ''`).Error
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Exec(`ALTER TABLE mcp_sessions DROP COLUMN subs`).Error
		},
	}
}
