package store

import (
	"fmt"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"gorm.io/gorm"
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
	if cond, args := activityWhere(f); cond != "" {
		q = q.Where(cond, args...)
	}
	q = whereArrived(q, f.Since, f.Until)
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

// activityWhere is the SQL condition (and its arguments) selecting the
// records matching f's agent, server, tool, kind and decision: the filters
// the Activity list and its chart share. It is "" when f has none.
func activityWhere(f core.ActivityFilter) (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, a ...any) { conds, args = append(conds, cond), append(args, a...) }
	if f.Agent != "" {
		add("(agent = ? OR agent_id = ?)", f.Agent, f.Agent)
	}
	if f.Server != "" {
		add("server = ?", f.Server)
	}
	if f.Tool != "" {
		add("tool = ?", f.Tool)
	}
	if f.Kind != "" {
		add("kind = ?", f.Kind)
	}
	if f.Decision != "" {
		add("decision = ?", f.Decision)
	}
	return strings.Join(conds, " AND "), args
}

// arrivedMs is a record's arrival time in Unix milliseconds, as SQLite
// reads the stored text (julianday keeps whole milliseconds; ROUND undoes
// the float's error). The list's time filter and the chart's buckets both
// use it, so a picked bar lists exactly the records it counted.
const arrivedMs = "CAST(ROUND((julianday(time) - 2440587.5) * 86400000) AS INTEGER)"

// offsetMargin widens the cheap text comparison that comes before
// arrivedMs (parsing every row's time would cost more than the scan).
// Airlock stores times in UTC, where the text sorts as the time does; a row
// written with another offset is at most 14 hours off in text, so a day's
// margin never drops a row, and the exact comparison in milliseconds
// decides.
const offsetMargin = 24 * time.Hour

// nearArrived is the cheap condition (and its arguments) keeping the
// records that may have arrived in [since, until); zero times are no bound.
func nearArrived(since, until time.Time) (string, []any) {
	var conds []string
	var args []any
	if !since.IsZero() {
		conds, args = append(conds, "time >= ?"), append(args, since.Add(-offsetMargin).UTC().Format(timeLayout))
	}
	if !until.IsZero() {
		conds, args = append(conds, "time < ?"), append(args, until.Add(offsetMargin).UTC().Format(timeLayout))
	}
	return strings.Join(conds, " AND "), args
}

// whereArrived narrows q to the records that arrived in [since, until),
// to the millisecond; a zero time is no bound.
func whereArrived(q *gorm.DB, since, until time.Time) *gorm.DB {
	if near, args := nearArrived(since, until); near != "" {
		q = q.Where(near, args...)
	}
	if !since.IsZero() {
		q = q.Where(arrivedMs+" >= ?", since.UnixMilli())
	}
	if !until.IsZero() {
		q = q.Where(arrivedMs+" < ?", until.UnixMilli())
	}
	return q
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
