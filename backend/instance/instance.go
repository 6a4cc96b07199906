// Package instance is how Airlock processes on one machine find each other
// through the data directory: the lock that keeps one Airlock per data
// directory, and the loopback endpoint a second launch or a CLI command uses
// to reach the running one (bring its window to the front; make it reload
// what the command changed, so that the change applies before the command
// returns).
//
// It imports core and fsutil.
package instance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/fsutil"
)

// The data directory lock file also tells other processes how to reach the
// running instance: its address and a token that allows little: bringing
// its window to the front, making it reload its state, reading the servers'
// status, and the few facade methods the wiring serves to the CLI (agent
// runs and server restarts, which live in that process). The file is
// readable by the user alone, like the database it sits beside.
const lockFileName = "airlock.lock"

// Info is what the lock file publishes.
type Info struct {
	PID   int    `json:"pid"`
	Addr  string `json:"addr"`
	Token string `json:"token"`
}

// Lock is the held lock of a data directory.
type Lock struct{ f *os.File }

// Acquire takes an exclusive lock on the data directory, so that two
// Airlock processes never run the same servers or write the same audit
// journal. The kernel releases it when the process dies, however it dies.
func Acquire(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, fsutil.DirMode); err != nil {
		return nil, core.DataDirError(dir, "create data dir", err)
	}
	// It holds the audit log, tokens and rules: the user's alone, also when
	// it existed before (made by hand, or by an older version).
	if err := os.Chmod(dir, fsutil.DirMode); err != nil {
		return nil, core.DataDirError(dir, "protect data dir", err)
	}
	Tidy(dir, []string{lockFileName}, nil)
	f, err := os.OpenFile(filepath.Join(dir, lockFileName), os.O_CREATE|os.O_RDWR, fsutil.FileMode)
	if err != nil {
		return nil, core.DataDirError(dir, "open data dir lock", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, (&core.Error{Code: core.EConflict, Message: "another Airlock is already running on the data directory " + dir}).
			WithHint("use that one, or give this one its own --data-dir; one that is stopping lets go when it has stopped, within about 20 seconds (its running calls get 10 to finish)")
	}
	// What one that was killed published is gone.
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("clear data dir lock: %w", err)
	}
	return &Lock{f: f}, nil
}

// Tidy undoes what a command an agent ran could leave at the names of the
// data directory dir that Airlock uses (relative to dir: files, then
// folders), to keep Airlock from starting or to open its files to others:
// shell_exec's sandbox keeps commands from reading or writing these files,
// but not from changing their modes or from making folders (see
// backend/sandbox). A folder at a file's name goes, with the folders in it
// (Airlock never makes one there; one at the database's journal or
// write-ahead log would stop it; found by reviews), and so does an empty
// folder at a folder's name (Airlock makes it again); what is there is made
// the user's alone again. It is best effort: what it cannot change, Airlock
// reports where it uses it. Only the names given are touched: a data
// directory may be any folder.
func Tidy(dir string, files, folders []string) {
	for _, n := range files {
		p := filepath.Join(dir, n)
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
		case fi.IsDir():
			os.RemoveAll(p)
		case fi.Mode().IsRegular():
			tighten(p, fi, fsutil.FileMode)
		}
	}
	for _, n := range folders {
		p := filepath.Join(dir, n)
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() && os.Remove(p) != nil { // not empty: in use
			tighten(p, fi, fsutil.DirMode)
		}
	}
}

// tighten takes away from p every permission mode does not give.
func tighten(p string, fi os.FileInfo, mode os.FileMode) {
	if fi.Mode().Perm()&^mode != 0 {
		os.Chmod(p, fi.Mode().Perm()&mode)
	}
}

// Publish records how other processes reach this instance.
func (l *Lock) Publish(info Info) error {
	b, _ := json.Marshal(info)
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt(b, 0)
	return err
}

// Release forgets the published address and unlocks.
func (l *Lock) Release() {
	l.f.Truncate(0)
	l.f.Close()
}

// Handler serves the instance endpoint for the holder of token:
// POST /instance/focus calls focus (the desktop app raises its window);
// POST /instance/reload calls reload (the state a CLI command changed is
// read again before the command returns); POST /instance/status/NAME
// answers with Status[NAME]() as JSON (live state the database does not
// hold, for the CLI: the servers' state, the folders allowed for this run).
func Handler(token string, focus, reload func(), status map[string]func() any) http.Handler {
	return Endpoint{Token: token, Focus: focus, Reload: reload, Status: status}.Handler()
}

// Endpoint is what the instance endpoint serves to the holder of its
// token (see Handler).
type Endpoint struct {
	Token  string
	Focus  func()
	Reload func()
	Status map[string]func() any
	// RPC serves POST /instance/rpc/<Area>.<Method> with the request path
	// after /instance/rpc/: the operations a CLI command needs from the
	// running instance itself (agent runs live in its process). nil
	// serves none.
	RPC http.Handler
}

