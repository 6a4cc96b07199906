package store

import (
	"fmt"
	"time"

	"github.com/airlock-dev/airlock/backend/pins"
	"gorm.io/gorm/clause"
)

type pinRow struct {
	ServerID   string `gorm:"primaryKey"`
	ToolName   string `gorm:"primaryKey"`
	Definition string
	AcceptedAt time.Time
	Format     int
}

func (pinRow) TableName() string { return "tool_pins" }

// Pins is the repository of accepted tool definitions.
type Pins struct{ db *DB }

var _ pins.Store = (*Pins)(nil)

// NewPins returns the repository over db.
func NewPins(db *DB) *Pins { return &Pins{db: db} }

// All returns every accepted definition.
func (p *Pins) All() ([]pins.Pin, error) {
	var rows []pinRow
	if err := p.db.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read tool pins: %w", err)
	}
	out := make([]pins.Pin, len(rows))
	for i, r := range rows {
		out[i] = pins.Pin(r)
	}
	return out, nil
}

// Save stores pin, replacing the one of the same tool.
func (p *Pins) Save(pin pins.Pin) error {
	row := pinRow(pin)
	if err := p.db.Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error; err != nil {
		return fmt.Errorf("save tool pin %s/%s: %w", pin.ServerID, pin.ToolName, err)
	}
	return nil
}

type instructionsPinRow struct {
	ServerID     string `gorm:"primaryKey"`
	Instructions string
	AcceptedAt   time.Time
}

func (instructionsPinRow) TableName() string { return "instruction_pins" }

// AllInstructions returns every server's accepted instructions.
func (p *Pins) AllInstructions() ([]pins.InstructionsPin, error) {
	var rows []instructionsPinRow
	if err := p.db.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read instruction pins: %w", err)
	}
	out := make([]pins.InstructionsPin, len(rows))
	for i, r := range rows {
		out[i] = pins.InstructionsPin(r)
	}
	return out, nil
}

// SaveInstructions stores pin, replacing the server's.
func (p *Pins) SaveInstructions(pin pins.InstructionsPin) error {
	row := instructionsPinRow(pin)
	if err := p.db.Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error; err != nil {
		return fmt.Errorf("save the instructions pin of %s: %w", pin.ServerID, err)
	}
	return nil
}

// DeleteInstructions forgets server's accepted instructions.
func (p *Pins) DeleteInstructions(server string) error {
	if err := p.db.Where("server_id = ?", server).Delete(&instructionsPinRow{}).Error; err != nil {
		return fmt.Errorf("delete the instructions pin of %s: %w", server, err)
	}
	return nil
}
