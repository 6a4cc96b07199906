package store

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0012MCPSessions keeps the agents' MCP sessions (Streamable HTTP,
// 2025-11-25 and older) across a restart of Airlock, so that their clients
// carry on with the session they have instead of failing with "session not
// found": Claude Code, for one, does not open a new session on that answer.
func m0012MCPSessions() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0012_mcp_sessions",
		Migrate: func(tx *gorm.DB) error {
			return tx.Exec(`CREATE TABLE mcp_sessions (
				id_hash TEXT PRIMARY KEY,
				credential TEXT NOT NULL,
				state TEXT NOT NULL,
				bound TEXT NOT NULL DEFAULT '',
				created_at DATETIME NOT NULL,
				seen_at DATETIME NOT NULL
			)`).Error
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Exec("DROP TABLE mcp_sessions").Error
		},
	}
}
