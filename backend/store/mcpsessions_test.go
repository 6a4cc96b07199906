package store_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/testutil"
)

// Sessions are kept by a hash of their id (the database holds nothing a
// client could present), updated in place, forgotten when they end or
// when no run has seen them for long.
func TestMCPSessions(t *testing.T) {
	db := testutil.MustOpenDB(t)
	m := store.NewMCPSessions(db)
	const id = "SESSIONID7XQ2"
	if err := m.Save(id, "cred-hash", []byte(`{"logLevel":"info"}`)); err != nil {
		t.Fatal(err)
	}
	if err := m.Save(id, "cred-hash", []byte(`{"logLevel":"debug"}`)); err != nil {
		t.Fatal(err)
	}
	if err := m.Bind(id, "ses_1"); err != nil {
		t.Fatal(err)
	}
	subs := [][2]string{{"everything", "test://static/resource/1"}, {"files", "file:///tmp/a b"}}
	if err := m.Subscriptions(id, subs); err != nil {
		t.Fatal(err)
	}
	k, ok, err := m.Load(id)
	if err != nil || !ok || k.Credential != "cred-hash" || string(k.State) != `{"logLevel":"debug"}` || k.Bound != "ses_1" || !reflect.DeepEqual(k.Subs, subs) {
		t.Fatalf("Load = %+v, %v, %v; want the last state saved, the binding and the subscriptions", k, ok, err)
	}
	if err := m.Subscriptions(id, nil); err != nil {
		t.Fatal(err)
	}
	if k, _, _ := m.Load(id); k.Subs != nil {
		t.Errorf("subscriptions after all were dropped = %v", k.Subs)
	}
	var ids []string
	db.Raw("SELECT id_hash FROM mcp_sessions").Scan(&ids)
	if len(ids) != 1 || strings.Contains(ids[0], id) {
		t.Errorf("stored ids = %v, want one hash, not the id", ids)
	}
	if _, ok, _ := m.Load("another"); ok {
		t.Error("an unknown session loaded")
	}
	if err := m.Seen([]string{id}); err != nil {
		t.Fatal(err)
	}
	if err := m.Prune(time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := m.Load(id); !ok {
		t.Error("a session seen now was pruned")
	}
	if err := m.Prune(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := m.Load(id); ok {
		t.Error("a session not seen since the prune time is kept")
	}
	m.Save(id, "cred-hash", []byte(`{}`))
	if err := m.Delete(id); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := m.Load(id); ok {
		t.Error("a deleted session loaded")
	}
}
