package store_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/google/go-cmp/cmp"
)

// t0 is the start of the timelines below: 10:00 UTC.
var t0 = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

func at(d time.Duration, decision string, over ...func(*core.AuditRecord)) *core.AuditRecord {
	r := &core.AuditRecord{Time: t0.Add(d), Kind: core.KindToolCall, Agent: "a1", Server: "fs", Tool: "read_file", Decision: decision, Status: core.StatusOK}
	for _, f := range over {
		f(r)
	}
	return r
}

// bucket is a TimelineBucket of one minute from t0+m minutes with counts.
func bucket(m int, counts store.TimelineBucket) store.TimelineBucket {
	counts.Start = t0.Add(time.Duration(m) * time.Minute)
	counts.End = counts.Start.Add(time.Minute)
	counts.Total = counts.Allowed + counts.Approved + counts.Refused + counts.Expired + counts.Errors + counts.Pending + counts.Other
	return counts
}

// Requests are counted per minute by decision group, for the same filters
// the Activity list takes; the range is [from, to).
func TestTimelineCountsByBucketAndDecision(t *testing.T) {
	a := store.NewAudit(openDB(t))
	recs := []*core.AuditRecord{
		at(-time.Millisecond, core.DecisionAllow), // before the range
		at(0, core.DecisionAllow),                 // the range's first millisecond
		at(30*time.Second, core.DecisionApproved, func(r *core.AuditRecord) { r.Agent, r.AgentID = "Alice", "a-1" }),
		at(time.Minute-time.Millisecond, core.DecisionDeclined), // the first minute's last millisecond
		at(time.Minute, core.DecisionDenied, func(r *core.AuditRecord) { r.Server = "shell" }),
		at(time.Minute+time.Second, core.DecisionTimeout, func(r *core.AuditRecord) { r.Tool = "exec" }),
		at(time.Minute+2*time.Second, core.DecisionExpired, func(r *core.AuditRecord) { r.Kind = core.KindPromptGet }),
		at(2*time.Minute+123456789*time.Nanosecond, core.DecisionError),
		at(2*time.Minute+time.Second, "", func(r *core.AuditRecord) { r.Status = core.StatusRunning }),
		at(2*time.Minute+2*time.Second, "maybe-later"),
		at(3*time.Minute, core.DecisionAllow), // the range's end: outside
	}
	if err := a.Append(recs); err != nil {
		t.Fatal(err)
	}
	to := t0.Add(3 * time.Minute)
	cases := []struct {
		name string
		f    core.ActivityFilter
		want []store.TimelineBucket
	}{
		{"all", core.ActivityFilter{}, []store.TimelineBucket{
			bucket(0, store.TimelineBucket{Allowed: 1, Approved: 1, Refused: 1}),
			bucket(1, store.TimelineBucket{Refused: 1, Expired: 2}),
			bucket(2, store.TimelineBucket{Errors: 1, Pending: 1, Other: 1}),
		}},
		{"agent by id", core.ActivityFilter{Agent: "a-1"}, []store.TimelineBucket{
			bucket(0, store.TimelineBucket{Approved: 1}), bucket(1, store.TimelineBucket{}), bucket(2, store.TimelineBucket{}),
		}},
		{"server", core.ActivityFilter{Server: "shell"}, []store.TimelineBucket{
			bucket(0, store.TimelineBucket{}), bucket(1, store.TimelineBucket{Refused: 1}), bucket(2, store.TimelineBucket{}),
		}},
		{"tool", core.ActivityFilter{Tool: "exec"}, []store.TimelineBucket{
			bucket(0, store.TimelineBucket{}), bucket(1, store.TimelineBucket{Expired: 1}), bucket(2, store.TimelineBucket{}),
		}},
		{"kind", core.ActivityFilter{Kind: core.KindPromptGet}, []store.TimelineBucket{
			bucket(0, store.TimelineBucket{}), bucket(1, store.TimelineBucket{Expired: 1}), bucket(2, store.TimelineBucket{}),
		}},
		{"decision", core.ActivityFilter{Decision: core.DecisionDeclined}, []store.TimelineBucket{
			bucket(0, store.TimelineBucket{Refused: 1}), bucket(1, store.TimelineBucket{}), bucket(2, store.TimelineBucket{}),
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := a.Timeline(c.f, t0, to, 3)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got.Buckets); diff != "" {
				t.Errorf("Timeline(%+v) buckets (-want +got):\n%s", c.f, diff)
			}
			total := 0
			for _, b := range c.want {
				total += b.Total
			}
			if got.Total != total || !got.From.Equal(t0) || !got.To.Equal(to) {
				t.Errorf("Timeline(%+v) = total %d from %s to %s; want total %d from %s to %s", c.f, got.Total, got.From, got.To, total, t0, to)
			}
		})
	}
}

