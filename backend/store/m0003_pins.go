package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0003ToolPins creates tool_pins: the definition of each downstream tool the
// user accepted (on first sight, or by accepting a change), so that a server
// that later changes a tool's description or schema is noticed.
func m0003ToolPins() *gormigrate.Migration {
	type ToolPin struct {
		ServerID   string    `gorm:"primaryKey"`
		ToolName   string    `gorm:"primaryKey"`
		Definition string    `gorm:"not null"`
		AcceptedAt time.Time `gorm:"not null"`
	}
	return &gormigrate.Migration{
		ID: "0003_tool_pins",
		Migrate: func(tx *gorm.DB) error {
			return tx.AutoMigrate(&ToolPin{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("tool_pins")
		},
	}
}
