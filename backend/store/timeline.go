package store

import (
	"fmt"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
)

// MaxTimelineBuckets bounds one timeline: a chart has no room for more bars,
// and the answer stays small whatever the range.
const MaxTimelineBuckets = 200

// Timeline counts the requests that arrived from From until To, in
// Buckets of equal length (to the millisecond), oldest first.
type Timeline struct {
	From    time.Time        `json:"from"`
	To      time.Time        `json:"to"`
	Buckets []TimelineBucket `json:"buckets"`
	Total   int              `json:"total"`
}

// TimelineBucket counts the requests that arrived in [Start, End) by their
// decision, grouped as the Activity chart shows them.
type TimelineBucket struct {
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	Allowed  int       `json:"allowed"`  // allow: no approval needed
	Approved int       `json:"approved"` // approved by a person
	Refused  int       `json:"refused"`  // declined by a person or denied by a policy
	Expired  int       `json:"expired"`  // timeout or expired: nobody decided in time
	Errors   int       `json:"errors"`   // error: refused before any decision
	Pending  int       `json:"pending"`  // not decided yet: waiting for a rule or a person
	Other    int       `json:"other"`    // a decision this version does not know
	Total    int       `json:"total"`
}

// add counts n requests with decision d.
func (b *TimelineBucket) add(d string, n int) {
	switch d {
	case core.DecisionAllow:
		b.Allowed += n
	case core.DecisionApproved:
		b.Approved += n
	case core.DecisionDeclined, core.DecisionDenied:
		b.Refused += n
	case core.DecisionTimeout, core.DecisionExpired:
		b.Expired += n
	case core.DecisionError:
		b.Errors += n
	case "":
		b.Pending += n
	default:
		b.Other += n
	}
	b.Total += n
}

// Timeline counts the records matching f that arrived in [from, to), in
// buckets of equal length, with one GROUP BY query. f's Since, Until,
// BeforeID and Limit must be unset: the range is from and to.
func (a *Audit) Timeline(f core.ActivityFilter, from, to time.Time, buckets int) (Timeline, error) {
	if err := checkTimeline(f, from, to, buckets); err != nil {
		return Timeline{}, err
	}
	fromMs, toMs := from.UnixMilli(), to.UnixMilli()
	span := toMs - fromMs
	out := Timeline{From: time.UnixMilli(fromMs).UTC(), To: time.UnixMilli(toMs).UTC(), Buckets: make([]TimelineBucket, buckets)}
	// Bucket i holds the records at fromMs + [ceil(i·span/n), ceil((i+1)·span/n)):
	// the integer division below puts a record there, and no bucket is
	// more than a millisecond longer than another.
	start := func(i int64) int64 { return fromMs + (i*span+int64(buckets)-1)/int64(buckets) }
	for i := range out.Buckets {
		out.Buckets[i].Start = time.UnixMilli(start(int64(i))).UTC()
		out.Buckets[i].End = time.UnixMilli(start(int64(i) + 1)).UTC()
	}
	conds, args := nearArrived(from, to)
	// Ids grow with arrival: the rows before from are skipped by the
	// primary key instead of read (the table has no index on time, so that
	// each call's commit writes one page).
	floor, err := a.firstIDNear(from)
	if err != nil {
		return Timeline{}, fmt.Errorf("count audit records over time: %w", err)
	}
	conds, args = "id >= ? AND "+conds, append([]any{floor}, args...)
	if cond, more := activityWhere(f); cond != "" {
		conds, args = conds+" AND "+cond, append(args, more...)
	}
	// The inner query's LIMIT -1 (no limit) keeps SQLite from flattening
	// it into the outer one, which would parse each row's time three times
	// instead of once (a third of the query's cost). The bucket's numbers
	// are integers formatted here, not user text.
	q := fmt.Sprintf(`SELECT (ms - %d) * %d / %d AS bucket, decision, COUNT(*) AS n
FROM (SELECT decision, %s AS ms FROM audit_records WHERE %s LIMIT -1)
WHERE ms >= ? AND ms < ? GROUP BY bucket, decision`, fromMs, buckets, span, arrivedMs, conds)
	var rows []struct {
		Bucket   int
		Decision string
		N        int
	}
	if err := a.db.Raw(q, append(args, fromMs, toMs)...).Scan(&rows).Error; err != nil {
		return Timeline{}, fmt.Errorf("count audit records over time: %w", err)
	}
	for _, r := range rows {
		if r.Bucket < 0 || r.Bucket >= buckets { // whereArrived keeps them in range; never trust that silently
			return Timeline{}, fmt.Errorf("count audit records over time: bucket %d outside 0..%d", r.Bucket, buckets-1)
		}
		out.Buckets[r.Bucket].add(r.Decision, r.N)
		out.Total += r.N
	}
	return out, nil
}

