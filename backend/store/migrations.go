package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

func nowUTC() time.Time { return time.Now().UTC() }

// migrations is the ordered schema history. Each migration keeps its own copy
// of the structs it creates, so later changes to the live types never change
// what an old migration does. Append only.
func migrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{
		m0001Foundation(),
		m0002HITL(),
		m0003ToolPins(),
		m0004Client(),
		m0005Requests(),
		m0006Agents(),
		m0007Teams(),
		m0008RelayRules(),
		m0009Runs(),
		m0010DefaultRules(),
		m0011ApprovalTask(),
		m0012MCPSessions(),
		m0013SessionSubs(),
		m0014ExecutionsOutliveAgents(),
		m0015InstructionPins(),
		m0016ToolPinFormat(),
		m0017RedactDecidedApprovals(),
	}
}

// Migrate brings db to the newest schema.
func Migrate(db *gorm.DB) error {
	return MigrateTo(db, "")
}

// MigrateTo migrates up to and including the migration with the given id (all
// of them when id is empty). Tests use it to build databases of older versions.
func MigrateTo(db *gorm.DB, id string) error {
	m := gormigrate.New(db, &gormigrate.Options{
		TableName:                 "schema_migrations",
		IDColumnName:              "id",
		IDColumnSize:              255,
		UseTransaction:            true,
		ValidateUnknownMigrations: true,
	}, migrations())
	if id == "" {
		return m.Migrate()
	}
	return m.MigrateTo(id)
}

func m0001Foundation() *gormigrate.Migration {
	type Setting struct {
		Key       string `gorm:"primaryKey"`
		Value     string `gorm:"not null"`
		UpdatedAt time.Time
	}
	// Only the primary key is indexed: ids grow with time, the Activity
	// screen pages by id, and every secondary index would add a page write
	// to each call's commit.
	type AuditRecord struct {
		ID             int64     `gorm:"primaryKey;autoIncrement:false"` // a rowid alias: AUTOINCREMENT would cost a page write per call
		Time           time.Time `gorm:"not null"`
		Agent          string    `gorm:"not null;default:''"`
		Session        string    `gorm:"not null;default:''"`
		Server         string    `gorm:"not null;default:''"`
		Tool           string    `gorm:"not null;default:''"`
		Arguments      string    `gorm:"not null;default:''"`
		ArgsDigest     string    `gorm:"not null;default:''"`
		Decision       string    `gorm:"not null;default:''"`
		Reason         string    `gorm:"not null;default:''"`
		RuleID         string    `gorm:"not null;default:''"`
		RuleSetVersion int64     `gorm:"not null;default:0"`
		Approver       string    `gorm:"not null;default:''"`
		WaitMs         int64     `gorm:"not null;default:0"`
		Status         string    `gorm:"not null;default:''"`
		ErrorCode      string    `gorm:"not null;default:''"`
		Error          string    `gorm:"not null;default:''"`
		LatencyUs      int64     `gorm:"not null;default:0"`
	}
	return &gormigrate.Migration{
		ID: "0001_foundation",
		Migrate: func(tx *gorm.DB) error {
			return tx.AutoMigrate(&Setting{}, &AuditRecord{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("audit_records", "settings")
		},
	}
}
