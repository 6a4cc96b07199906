package config

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/google/go-cmp/cmp"
)

// watched starts a store on a fresh directory with a watcher and a hook that
// records reload outcomes.
func watched(t *testing.T, initial string) (*Store, *recorder, *outcomes) {
	t.Helper()
	path := filepath.Join(t.TempDir(), FileName)
	if initial != "" {
		writeFile(t, path, initial)
	}
	s, rec := mustNew(t, path)
	out := &outcomes{}
	s.testHookReload = out.add
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if _, err := s.Watch(ctx); err != nil {
		t.Fatalf("Watch: %v", err)
	}
	// The watcher rereads once at start; wait for that so that tests see
	// only the outcomes of their own edits.
	out.waitFor(t, 1)
	return s, rec, out
}

type outcomes struct {
	mu   sync.Mutex
	list []string
}

func (o *outcomes) add(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.list = append(o.list, s)
}

func (o *outcomes) get() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.list...)
}

// waitFor polls until at least n reloads happened.
func (o *outcomes) waitFor(t *testing.T, n int) []string {
	t.Helper()
	eventually(t, func() bool { return len(o.get()) >= n }, "%d reloads", n)
	return o.get()
}

// eventually polls cond until it holds or a generous deadline passes.
func eventually(t *testing.T, cond func() bool, what string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for "+what, args...)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func ids(list []core.ServerConfig) []string {
	out := []string{}
	for _, c := range list {
		out = append(out, c.ID)
	}
	return out
}

func TestWatchAppliesValidEdit(t *testing.T) {
	s, rec, _ := watched(t, `{"mcpServers": {"a": {"command": "x"}}}`)
	writeFile(t, s.State().Path, `{"mcpServers": {"a": {"command": "x"}, "b": {"url": "http://h/mcp"}}}`)
	eventually(t, func() bool { return len(s.List()) == 2 }, "the edit to apply")
	if diff := cmp.Diff([]string{"a", "b"}, ids(s.List())); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	eventually(t, func() bool { _, n := rec.counts(); return n == 1 }, "one subscriber call")
	if diff := cmp.Diff([]string{"a", "b"}, ids(rec.lists[0])); diff != "" {
		t.Errorf("subscriber got (-want +got):\n%s", diff)
	}
	if ev := rec.lastEvent(); ev.Path != s.State().Path || ev.Error != "" {
		t.Errorf("event = %+v, want the path and no error", ev)
	}
}

func TestWatchKeepsLastGoodOnInvalidEdit(t *testing.T) {
	tests := []struct {
		name, content, wantErr string
	}{
		{"bad JSON", `{"mcpServers": {"a": {"command": "x"}`, "invalid JSON at line 1"},
		{"duplicate ids", `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`, "appears more than once"},
		{"invalid entry", `{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}`, "both a command and a url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, rec, _ := watched(t, `{"mcpServers": {"good": {"command": "x"}}}`)
			writeFile(t, s.State().Path, tt.content)
			eventually(t, func() bool { return s.State().Error != "" }, "the error to show")
			if st := s.State(); !strings.Contains(st.Error, tt.wantErr) || !strings.Contains(st.Error, "last good") {
				t.Errorf("State().Error = %q, want it to contain %q and say the last good config stays", st.Error, tt.wantErr)
			}
			if diff := cmp.Diff([]string{"good"}, ids(s.List())); diff != "" {
				t.Errorf("servers in effect (-want +got):\n%s", diff)
			}
			eventually(t, func() bool { return rec.lastEvent().Error != "" }, "an event carrying the error")
			if _, lists := rec.counts(); lists != 0 {
				t.Errorf("subscribers were called %d times for an invalid edit", lists)
			}

			// Fixing the file clears the error and applies it.
			writeFile(t, s.State().Path, `{"mcpServers": {"fixed": {"command": "x"}}}`)
			eventually(t, func() bool { return s.State().Error == "" }, "the error to clear")
			if diff := cmp.Diff([]string{"fixed"}, ids(s.List())); diff != "" {
				t.Errorf("servers after the fix (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWatchIgnoresOwnWrites(t *testing.T) {
	s, rec, out := watched(t, "")
	if err := s.Add(stdio("a", "x")); err != nil {
		t.Fatal(err)
	}
	// The write's fsnotify events lead to one reread, which must find the
	// content it wrote and change nothing.
	got := out.waitFor(t, 2)
	if diff := cmp.Diff([]string{"unchanged", "unchanged"}, got); diff != "" {
		t.Errorf("reload outcomes (-want +got):\n%s", diff)
	}
	if events, lists := rec.counts(); events != 1 || lists != 1 {
		t.Errorf("got %d events and %d subscriber calls, want 1 each (from Add only)", events, lists)
	}
}

func TestWatchRenameReplace(t *testing.T) {
	s, _, _ := watched(t, `{"mcpServers": {"a": {"command": "x"}}}`)
	dir := filepath.Dir(s.State().Path)
	// Editors write a new file next to the old one and rename it over.
	for i, content := range []string{
		`{"mcpServers": {"b": {"command": "y"}}}`,
		`{"mcpServers": {"c": {"command": "z"}}}`,
	} {
		tmp := filepath.Join(dir, FileName+".swp")
		writeFile(t, tmp, content)
		if err := os.Rename(tmp, s.State().Path); err != nil {
			t.Fatal(err)
		}
		want := []string{[]string{"b", "c"}[i]}
		eventually(t, func() bool { return cmp.Equal(want, ids(s.List())) }, "servers %v after rename #%d", want, i+1)
	}
	// Deleting the file empties the config, as a missing file does at start.
	if err := os.Remove(s.State().Path); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() bool { return len(s.List()) == 0 }, "the servers to go")
	if err := s.Add(stdio("d", "w")); err != nil {
		t.Fatalf("Add after the file was removed: %v", err)
	}
}
