package store

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0011ApprovalTask records, with each approval, the task its caller was
// working on, so that the dialog (and a restart's list) can show it.
func m0011ApprovalTask() *gormigrate.Migration {
	cols := []string{"task_id", "task_project_id", "task_title"}
	return &gormigrate.Migration{
		ID: "0011_approval_task",
		Migrate: func(tx *gorm.DB) error {
			for _, c := range cols {
				if err := tx.Exec("ALTER TABLE approvals ADD COLUMN " + c + " TEXT NOT NULL DEFAULT ''").Error; err != nil {
					return err
				}
			}
			return nil
		},
		Rollback: func(tx *gorm.DB) error {
			for _, c := range cols {
				if err := tx.Exec("ALTER TABLE approvals DROP COLUMN " + c).Error; err != nil {
					return err
				}
			}
			return nil
		},
	}
}
