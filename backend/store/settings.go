package store

import (
	"fmt"

	"gorm.io/gorm/clause"
)

type setting struct {
	Key   string `gorm:"primaryKey"`
	Value string
}

func (setting) TableName() string { return "settings" }

// Setting returns the value stored under key, and whether there was one.
func (db *DB) Setting(key string) (string, bool, error) {
	var s setting
	err := db.Where("key = ?", key).Take(&s).Error
	if isNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read setting %s: %w", key, err)
	}
	return s.Value, true, nil
}

// SetSetting stores value under key.
func (db *DB) SetSetting(key, value string) error {
	err := db.Clauses(clause.OnConflict{UpdateAll: true}).Create(&setting{Key: key, Value: value}).Error
	if err != nil {
		return fmt.Errorf("write setting %s: %w", key, err)
	}
	return nil
}
