package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlock-dev/airlock/backend/proc"
	"github.com/airlock-dev/airlock/backend/sandbox"
)

// Many sandboxed starts at once, with one and two Ps (so that the
// goroutines that apply the restriction often land on the main thread,
// which TestMain has let go of): none deadlocks, Restrict never runs on the
// main thread, and afterwards no thread of the test process is left
// restricted: every thread's NoNewPrivs is 0, and the hidden folder can be
// read from as many threads as the process has.
func TestConcurrentSandboxedStartsLeaveNoThreadRestricted(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".config", "airlock")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(data, "agent-token")
	if err := os.WriteFile(secret, []byte("token"), 0o600); err != nil {
		t.Fatal(err)
	}
	sb := sandbox.New([]string{data})
	if st := sb.Status(); !st.Enforced {
		t.Skipf("the kernel enforces no sandbox here: %s", st.Reason)
	}
	for _, procs := range []int{1, 2} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			const n = 200
			var onMain, failed atomic.Int32
			var wg sync.WaitGroup
			for range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p, err := proc.Start(context.Background(), proc.Spec{
						Path: "/bin/sh", Args: []string{"-c", `cat "$0/agent-token" 2>/dev/null && exit 3; exit 0`, data},
						Env: []string{"PATH=/usr/bin:/bin"},
						Restrict: func() error {
							if unix.Gettid() == unix.Getpid() {
								onMain.Add(1)
							}
							return sb.Restrict()
						},
					})
					if err != nil {
						failed.Add(1)
						t.Errorf("start: %v", err)
						return
					}
					if ex := p.Wait(); ex.Code != 0 {
						failed.Add(1)
						t.Errorf("a sandboxed command read the hidden file or failed: %v", ex)
					}
				}()
			}
			wg.Wait()
			if onMain.Load() != 0 {
				t.Errorf("Restrict ran on the main thread %d times", onMain.Load())
			}
			checkNoThreadRestricted(t, secret)
		})
	}
}

// checkNoThreadRestricted checks every thread of the process. A thread
// that applied a restriction may still be ending when the command it
// started has been reaped (its goroutine sends the result, then exits), so
// a restricted thread must be gone within a generous deadline, not at once.
func checkNoThreadRestricted(t *testing.T, secret string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var tasks []os.DirEntry
	for {
		var err error
		tasks, err = os.ReadDir("/proc/self/task")
		if err != nil {
			t.Fatal(err)
		}
		restricted := restrictedThreads(tasks)
		if len(restricted) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("threads of the test process left restricted (NoNewPrivs: 1): %v", restricted)
			break
		}
		runtime.Gosched()
	}
	// Occupy as many threads as there are, each reading the hidden file.
	k := len(tasks) + 4
	var wg sync.WaitGroup
	var ready sync.WaitGroup
	ready.Add(k)
	release := make(chan struct{})
	for range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ready.Done()
			<-release
			if _, err := os.ReadFile(secret); err != nil {
				t.Errorf("thread %d cannot read the hidden folder after sandboxed starts: %v", unix.Gettid(), err)
			}
		}()
	}
	ready.Wait()
	close(release)
	wg.Wait()
}

// restrictedThreads returns the ids of the threads whose NoNewPrivs is set.
func restrictedThreads(tasks []os.DirEntry) []string {
	var out []string
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
		if err != nil {
			continue // ended meanwhile
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "NoNewPrivs:"); ok && strings.TrimSpace(v) != "0" {
				out = append(out, task.Name())
			}
		}
	}
	return out
}
