package store

import (
	"fmt"

	"github.com/airlock-dev/airlock/backend/core"
)

type auditRow core.AuditRecord

func (auditRow) TableName() string { return "audit_records" }

// Audit is the append-only log of calls through the pipeline.
type Audit struct{ db *DB }

// NewAudit returns the audit repository over db.
func NewAudit(db *DB) *Audit { return &Audit{db: db} }

// Append writes recs in one transaction and sets their IDs. Each committed
// transaction is durable in the WAL, so a kill -9 right after loses nothing.
func (a *Audit) Append(recs []*core.AuditRecord) error {
	if len(recs) == 0 {
		return nil
	}
	rows := make([]*auditRow, len(recs))
	for i, r := range recs {
		rows[i] = (*auditRow)(r)
	}
	if err := a.db.Create(rows).Error; err != nil {
		return fmt.Errorf("append %d audit records: %w", len(recs), err)
	}
	return nil
}

// List returns the newest records matching f, newest first.
func (a *Audit) List(f core.ActivityFilter) ([]core.AuditRecord, error) {
	q := a.db.Model(&auditRow{}).Order("id DESC")
	if f.Agent != "" {
		q = q.Where("agent = ?", f.Agent)
	}
	if f.Server != "" {
		q = q.Where("server = ?", f.Server)
	}
	if f.Tool != "" {
		q = q.Where("tool = ?", f.Tool)
	}
	if f.Decision != "" {
		q = q.Where("decision = ?", f.Decision)
	}
	if f.BeforeID > 0 {
		q = q.Where("id < ?", f.BeforeID)
	}
	limit := f.Limit
	if limit <= 0 || limit > 1000 {
		limit = 200
	}
	var rows []auditRow
	if err := q.Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list audit records: %w", err)
	}
	out := make([]core.AuditRecord, len(rows))
	for i, r := range rows {
		out[i] = core.AuditRecord(r)
	}
	return out, nil
}
