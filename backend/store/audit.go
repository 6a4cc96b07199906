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

const auditColumns = `time, agent, client, session, server, tool, arguments, args_digest,
 decision, reason, rule_id, rule_set_version, approver, wait_ms, status, error_code, error, latency_us`

// Append writes recs in one transaction and sets their IDs. Airlock itself
// records calls through AuditLog; Append is for tools and tests that have
// the database to themselves.
func (a *Audit) Append(recs []*core.AuditRecord) error { return a.insert(recs, false) }

// insert writes recs in one transaction. With explicitIDs the records keep
// their ids and ones already stored are skipped (replaying a journal twice
// changes nothing); otherwise SQLite assigns ids, or keeps one already set.
//
// It skips GORM's reflection and uses one prepared statement: GORM made the
// audit write the slowest stage of a proxied call.
func (a *Audit) insert(recs []*core.AuditRecord, explicitIDs bool) error {
	if len(recs) == 0 {
		return nil
	}
	sqlDB, err := a.db.DB.DB()
	if err != nil {
		return err
	}
	tx, err := sqlDB.Begin()
	if err != nil {
		return fmt.Errorf("append audit records: %w", err)
	}
	defer tx.Rollback()
	q := "INSERT INTO audit_records (id, " + auditColumns + ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
	if explicitIDs {
		q = "INSERT OR IGNORE" + q[len("INSERT"):]
	}
	stmt, err := tx.Prepare(q)
	if err != nil {
		return fmt.Errorf("append audit records: %w", err)
	}
	defer stmt.Close()
	for _, r := range recs {
		var id any // NULL lets SQLite pick the next rowid
		if r.ID != 0 {
			id = r.ID
		}
		res, err := stmt.Exec(id, r.Time.UTC().Format(timeLayout), r.Agent, r.Client, r.Session, r.Server, r.Tool, r.Arguments, r.ArgsDigest,
			r.Decision, r.Reason, r.RuleID, r.RuleSetVersion, r.Approver, r.WaitMs, r.Status, r.ErrorCode, r.Error, r.LatencyUs)
		if err != nil {
			return fmt.Errorf("append audit record: %w", err)
		}
		if r.ID == 0 {
			r.ID, _ = res.LastInsertId()
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit %d audit records: %w", len(recs), err)
	}
	return nil
}

// timeLayout is how the glebarez driver stores time.Time, so GORM reads
// these rows back as it reads its own.
const timeLayout = "2006-01-02 15:04:05.999999999-07:00"

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
