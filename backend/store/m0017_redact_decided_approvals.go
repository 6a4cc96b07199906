package store

import (
	"encoding/json"

	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0017RedactDecidedApprovals redacts the arguments of the approvals
// already decided, as the audit records them: earlier versions kept them
// whole for good (secrets included). Pending ones keep theirs (the next
// start expires them, and redacts them then).
func m0017RedactDecidedApprovals() *gormigrate.Migration {
	type row struct {
		ID        string
		Arguments string
	}
	return &gormigrate.Migration{
		ID: "0017_redact_decided_approvals",
		Migrate: func(tx *gorm.DB) error {
			var rows []row
			if err := tx.Table("approvals").Select("id, arguments").Where("status <> ?", "pending").Find(&rows).Error; err != nil {
				return err
			}
			for _, r := range rows {
				red := pipeline.RedactArguments(json.RawMessage(r.Arguments))
				if red == r.Arguments {
					continue
				}
				if err := tx.Table("approvals").Where("id = ?", r.ID).Update("arguments", red).Error; err != nil {
					return err
				}
			}
			return nil
		},
		// Redacted values cannot be restored.
		Rollback: func(*gorm.DB) error { return nil },
	}
}