// Picking a bar lists exactly the records the bar counts: List with the
// bucket's Since and Until returns Total records, for buckets of uneven
// length, records a microsecond either side of a boundary, and a record
// written with a UTC offset other than Airlock's.
func TestTimelineBucketsMatchTheListsTimeFilter(t *testing.T) {
	db := openDB(t)
	a := store.NewAudit(db)
	var recs []*core.AuditRecord
	for _, d := range []time.Duration{0, 3, 4, 6, 7, 9, 10} { // milliseconds
		recs = append(recs, at(d*time.Millisecond, core.DecisionAllow))
	}
	recs = append(recs,
		at(4*time.Millisecond-time.Microsecond, core.DecisionAllow),
		at(7*time.Millisecond+time.Microsecond, core.DecisionAllow))
	if err := a.Append(recs); err != nil {
		t.Fatal(err)
	}
	// Stored at +02:00 (12:00:00.005 local is 10:00:00.005 UTC): a text
	// comparison alone would put it two hours late.
	if err := db.Exec("INSERT INTO audit_records (time, kind, agent, server, tool, decision, status) VALUES (?, 'tools/call', 'a1', 'fs', 'x', 'allow', 'ok')",
		"2026-11-25 12:00:00.005+02:00").Error; err != nil {
		t.Fatal(err)
	}
	// 10 ms in 3 buckets: [0,4) [4,7) [7,10).
	got, err := a.Timeline(core.ActivityFilter{}, t0, t0.Add(10*time.Millisecond), 3)
	if err != nil {
		t.Fatal(err)
	}
	wantStarts := []time.Duration{0, 4, 7}
	for i, b := range got.Buckets {
		if start := b.Start.Sub(t0); start != wantStarts[i]*time.Millisecond {
			t.Errorf("bucket %d starts at +%s, want +%dms", i, start, wantStarts[i])
		}
		listed, err := a.List(core.ActivityFilter{Since: b.Start, Until: b.End})
		if err != nil {
			t.Fatal(err)
		}
		if len(listed) != b.Total {
			t.Errorf("bucket %d [%s, %s) counts %d, the list with its range has %d: %+v", i, b.Start.Sub(t0), b.End.Sub(t0), b.Total, len(listed), listed)
		}
	}
	if got.Total != 9 {
		t.Errorf("timeline total = %d, want 9 (the record at the end is outside, the +02:00 one inside)", got.Total)
	}
}

