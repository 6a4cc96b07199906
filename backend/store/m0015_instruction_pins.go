package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0015InstructionPins creates instruction_pins: the instructions each
// downstream server gives its clients (MCP's InitializeResult.instructions),
// as the user accepted them (on first sight, or by accepting a change), so
// that a server that later rewrites them is noticed, as tool_pins does for
// tool definitions.
func m0015InstructionPins() *gormigrate.Migration {
	type InstructionPin struct {
		ServerID     string    `gorm:"primaryKey"`
		Instructions string    `gorm:"not null"`
		AcceptedAt   time.Time `gorm:"not null"`
	}
	return &gormigrate.Migration{
		ID: "0015_instruction_pins",
		Migrate: func(tx *gorm.DB) error {
			return tx.AutoMigrate(&InstructionPin{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("instruction_pins")
		},
	}
}