// firstIDNear returns an id at or below the first record that arrived at
// or after t, found by a binary search over the primary key (a few dozen
// index lookups whatever the table's size). Records' times follow their
// ids up to concurrent requests' jitter and other offsets in the text,
// which the margin of a day covers; the exact time test still decides.
func (a *Audit) firstIDNear(t time.Time) (int64, error) {
	target := t.Add(-offsetMargin).UTC().Format(timeLayout)
	var bounds struct{ Lo, Hi *int64 }
	if err := a.db.Raw("SELECT MIN(id) AS lo, MAX(id) AS hi FROM audit_records").Scan(&bounds).Error; err != nil {
		return 0, err
	}
	if bounds.Lo == nil {
		return 0, nil
	}
	lo, hi := *bounds.Lo, *bounds.Hi+1
	for lo < hi {
		mid := lo + (hi-lo)/2
		var row struct {
			ID   int64
			Time string
		}
		if err := a.db.Raw("SELECT id, time FROM audit_records WHERE id >= ? ORDER BY id LIMIT 1", mid).Scan(&row).Error; err != nil {
			return 0, err
		}
		if row.ID == 0 || row.Time >= target {
			hi = mid
		} else {
			lo = row.ID + 1
		}
	}
	return lo, nil
}

// checkTimeline refuses a timeline that is unbounded, empty, too fine or
// ambiguous, saying what to change.
func checkTimeline(f core.ActivityFilter, from, to time.Time, buckets int) error {
	switch {
	case buckets < 1 || buckets > MaxTimelineBuckets:
		return core.Errorf(core.EInvalid, "a timeline has 1 to %d buckets, not %d", MaxTimelineBuckets, buckets)
	case from.IsZero() || to.IsZero():
		return core.Errorf(core.EInvalid, "a timeline needs a start and an end time")
	case from.Year() < 1 || to.Year() > 9999: // as JSON carries them; keeps the millisecond arithmetic in int64
		return core.Errorf(core.EInvalid, "a timeline lies within the years 1 to 9999")
	case !to.After(from):
		return core.Errorf(core.EInvalid, "the timeline's end (%s) is not after its start (%s)",
			to.UTC().Format(time.RFC3339Nano), from.UTC().Format(time.RFC3339Nano))
	case to.UnixMilli()-from.UnixMilli() < int64(buckets):
		return core.Errorf(core.EInvalid, "the timeline from %s to %s is too short for %d buckets of at least a millisecond",
			from.UTC().Format(time.RFC3339Nano), to.UTC().Format(time.RFC3339Nano), buckets)
	case !f.Since.IsZero() || !f.Until.IsZero():
		return core.Errorf(core.EInvalid, "a timeline's range is its start and end; leave the filter's since and until empty")
	case f.BeforeID != 0 || f.Limit != 0:
		return core.Errorf(core.EInvalid, "a timeline counts every matching record; leave the filter's beforeId and limit empty")
	}
	return nil
}

// Timeline counts the records matching f that arrived in [from, to), by
// bucket and decision (see Audit.Timeline), including the ones appended a
// moment ago.
func (l *AuditLog) Timeline(f core.ActivityFilter, from, to time.Time, buckets int) (Timeline, error) {
	if err := l.Flush(); err != nil {
		return Timeline{}, err
	}
	return l.audit.Timeline(f, from, to, buckets)
}
