package sandbox_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlock-dev/airlock/backend/proc"
	"github.com/airlock-dev/airlock/backend/sandbox"
)

// The main goroutine stays on the process's main thread until TestMain,
// which lets go of it just before it starts a sandboxed command: from then
// on the main thread is a thread like any other, as it is in `airlock
// serve`, whose main goroutine only waits, and the scheduler may run any
// goroutine on it, a shell_exec handler among them.
func init() { runtime.LockOSThread() }

const memScanEnv = "AIRLOCK_SANDBOX_TEST_MEMSCAN"

// mainThreadProbe is what the command started from the main thread found.
var mainThreadProbe struct {
	ran      bool   // Restrict ran on the main thread (it does at once today)
	skip     string // why the probe could not run
	secret   string // the token Airlock holds in memory, read from its data directory
	out      string // what the command read from Airlock's memory
	leaderNP string // NoNewPrivs of Airlock's main thread afterwards
}

func TestMain(m *testing.M) {
	if os.Getenv(memScanEnv) != "" {
		os.Exit(memScan())
	}
	probeFromMainThread()
	os.Exit(m.Run())
}

// probeFromMainThread starts a sandboxed command the way shell_exec does,
// from the goroutine on the main thread.
func probeFromMainThread() {
	p := &mainThreadProbe
	root, err := os.MkdirTemp("", "sbx-mainthread-")
	if err != nil {
		p.skip = err.Error()
		return
	}
	defer os.RemoveAll(root)
	data := filepath.Join(root, "home", ".config", "airlock")
	if err := os.MkdirAll(data, 0o700); err != nil {
		p.skip = err.Error()
		return
	}
	token := fmt.Sprintf("airlock-agent-token-%016x", time.Now().UnixNano())
	if err := os.WriteFile(filepath.Join(data, "agent-token"), []byte(token), 0o600); err != nil {
		p.skip = err.Error()
		return
	}
	// Airlock reads its token and keeps it in memory.
	b, _ := os.ReadFile(filepath.Join(data, "agent-token"))
	p.secret = string(b)
	sb := sandbox.New([]string{data})
	if st := sb.Status(); !st.Enforced {
		p.skip = "the kernel enforces no sandbox here: " + st.Reason
		return
	}
	exe, err := os.Executable()
	if err != nil {
		p.skip = err.Error()
		return
	}
	runtime.UnlockOSThread()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// Until Restrict runs there: with one P, the thrown-away goroutine
	// runs on the thread of the goroutine that waits for it, the main one.
	for attempt := 0; attempt < 100 && !p.ran; attempt++ {
		var out bytes.Buffer
		onMain := false
		pr, err := proc.Start(context.Background(), proc.Spec{
			Path: exe, Dir: root, Stdout: &out, Stderr: &out,
			Env: []string{memScanEnv + "=1", "SCAN_PID=" + strconv.Itoa(os.Getpid()), "SCAN_PREFIX=airlock-agent-token-"},
			Restrict: func() error {
				onMain = unix.Gettid() == os.Getpid()
				return sb.Restrict()
			},
		})
		if err != nil {
			p.skip = err.Error()
			return
		}
		pr.Wait()
		p.ran = onMain
		p.out = strings.TrimSpace(out.String())
	}
	p.leaderNP = noNewPrivs(os.Getpid())
}

// memScan is the attacker's command: it looks for the token in the memory
// of the process whose id is SCAN_PID (Airlock), through /proc/PID/mem.
func memScan() int {
	pid := os.Getenv("SCAN_PID")
	re := regexp.MustCompile(regexp.QuoteMeta(os.Getenv("SCAN_PREFIX")) + `[0-9a-f]{16}`)
	maps, err := os.ReadFile("/proc/" + pid + "/maps")
	if err != nil {
		fmt.Println("maps:", err)
		return 1
	}
	mem, err := os.Open("/proc/" + pid + "/mem")
	if err != nil {
		fmt.Println("mem:", err)
		return 1
	}
	defer mem.Close()
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[1], "r") {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		s, _ := strconv.ParseUint(lo, 16, 64)
		e, _ := strconv.ParseUint(hi, 16, 64)
		if e-s > 1<<30 {
			continue
		}
		buf := make([]byte, e-s)
		n, _ := mem.ReadAt(buf, int64(s))
		if m := re.Find(buf[:n]); m != nil {
			fmt.Println("found in Airlock's memory:", string(m))
			return 0
		}
	}
	fmt.Println("not found")
	return 1
}

// noNewPrivs returns the NoNewPrivs field of the thread tid's status.
func noNewPrivs(tid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/status", tid))
	if err != nil {
		return err.Error()
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "NoNewPrivs:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// A Go program's main thread cannot end: when a goroutine locked to it
// exits, the runtime parks the thread for good instead. So when
// onThrowawayThread's goroutine runs there (any goroutine may, once the
// main goroutine only waits, as in `airlock serve`), the thread is not
// thrown away: Airlock's main thread, whose id is Airlock's pid, stays in
// that command's Landlock domain. Landlock lets a process ptrace (and so
// open /proc/PID/mem of) a process in its own domain, and /proc/PID/ names
// the main thread: that command, and anything it leaves running (setsid
// escapes the process group's kill), reads and writes all of Airlock's
// memory: its tokens, the data directory's contents it holds, its policy.
func TestSandboxedCommandCannotReachAirlocksMemory(t *testing.T) {
	p := &mainThreadProbe
	if p.skip != "" {
		t.Skip(p.skip)
	}
	if strings.Contains(p.out, p.secret) {
		t.Errorf("a sandboxed command started from Airlock's main thread read the token it holds from /proc/%d/mem: %s", os.Getpid(), p.out)
	}
	if p.leaderNP != "0" {
		t.Errorf("Airlock's main thread is left restricted after starting a command (NoNewPrivs: %s): a thread the restriction was applied to was not thrown away", p.leaderNP)
	}
	t.Logf("Restrict ran on the main thread: %v; the command's output: %s", p.ran, p.out)
}
