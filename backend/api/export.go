package api

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strconv"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
)

// maxExport bounds one export; older records stay in the database.
const maxExport = 100_000

// ExportActivity returns the records matching f (newest first, at most
// 100,000) as "json" (an array) or "csv" (a header row, then one row each).
func (a *API) ExportActivity(f core.ActivityFilter, format string) (string, error) {
	if format != "json" && format != "csv" {
		return "", core.Errorf(core.EInvalid, "unknown export format %q (use json or csv)", format)
	}
	var all []core.AuditRecord
	f.BeforeID, f.Limit = 0, 1000
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
	w.Write([]string{"id", "time", "agent", "session", "server", "tool", "decision", "reason", "rule_id", "rule_set_version",
		"approver", "wait_ms", "status", "error_code", "error", "latency_us", "arguments", "args_digest"})
	for _, r := range all {
		w.Write([]string{strconv.FormatInt(r.ID, 10), r.Time.UTC().Format(time.RFC3339Nano), r.Agent, r.Session, r.Server, r.Tool,
			r.Decision, r.Reason, r.RuleID, strconv.FormatInt(r.RuleSetVersion, 10), r.Approver, strconv.FormatInt(r.WaitMs, 10),
			r.Status, r.ErrorCode, r.Error, strconv.FormatInt(r.LatencyUs, 10), r.Arguments, r.ArgsDigest})
	}
	w.Flush()
	return buf.String(), w.Error()
}