// Bad ranges are refused with EInvalid and a message that says what is
// wrong, before any query runs.
func TestTimelineRefusesBadInput(t *testing.T) {
	a := store.NewAudit(openDB(t))
	cases := []struct {
		name     string
		f        core.ActivityFilter
		from, to time.Time
		buckets  int
		want     string
	}{
		{"no buckets", core.ActivityFilter{}, t0, t0.Add(time.Hour), 0, "a timeline has 1 to 200 buckets, not 0"},
		{"too many buckets", core.ActivityFilter{}, t0, t0.Add(time.Hour), 201, "a timeline has 1 to 200 buckets, not 201"},
		{"no start", core.ActivityFilter{}, time.Time{}, t0, 10, "a timeline needs a start and an end time"},
		{"no end", core.ActivityFilter{}, t0, time.Time{}, 10, "a timeline needs a start and an end time"},
		{"end before start", core.ActivityFilter{}, t0, t0.Add(-time.Hour), 10,
			"the timeline's end (2026-11-25T09:00:00Z) is not after its start (2026-11-25T10:00:00Z)"},
		{"empty", core.ActivityFilter{}, t0, t0, 10, "the timeline's end (2026-11-25T10:00:00Z) is not after its start (2026-11-25T10:00:00Z)"},
		{"too fine", core.ActivityFilter{}, t0, t0.Add(5 * time.Millisecond), 10,
			"the timeline from 2026-11-25T10:00:00Z to 2026-11-25T10:00:00.005Z is too short for 10 buckets of at least a millisecond"},
		{"beyond year 9999", core.ActivityFilter{}, t0, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), 10, "a timeline lies within the years 1 to 9999"},
		{"since in the filter", core.ActivityFilter{Since: t0}, t0, t0.Add(time.Hour), 10,
			"a timeline's range is its start and end; leave the filter's since and until empty"},
		{"limit in the filter", core.ActivityFilter{Limit: 5}, t0, t0.Add(time.Hour), 10,
			"a timeline counts every matching record; leave the filter's beforeId and limit empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := a.Timeline(c.f, c.from, c.to, c.buckets)
			var e *core.Error
			if !errors.As(err, &e) || e.Code != core.EInvalid {
				t.Fatalf("Timeline = %v; want a *core.Error with code %s", err, core.EInvalid)
			}
			if diff := cmp.Diff(c.want, e.Message); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}

// The audit log's timeline includes records appended a moment ago, still
// only in the journal.
func TestAuditLogTimelineIncludesUnflushedRecords(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, err := store.OpenAuditLog(db, filepath.Join(dir, store.JournalFileName), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append([]*core.AuditRecord{at(time.Second, core.DecisionAllow), at(2*time.Second, core.DecisionDeclined)}); err != nil {
		t.Fatal(err)
	}
	got, err := l.Timeline(core.ActivityFilter{}, t0, t0.Add(time.Minute), 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.TimelineBucket{bucket(0, store.TimelineBucket{Allowed: 1, Refused: 1})}
	if diff := cmp.Diff(want, got.Buckets); diff != "" {
		t.Errorf("buckets (-want +got):\n%s", diff)
	}
}

// BenchmarkTimeline is the Activity chart's query over a week of 100,000
// requests: the last hour (a few rows near the range are parsed) and the
// whole week (every row is).
func BenchmarkTimeline(b *testing.B) {
	a := store.NewAudit(openDB(b))
	const n = 100_000
	week := 7 * 24 * time.Hour
	recs := make([]*core.AuditRecord, n)
	decisions := []string{core.DecisionAllow, core.DecisionAllow, core.DecisionApproved, core.DecisionDeclined, core.DecisionError}
	for i := range recs {
		recs[i] = at(time.Duration(i)*week/n, decisions[i%len(decisions)])
	}
	if err := a.Append(recs); err != nil {
		b.Fatal(err)
	}
	end := t0.Add(week)
	for _, c := range []struct {
		name  string
		from  time.Time
		count int
	}{{"hour", end.Add(-time.Hour), 60}, {"week", t0, 168}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := a.Timeline(core.ActivityFilter{}, c.from, end, c.count); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A timeline that starts late in a long log skips the older rows by id and
// still counts every row of its range, to the edges.
func TestTimelineLateInALongLog(t *testing.T) {
	a := store.NewAudit(openDB(t))
	const n = 2000
	span := 10 * 24 * time.Hour
	recs := make([]*core.AuditRecord, n)
	for i := range recs {
		recs[i] = at(time.Duration(i)*span/n, core.DecisionAllow)
	}
	if err := a.Append(recs); err != nil {
		t.Fatal(err)
	}
	for _, days := range []int{1, 2, 9} {
		from := t0.Add(span - time.Duration(days)*24*time.Hour)
		tl, err := a.Timeline(core.ActivityFilter{}, from, t0.Add(span), 24)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for i := range recs {
			if !recs[i].Time.Before(from) {
				want++
			}
		}
		if tl.Total != want {
			t.Errorf("last %d days: %d records counted, want %d", days, tl.Total, want)
		}
	}
}
