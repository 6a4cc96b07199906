package store

import (
	"fmt"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
)

type auditRow core.AuditRecord

func (auditRow) TableName() string { return "audit_records" }

// Audit is the append-only log of calls through the pipeline.
type Audit struct{ db *DB }

// NewAudit returns the audit repository over db.
func NewAudit(db *DB) *Audit { return &Audit{db: db} }

const auditColumns = `time, kind, agent, agent_id, client, client_version, session, purpose, server, tool, arguments, args_digest,
 decision, reason, rule_id, rule_set_version, approver, wait_ms, status, error_code, error, latency_us`

var auditPlaceholders = strings.TrimSuffix(strings.Repeat("?,", strings.Count(auditColumns, ",")+1), ",")

// Append writes recs in one transaction and sets their IDs. Airlock itself
// records calls through AuditLog; Append is for tools and tests that have
// the database to themselves.
func (a *Audit) Append(recs []*core.AuditRecord) error { return a.insert(recs, "INSERT") }

// upsert writes recs keeping their ids; a record stored already is replaced
// by the newer version (a request's Finish after its Begin, or a journal
// replayed twice).
func (a *Audit) upsert(recs []*core.AuditRecord) error { return a.insert(recs, "INSERT OR REPLACE") }

// insert writes recs in one transaction with verb (INSERT, or INSERT OR
// REPLACE). A record without an id gets the next rowid.
//
// It skips GORM's reflection and uses one prepared statement: GORM made the
// audit write the slowest stage of a proxied call.
func (a *Audit) insert(recs []*core.AuditRecord, verb string) error {
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
	q := verb + " INTO audit_records (id, " + auditColumns + ") VALUES (?," + auditPlaceholders + ")"
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
		kind := r.Kind
		if kind == "" {
			kind = core.KindToolCall
		}
		res, err := stmt.Exec(id, r.Time.UTC().Format(timeLayout), kind, r.Agent, r.AgentID, r.Client, r.ClientVersion, r.Session, r.Purpose,
			r.Server, r.Tool, r.Arguments, r.ArgsDigest,
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

// Activity pages: the default and the largest number of records one List
// returns, and how much of each record's arguments a list carries (Get
// returns all of them).
const (
	DefaultActivityPage = 200
	MaxActivityPage     = 500
	MaxListArguments    = 2 << 10
)

// List returns the newest records matching f, newest (latest arrival)
// first, at most MaxActivityPage of them, with their arguments cut to
// MaxListArguments.
func (a *Audit) List(f core.ActivityFilter) ([]core.AuditRecord, error) {
	q := a.db.Model(&auditRow{}).Order("id DESC")
	if f.Agent != "" {
		q = q.Where("agent = ? OR agent_id = ?", f.Agent, f.Agent)
	}
	if f.Server != "" {
		q = q.Where("server = ?", f.Server)
	}
	if f.Tool != "" {
		q = q.Where("tool = ?", f.Tool)
	}
	if f.Kind != "" {
		q = q.Where("kind = ?", f.Kind)
	}
	if f.Decision != "" {
		q = q.Where("decision = ?", f.Decision)
	}
	if f.BeforeID > 0 {
		q = q.Where("id < ?", f.BeforeID)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultActivityPage
	}
	limit = min(limit, MaxActivityPage)
	var rows []auditRow
	if !f.Full {
		q = q.Select(listColumns)
	}
	if err := q.Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list audit records: %w", err)
	}
	out := make([]core.AuditRecord, len(rows))
	for i, r := range rows {
		out[i] = core.AuditRecord(r)
	}
	return out, nil
}

// listColumns reads every column, but only the start of the arguments.
var listColumns = "id, " + auditColumns[:strings.Index(auditColumns, "arguments")] +
	fmt.Sprintf("CASE WHEN length(arguments) > %d THEN substr(arguments, 1, %d) || '…(cut)' ELSE arguments END AS arguments", MaxListArguments, MaxListArguments) +
	auditColumns[strings.Index(auditColumns, "arguments")+len("arguments"):]

// get returns one whole record.
func (a *Audit) get(id int64) (core.AuditRecord, bool, error) {
	var row auditRow
	err := a.db.Where("id = ?", id).Take(&row).Error
	if isNotFound(err) {
		return core.AuditRecord{}, false, nil
	}
	if err != nil {
		return core.AuditRecord{}, false, fmt.Errorf("read audit record %d: %w", id, err)
	}
	return core.AuditRecord(row), true, nil
}

// running returns the records whose request has not finished.
func (a *Audit) running() ([]core.AuditRecord, error) {
	var rows []auditRow
	if err := a.db.Where("status = ?", core.StatusRunning).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list running audit records: %w", err)
	}
	out := make([]core.AuditRecord, len(rows))
	for i, r := range rows {
		out[i] = core.AuditRecord(r)
	}
	return out, nil
}
