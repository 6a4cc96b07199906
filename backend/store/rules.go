package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
)

var _ hitl.RuleStore = (*Rules)(nil)

// Settings keys the rules repository keeps.
const (
	// SettingRulesVersion is bumped in the transaction of every rule change,
	// so another process (the app while the CLI edits) notices cheaply.
	SettingRulesVersion = "rules_version"
	// SettingRulesFileHash is the hash of the rules file Airlock last wrote
	// or applied.
	SettingRulesFileHash = "rules_file_hash"
)

type ruleRow struct {
	ID          string `gorm:"primaryKey"`
	Kind        string
	ServerID    *string
	ToolName    *string
	ToolPattern *string
	AutoApprove int
	Priority    int
	Conditions  string
	AgentID     *string
	SessionID   *string
	ExpiresAt   *time.Time
	CreatedAt   time.Time `gorm:"autoCreateTime:false"`
	UpdatedAt   time.Time `gorm:"autoUpdateTime:false"`
}

func (ruleRow) TableName() string { return "tool_permission_rules" }

func toRuleRow(r hitl.Rule) (ruleRow, error) {
	conds := r.Conditions
	if conds == nil {
		conds = []hitl.Condition{}
	}
	b, err := json.Marshal(conds)
	if err != nil {
		return ruleRow{}, fmt.Errorf("encode conditions of rule %s: %w", r.ID, err)
	}
	row := ruleRow{
		ID: r.ID, Kind: r.Kind, ServerID: r.ServerID, ToolName: r.ToolName, ToolPattern: r.ToolPattern,
		Priority: r.Priority, Conditions: string(b), AgentID: r.AgentID, SessionID: r.SessionID,
		ExpiresAt: utcPtr(r.ExpiresAt), CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}
	if r.AutoApprove {
		row.AutoApprove = 1
	}
	return row, nil
}

func (row ruleRow) rule() (hitl.Rule, error) {
	conds := []hitl.Condition{}
	if row.Conditions != "" {
		if err := json.Unmarshal([]byte(row.Conditions), &conds); err != nil {
			return hitl.Rule{}, fmt.Errorf("decode conditions of rule %s: %w", row.ID, err)
		}
	}
	kind := row.Kind
	if kind == "" {
		kind = hitl.KindTool
	}
	return hitl.Rule{
		ID: row.ID, Kind: kind, ServerID: row.ServerID, ToolName: row.ToolName, ToolPattern: row.ToolPattern,
		AutoApprove: row.AutoApprove != 0, Priority: row.Priority, Conditions: conds,
		AgentID: row.AgentID, SessionID: row.SessionID, ExpiresAt: utcPtr(row.ExpiresAt),
		CreatedAt: row.CreatedAt.UTC(), UpdatedAt: row.UpdatedAt.UTC(),
	}, nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// Rules is the repository of tool permission rules.
type Rules struct{ db *DB }

// NewRules returns the rules repository over db.
func NewRules(db *DB) *Rules { return &Rules{db: db} }

// ListRules returns every rule, highest priority first (the evaluation
// order proper is hitl's).
func (s *Rules) ListRules() ([]hitl.Rule, error) {
	var rows []ruleRow
	if err := s.db.Order("priority DESC, created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list rules: %w", err)
	}
	out := make([]hitl.Rule, 0, len(rows))
	for _, row := range rows {
		r, err := row.rule()
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// CreateRule inserts r.
func (s *Rules) CreateRule(r hitl.Rule) error {
	row, err := toRuleRow(r)
	if err != nil {
		return err
	}
	return s.db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			if errors.Is(err, gorm.ErrDuplicatedKey) {
				return core.Errorf(core.EConflict, "rule %s exists already", r.ID)
			}
			return fmt.Errorf("create rule %s: %w", r.ID, err)
		}
		return bumpRulesVersion(tx)
	})
}

// UpdateRule replaces the stored rule with r's ID.
func (s *Rules) UpdateRule(r hitl.Rule) error {
	row, err := toRuleRow(r)
	if err != nil {
		return err
	}
	return s.db.Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&ruleRow{}).Where("id = ?", r.ID).Select("*").Updates(&row)
		if res.Error != nil {
			return fmt.Errorf("update rule %s: %w", r.ID, res.Error)
		}
		if res.RowsAffected == 0 {
			return core.Errorf(core.ENotFound, "rule %s not found", r.ID)
		}
		return bumpRulesVersion(tx)
	})
}

// DeleteRule deletes rule id.
func (s *Rules) DeleteRule(id string) error {
	return s.db.Transaction(func(tx *gorm.DB) error {
		res := tx.Where("id = ?", id).Delete(&ruleRow{})
		if res.Error != nil {
			return fmt.Errorf("delete rule %s: %w", id, res.Error)
		}
		if res.RowsAffected == 0 {
			return core.Errorf(core.ENotFound, "rule %s not found", id)
		}
		return bumpRulesVersion(tx)
	})
}

// ImportRules upserts rules in one transaction; with replace it first
// deletes every rule.
func (s *Rules) ImportRules(rules []hitl.Rule, replace bool) error {
	rows := make([]ruleRow, len(rules))
	for i, r := range rules {
		row, err := toRuleRow(r)
		if err != nil {
			return err
		}
		rows[i] = row
	}
	return s.db.Transaction(func(tx *gorm.DB) error {
		if replace {
			if err := tx.Where("1 = 1").Delete(&ruleRow{}).Error; err != nil {
				return fmt.Errorf("import rules: %w", err)
			}
		}
		for i := range rows {
			if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&rows[i]).Error; err != nil {
				return fmt.Errorf("import rule %s: %w", rows[i].ID, err)
			}
		}
		return bumpRulesVersion(tx)
	})
}

// RulesVersion returns the counter every rule change bumps (0 before the
// first change).
func (s *Rules) RulesVersion() (int64, error) {
	v, ok, err := s.db.Setting(SettingRulesVersion)
	if err != nil || !ok {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("setting %s is not a number: %q", SettingRulesVersion, v)
	}
	return n, nil
}

// RulesFileHash returns the stored hash of the rules file.
func (s *Rules) RulesFileHash() (string, error) {
	v, _, err := s.db.Setting(SettingRulesFileHash)
	return v, err
}

// SetRulesFileHash stores the hash of the rules file.
func (s *Rules) SetRulesFileHash(hash string) error {
	return s.db.SetSetting(SettingRulesFileHash, hash)
}

func bumpRulesVersion(tx *gorm.DB) error {
	err := tx.Exec(`INSERT INTO settings (key, value, updated_at) VALUES (?, '1', ?)
		ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(settings.value AS INTEGER) + 1 AS TEXT), updated_at = excluded.updated_at`,
		SettingRulesVersion, nowUTC()).Error
	if err != nil {
		return fmt.Errorf("bump rules version: %w", err)
	}
	return nil
}
