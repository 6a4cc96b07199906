package store

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0016ToolPinFormat records which fields each tool pin's definition
// holds (pins.Pin.Format). The pins stored before it hold a tool's title,
// description, schemas and annotation hints only, and keep format 0
// (pins.FormatBeforeMeta): they are compared on those fields, not read as
// changed because they lack the _meta, icons, execution and
// annotations.title that later pins hold.
func m0016ToolPinFormat() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0016_tool_pin_format",
		Migrate: func(tx *gorm.DB) error {
			return tx.Exec("ALTER TABLE tool_pins ADD COLUMN format INTEGER NOT NULL DEFAULT 0").Error
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Exec("ALTER TABLE tool_pins DROP COLUMN format").Error
		},
	}
}
