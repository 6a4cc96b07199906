package airlock

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/fsutil"
)

// The data directory lock file also tells a second launch how to reach the
// running instance: its address and a token that allows one thing only,
// bringing its window to the front. The file is readable by the user alone.
const lockFileName = "airlock.lock"

type lockInfo struct {
	PID        int    `json:"pid"`
	Addr       string `json:"addr"`
	FocusToken string `json:"focusToken"`
}

// dataDirLock is the held lock of a data directory.
type dataDirLock struct{ f *os.File }

// lockDataDir takes an exclusive lock on the data directory, so that two
// Airlock processes never run the same servers or write the same audit
// journal. The kernel releases it when the process dies, however it dies.
func lockDataDir(dir string) (*dataDirLock, error) {
	if err := os.MkdirAll(dir, fsutil.DirMode); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	// It holds the audit log, tokens and rules: the user's alone, also when
	// it existed before (made by hand, or by an older version).
	if err := os.Chmod(dir, fsutil.DirMode); err != nil {
		return nil, fmt.Errorf("protect data dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, lockFileName), os.O_CREATE|os.O_RDWR, fsutil.FileMode)
	if err != nil {
		return nil, fmt.Errorf("open data dir lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, (&core.Error{Code: core.EConflict, Message: "another Airlock is already running on the data directory " + dir}).
			WithHint("use that one, or give this one its own --data-dir")
	}
	return &dataDirLock{f: f}, nil
}

// publish records how a second launch reaches this instance.
func (l *dataDirLock) publish(info lockInfo) error {
	b, _ := json.Marshal(info)
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt(b, 0)
	return err
}

// release forgets the published address and unlocks.
func (l *dataDirLock) release() {
	l.f.Truncate(0)
	l.f.Close()
}

// focusHandler serves POST /instance/focus: with the focus token from the
// lock file it calls focus (the desktop app raises its window).
func focusHandler(token string, focus func()) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := sha256.Sum256([]byte(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")))
		if r.Method != http.MethodPost || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if focus != nil {
			focus()
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// FocusRunning asks the Airlock running on dataDir to bring its window to
// the front. It fails when none is running there.
func FocusRunning(dataDir string) error {
	b, err := os.ReadFile(filepath.Join(dataDir, lockFileName))
	if err != nil {
		return fmt.Errorf("read lock file: %w", err)
	}
	var info lockInfo
	if err := json.Unmarshal(b, &info); err != nil || info.Addr == "" {
		return core.Errorf(core.EUnavailable, "the running Airlock has not published its address yet")
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+info.Addr+"/instance/focus", nil)
	req.Header.Set("Authorization", "Bearer "+info.FocusToken)
	c := &http.Client{Timeout: 3 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return core.Errorf(core.EUnavailable, "the running Airlock does not answer at %s: %v", info.Addr, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return core.Errorf(core.EUnavailable, "the running Airlock refused to focus (HTTP %d)", resp.StatusCode)
	}
	return nil
}

// RunningURL returns the MCP endpoint of the Airlock running on dataDir, as
// its lock file says; ok is false when none has published one.
func RunningURL(dataDir string) (url string, ok bool) {
	b, err := os.ReadFile(filepath.Join(dataDir, lockFileName))
	if err != nil {
		return "", false
	}
	var info lockInfo
	if json.Unmarshal(b, &info) != nil || info.Addr == "" {
		return "", false
	}
	return "http://" + info.Addr + "/mcp", true
}
