package instance

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Only an Airlock that holds the lock is reached through what it
// published: a lock file left by one that was killed names a port another
// user may hold by now (found by a code review: the bridge sent the agent
// token there), and the next Airlock clears it.
func TestStaleLockFileIsNotFollowed(t *testing.T) {
	dir := t.TempDir()
	b, _ := json.Marshal(Info{PID: 1, Addr: "127.0.0.1:1", Token: "t"})
	if err := os.WriteFile(filepath.Join(dir, lockFileName), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if u, ok := RunningURL(dir); ok {
		t.Errorf("RunningURL followed a lock file nobody holds to %s", u)
	}
	if err := NotifyChanged(dir); err != nil {
		t.Errorf("NotifyChanged with a stale lock file: %v, want nothing to notify", err)
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadFile(filepath.Join(dir, lockFileName)); len(left) != 0 {
		t.Errorf("Acquire left the stale content %q", left)
	}
	if err := l.Publish(Info{PID: os.Getpid(), Addr: "127.0.0.1:2", Token: "u"}); err != nil {
		t.Fatal(err)
	}
	if u, ok := RunningURL(dir); !ok || u != "http://127.0.0.1:2/mcp" {
		t.Errorf("RunningURL while the lock is held = %q, %v", u, ok)
	}
	l.Release()
	if u, ok := RunningURL(dir); ok {
		t.Errorf("RunningURL after Release = %q", u)
	}
}

// A second launch of the desktop app is told when the Airlock running on
// the data directory has no window to show (airlock serve; found by a
// new-user test: it said it had brought a window to the front).
func TestFocusWithoutAWindow(t *testing.T) {
	for _, tc := range []struct {
		focus func()
		want  error
	}{{nil, ErrNoWindow}, {func() {}, nil}} {
		dir := t.TempDir()
		l, err := Acquire(dir)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(Endpoint{Token: "tok", Focus: tc.focus}.Handler())
		if err := l.Publish(Info{PID: os.Getpid(), Addr: strings.TrimPrefix(srv.URL, "http://"), Token: "tok"}); err != nil {
			t.Fatal(err)
		}
		if err := FocusRunning(dir); !errors.Is(err, tc.want) && err != tc.want {
			t.Errorf("FocusRunning with focus %v = %v, want %v", tc.focus != nil, err, tc.want)
		}
		srv.Close()
		l.Release()
	}
}
