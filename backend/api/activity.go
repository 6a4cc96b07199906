package api

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strconv"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
)

// Activity is the Activity screen: the audit log of every request.
type Activity struct{ d Deps }

// List returns audit records matching f, newest first: at most 500, each
// with its arguments cut to 2 KiB (Get returns a whole record).
func (a *Activity) List(f core.ActivityFilter) ([]core.AuditRecord, error) {
	recs, err := a.d.Audit.List(f)
	if recs == nil {
		recs = []core.AuditRecord{}
	}
	return recs, err
}

// Get returns one whole audit record.
func (a *Activity) Get(id int64) (core.AuditRecord, error) {
	rec, ok, err := a.d.Audit.Get(id)
	if err != nil {
		return core.AuditRecord{}, err
	}
	if !ok {
		return core.AuditRecord{}, core.Errorf(core.ENotFound, "audit record %d not found", id)
	}
	return rec, nil
}

// Timeline counts the requests matching f that arrived in [from, to), in
// buckets of equal length (1 to 200), by decision: the Activity chart. f's
// since, until, beforeId and limit must be empty.
func (a *Activity) Timeline(f core.ActivityFilter, from, to time.Time, buckets int) (store.Timeline, error) {
	return a.d.Audit.Timeline(f, from, to, buckets)
}

// maxExport bounds one export; older records stay in the database.
const maxExport = 100_000

// Export returns the records matching f (newest first, at most 100,000,
// whole) as "json" (an array) or "csv" (a header row, then one row each).
func (a *Activity) Export(f core.ActivityFilter, format string) (string, error) {
	if format != "json" && format != "csv" {
		return "", core.Errorf(core.EInvalid, "unknown export format %q (use json or csv)", format)
	}
	var all []core.AuditRecord
	f.BeforeID, f.Limit, f.Full = 0, store.MaxActivityPage, true
	for len(all) < maxExport {
		page, err := a.d.Audit.List(f)
		if err != nil {
			return "", err
		}
		all = append(all, page...)
		if len(page) < f.Limit {
			break
		}
		f.BeforeID = page[len(page)-1].ID
	}
	if all == nil {
		all = []core.AuditRecord{}
	}
	if format == "json" {
		b, err := json.MarshalIndent(all, "", "  ")
		return string(b), err
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{"id", "time", "kind", "agent", "agent_id", "client", "client_version", "session", "purpose", "server", "tool",
		"decision", "reason", "rule_id", "rule_set_version", "approver", "wait_ms", "status", "error_code", "error", "latency_us",
		"arguments", "args_digest"})
	for _, r := range all {
		w.Write([]string{strconv.FormatInt(r.ID, 10), r.Time.UTC().Format(time.RFC3339Nano), r.Kind, r.Agent, r.AgentID, r.Client,
			r.ClientVersion, r.Session, r.Purpose, r.Server, r.Tool, r.Decision, r.Reason, r.RuleID,
			strconv.FormatInt(r.RuleSetVersion, 10), r.Approver, strconv.FormatInt(r.WaitMs, 10), r.Status, r.ErrorCode, r.Error,
			strconv.FormatInt(r.LatencyUs, 10), r.Arguments, r.ArgsDigest})
	}
	w.Flush()
	return buf.String(), w.Error()
}
