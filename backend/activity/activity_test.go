package activity_test

import (
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/activity"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/events"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/google/go-cmp/cmp"
)

func openLog(t *testing.T) *store.AuditLog {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	l, err := store.OpenDataDirAuditLog(db, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(); db.Close() })
	return l
}

// A UI that listens sees every request twice, as it begins and as it ends.
func TestRecorderAnnouncesToListeners(t *testing.T) {
	hub := events.NewHub()
	sub := hub.Subscribe([]string{events.Topic(core.EventActivity)})
	defer sub.Close()
	r := activity.New(openLog(t), hub, nil)
	defer r.Close()

	rec := &core.AuditRecord{Time: time.Now().UTC(), Kind: core.KindToolCall, Tool: "echo", Status: core.StatusRunning}
	if err := r.Begin(rec); err != nil {
		t.Fatal(err)
	}
	rec.Status = core.StatusOK
	if err := r.Finish(rec); err != nil {
		t.Fatal(err)
	}
	var got []string
	timeout := time.After(30 * time.Second) // a guard, not a measurement
	for len(got) < 2 {
		select {
		case ev := <-sub.C():
			for _, a := range ev.Payload.([]core.AuditRecord) {
				got = append(got, a.Status)
			}
		case <-timeout:
			t.Fatalf("after 30 s the UI has seen %v, want the record running and then ok", got)
		}
	}
	if diff := cmp.Diff([]string{core.StatusRunning, core.StatusOK}, got); diff != "" {
		t.Errorf("statuses the UI saw (-want +got):\n%s", diff)
	}
}

// switchSink is a sink whose listeners come and go; it hands on the tools
// of the records it is sent.
type switchSink struct {
	listening atomic.Bool
	tools     chan string
}

func (s *switchSink) Emit(name string, payload any) {
	if name != core.EventActivity {
		return
	}
	for _, r := range payload.([]core.AuditRecord) {
		s.tools <- r.Tool
	}
}

func (s *switchSink) Wants(string) bool { return s.listening.Load() }

// Records made while no UI listens are stored, and not queued for the UI:
// the first record a UI that starts listening sees is its own.
func TestRecorderSkipsWhenNobodyListens(t *testing.T) {
	l := openLog(t)
	sink := &switchSink{tools: make(chan string, 16)}
	r := activity.New(l, sink, nil)
	defer r.Close()
	unseen := &core.AuditRecord{Time: time.Now().UTC(), Tool: "unseen", Status: core.StatusRunning}
	if err := r.Begin(unseen); err != nil {
		t.Fatal(err)
	}
	if err := r.Finish(unseen); err != nil {
		t.Fatal(err)
	}
	sink.listening.Store(true)
	if err := r.Begin(&core.AuditRecord{Time: time.Now().UTC(), Tool: "seen", Status: core.StatusRunning}); err != nil {
		t.Fatal(err)
	}
	select {
	case tool := <-sink.tools:
		// Records reach the sink in order: "unseen" would come first had
		// it been queued.
		if tool != "seen" {
			t.Errorf("first record the UI got is %q, want \"seen\" (nothing from before it listened)", tool)
		}
	case <-time.After(30 * time.Second): // a guard, not a measurement
		t.Fatal("the listening UI got nothing in 30 s")
	}
	if got, ok, err := l.Get(unseen.ID); err != nil || !ok || got.Tool != "unseen" {
		t.Errorf("record made while nobody listened = %+v, %v, %v; want it stored all the same", got, ok, err)
	}
}
