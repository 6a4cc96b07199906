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