// Handler returns the endpoint's handler.
func (e Endpoint) Handler() http.Handler {
	want := sha256.Sum256([]byte(e.Token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := sha256.Sum256([]byte(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")))
		if r.Method != http.MethodPost || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if rest, ok := strings.CutPrefix(r.URL.Path, "/instance/rpc/"); ok && e.RPC != nil {
			r2 := r.Clone(r.Context())
			r2.URL.Path = rest
			e.RPC.ServeHTTP(w, r2)
			return
		}
		var fn func()
		switch r.URL.Path {
		case "/instance/focus":
			if e.Focus == nil {
				// airlock serve: there is no window to show (found by a
				// new-user test: a second launch said it showed one).
				w.WriteHeader(http.StatusConflict)
				return
			}
			fn = e.Focus
		case "/instance/reload":
			fn = e.Reload
		default:
			if name, ok := strings.CutPrefix(r.URL.Path, "/instance/status/"); ok && e.Status[name] != nil {
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(e.Status[name]())
				return
			}
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if fn != nil {
			fn()
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// readInfo reads what the Airlock running on dataDir published: only while
// it holds the lock. A file left by one that was killed (or a machine that
// lost power) names a port another user may hold by now, and a token
// would go there (found by a code review).
func readInfo(dataDir string) (Info, error) {
	f, err := os.Open(filepath.Join(dataDir, lockFileName))
	if err != nil {
		return Info{}, core.Errorf(core.EUnavailable, "no Airlock is running on %s", dataDir)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return Info{}, core.Errorf(core.EUnavailable, "no Airlock is running on %s (its lock file is from one that stopped)", dataDir)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return Info{}, core.Errorf(core.EUnavailable, "no Airlock is running on %s", dataDir)
	}
	var info Info
	if err := json.Unmarshal(b, &info); err != nil || info.Addr == "" {
		return Info{}, core.Errorf(core.EUnavailable, "no Airlock has published its address on %s", dataDir)
	}
	return info, nil
}

func post(dataDir, path string) error { return postInto(dataDir, path, nil) }

// postInto posts to the running instance and decodes its answer into out
// (nil: no answer expected).
func postInto(dataDir, path string, out any) error {
	info, err := readInfo(dataDir)
	if err != nil {
		return err
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+info.Addr+path, nil)
	req.Header.Set("Authorization", "Bearer "+info.Token)
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return core.Errorf(core.EUnavailable, "the running Airlock does not answer at %s: %v", info.Addr, err)
	}
	defer resp.Body.Close()
	want := http.StatusNoContent
	if out != nil {
		want = http.StatusOK
	}
	if resp.StatusCode != want {
		return core.Errorf(core.EUnavailable, "the running Airlock refused %s (HTTP %d)", path, resp.StatusCode)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return core.Errorf(core.EUnavailable, "the running Airlock's answer to %s is not JSON: %v", path, err)
		}
	}
	return nil
}

// Status fills out with the running instance's live status called name
// (see Handler); EUnavailable when none is running.
func Status(dataDir, name string, out any) error {
	return postInto(dataDir, "/instance/status/"+name, out)
}

// Names of the live statuses a running Airlock answers.
const (
	StatusServers = "servers" // []core.ServerStatus
	StatusBuiltin = "builtin" // builtin.Overview
)

// FocusRunning asks the Airlock running on dataDir to bring its window to
// the front. It fails when none is running there, and with ErrNoWindow
// when the one running has no window (airlock serve).
func FocusRunning(dataDir string) error {
	err := post(dataDir, "/instance/focus")
	if err != nil && strings.Contains(err.Error(), "(HTTP 409)") {
		return ErrNoWindow
	}
	return err
}

// ErrNoWindow: the Airlock running on the data directory is `airlock
// serve`, without a window.
var ErrNoWindow = (&core.Error{Code: core.EConflict, Message: "the Airlock running on this data directory has no window: it is `airlock serve`"}).
	WithHint("open the UI link it printed when it started, or stop it (Ctrl-C where it runs) and start the app again")

// NotifyChanged tells the Airlock running on dataDir (if any) that another
// process changed its database, and returns once it has read the change: a
// CLI command that rotates a token or suspends an agent takes effect before
// it returns. No running Airlock is not an error.
func NotifyChanged(dataDir string) error {
	if _, err := readInfo(dataDir); err != nil {
		return nil
	}
	return post(dataDir, "/instance/reload")
}

// RunningURL returns the MCP endpoint of the Airlock running on dataDir, as
// its lock file says; ok is false when none has published one.
func RunningURL(dataDir string) (url string, ok bool) {
	info, err := readInfo(dataDir)
	if err != nil {
		return "", false
	}
	return "http://" + info.Addr + "/mcp", true
}

// Call calls method ("Area.Method") of the running instance's RPC with
// args and decodes the result into out (nil: none). An error the instance
// answers with is returned as the *core.Error it sent; EUnavailable when
// no instance is running on dataDir.
func Call(ctx context.Context, dataDir, method string, args []any, out any) error {
	info, err := readInfo(dataDir)
	if err != nil {
		return err
	}
	if args == nil {
		args = []any{}
	}
	body, err := json.Marshal(args)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+info.Addr+"/instance/rpc/"+method, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+info.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return core.Errorf(core.EUnavailable, "the running Airlock does not answer at %s: %v", info.Addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusNotFound && resp.Header.Get("Content-Type") != "application/json" {
		return core.Errorf(core.EUnavailable, "the running Airlock refused %s (HTTP %d): is it an older version?", method, resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		var e core.Error
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Code == "" {
			return core.Errorf(core.EInternal, "the running Airlock answered %s with HTTP %d", method, resp.StatusCode)
		}
		return &e
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return core.Errorf(core.EInternal, "the running Airlock's answer to %s is not JSON: %v", method, err)
	}
	return nil
}
