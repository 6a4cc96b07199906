//go:build unix

package proc_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-dev/airlock/backend/proc"
)

// testEnv is a minimal environment for the test children.
var testEnv = []string{"PATH=/usr/bin:/bin"}

func start(t *testing.T, ctx context.Context, s proc.Spec) *proc.Process {
	t.Helper()
	if s.Env == nil {
		s.Env = testEnv
	}
	p, err := proc.Start(ctx, s)
	if err != nil {
		t.Fatalf("Start(%s %q): %v", s.Path, s.Args, err)
	}
	t.Cleanup(func() { p.Stop(0) })
	return p
}

// readPIDs reads n lines holding process ids from r.
func readPIDs(t *testing.T, r io.Reader, n int) []int {
	t.Helper()
	sc := bufio.NewScanner(r)
	var pids []int
	for len(pids) < n && sc.Scan() {
		pid, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
		if err != nil {
			t.Fatalf("want a pid, got line %q", sc.Text())
		}
		pids = append(pids, pid)
	}
	if len(pids) < n {
		t.Fatalf("read %d pids, want %d (scan error %v)", len(pids), n, sc.Err())
	}
	return pids
}

// dead reports whether pid no longer runs: it does not exist, or it is a
// zombie waiting for its new parent (init may be slow to reap it).
func dead(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	// The state follows the parenthesised command name.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return false
}

// waitDead waits (polling, with a generous deadline) until every pid is
// dead, and fails the test naming the survivors otherwise.
func waitDead(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var alive []int
		for _, pid := range pids {
			if !dead(pid) {
				alive = append(alive, pid)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v still alive", alive)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestExit(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   proc.Exit
		shell  int
	}{
		{"success", "exit 0", proc.Exit{Code: 0}, 0},
		{"failure", "exit 3", proc.Exit{Code: 3}, 3},
		{"signal", "kill -TERM $$", proc.Exit{Code: -1, Signal: syscall.SIGTERM}, 128 + 15},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, context.Background(), proc.Spec{Path: "sh", Args: []string{"-c", tc.script}})
			got := p.Wait()
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
				t.Errorf("exit (-want +got):\n%s", diff)
			}
			if got.ShellCode() != tc.shell {
				t.Errorf("ShellCode() = %d, want %d", got.ShellCode(), tc.shell)
			}
			if !dead(p.PID()) {
				t.Errorf("pid %d not reaped after Wait", p.PID())
			}
		})
	}
}

func TestEnvironmentIsExactlyEnv(t *testing.T) {
	t.Setenv("AIRLOCK_PROC_TEST_SECRET", "s3cret")
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"nil means empty", []string{}, ""},
		{"given", []string{"A=1", "B=2"}, "A=1\nB=2\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := proc.NewCapped(1 << 10)
			p, err := proc.Start(context.Background(), proc.Spec{Path: "/usr/bin/env", Env: tc.env, Stdout: out})
			if err != nil {
				t.Fatal(err)
			}
			if ex := p.Wait(); ex.Code != 0 {
				t.Fatalf("env: %v", ex)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("environment (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLookPathUsesChildPATH(t *testing.T) {
	_, err := proc.Start(context.Background(), proc.Spec{Path: "sh", Env: []string{"PATH=/nonexistent"}})
	if err == nil {
		t.Fatal("Start found sh although the child's PATH has no sh")
	}
	p := start(t, context.Background(), proc.Spec{Path: "sh", Args: []string{"-c", "exit 0"}, Env: []string{"PATH=/bin:/usr/bin"}})
	if ex := p.Wait(); ex.Code != 0 {
		t.Errorf("sh from the child's PATH: %v", ex)
	}
}

func TestPipes(t *testing.T) {
	p := start(t, context.Background(), proc.Spec{Path: "cat", StdinPipe: true, StdoutPipe: true})
	go func() {
		io.WriteString(p.Stdin(), "hello\nworld\n")
		p.Stdin().Close()
	}()
	got, err := io.ReadAll(p.Stdout())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("hello\nworld\n", string(got)); diff != "" {
		t.Errorf("cat output (-want +got):\n%s", diff)
	}
	if ex := p.Wait(); ex.Code != 0 || ex.Err != nil {
		t.Errorf("cat: %v (%v)", ex, ex.Err)
	}
}

func TestStopKillsGroup(t *testing.T) {
	tests := []struct {
		name   string
		script string
		pids   int
		grace  time.Duration
		signal syscall.Signal
	}{
		{"children of sh -c", "sleep 100 & echo $!; sleep 100 & echo $!; echo $$; wait", 3, time.Minute, syscall.SIGTERM},
		// trap "" TERM ignores SIGTERM in the shell and, inherited, in its
		// children: only SIGKILL after the grace period ends them.
		{"children that ignore SIGTERM", `trap "" TERM; sleep 100 & echo $!; echo $$; wait; wait`, 2, 50 * time.Millisecond, syscall.SIGKILL},
		{"no grace", "sleep 100 & echo $!; echo $$; wait", 2, 0, syscall.SIGKILL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, context.Background(), proc.Spec{Path: "sh", Args: []string{"-c", tc.script}, StdoutPipe: true})
			pids := readPIDs(t, p.Stdout(), tc.pids)
			go io.Copy(io.Discard, p.Stdout())
			ex := p.Stop(tc.grace)
			if !ex.Stopped || ex.Signal != tc.signal {
				t.Errorf("Stop: %v stopped=%v, want killed by %v", ex, ex.Stopped, tc.signal)
			}
			waitDead(t, pids...)
		})
	}
}

func TestContextCancelKillsGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := start(t, ctx, proc.Spec{Path: "sh", Args: []string{"-c", "sleep 100 & echo $!; sh -c 'sleep 100 & echo $!; wait' & wait"}, StdoutPipe: true})
	pids := readPIDs(t, p.Stdout(), 2)
	go io.Copy(io.Discard, p.Stdout())
	cancel()
	ex := p.Wait()
	if !ex.Stopped {
		t.Errorf("exit after cancel: %v, want stopped", ex)
	}
	waitDead(t, append(pids, p.PID())...)
}

func TestLeaderExitKillsStragglers(t *testing.T) {
	// The shell exits at once, leaving a background sleep in its group that
	// still holds the output: reaping the shell must end the sleep too.
	out := proc.NewCapped(1 << 10)
	p := start(t, context.Background(), proc.Spec{Path: "sh", Args: []string{"-c", "sleep 100 & echo $!"}, Stdout: out})
	ex := p.Wait()
	if ex.Code != 0 || ex.Err != nil {
		t.Fatalf("sh: %v (%v)", ex, ex.Err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("output %q: %v", out.String(), err)
	}
	waitDead(t, pid)
}

func TestCappedOutputNeverBlocksChild(t *testing.T) {
	out := proc.NewCapped(1000)
	p := start(t, context.Background(), proc.Spec{Path: "head", Args: []string{"-c", "10000000", "/dev/zero"}, Stdout: out})
	if ex := p.Wait(); ex.Code != 0 {
		t.Fatalf("head: %v", ex)
	}
	if got, want := len(out.Bytes()), 1000; got != want {
		t.Errorf("kept %d bytes, want %d", got, want)
	}
	if got, want := out.Dropped(), int64(10000000-1000); got != want {
		t.Errorf("dropped %d bytes, want %d", got, want)
	}
}

func TestStderrTail(t *testing.T) {
	tail := proc.NewTail(3, 10)
	p := start(t, context.Background(), proc.Spec{Path: "sh", Args: []string{"-c", "for i in 1 2 3 4 5; do echo line$i >&2; done; echo 0123456789abcdef >&2"}, Stderr: tail})
	if ex := p.Wait(); ex.Code != 0 {
		t.Fatalf("sh: %v", ex)
	}
	want := []string{"line4", "line5", "0123456789 …[line cut: 6 more bytes]"}
	if diff := cmp.Diff(want, tail.Lines()); diff != "" {
		t.Errorf("tail (-want +got):\n%s", diff)
	}
}

func TestStartErrors(t *testing.T) {
	for _, s := range []proc.Spec{
		{},
		{Path: "/nonexistent/program"},
		{Path: "sh", Dir: "/nonexistent-dir"},
	} {
		if p, err := proc.Start(context.Background(), s); err == nil {
			p.Stop(0)
			t.Errorf("Start(%+v) succeeded, want an error", s)
		}
	}
}

// parentEnv makes the test binary, started again by
// TestParentDeathKillsGroup, play Airlock: start a command and run until
// killed.
const parentEnv = "AIRLOCK_PROC_TEST_PARENT"

// TestParentDeathKillsGroup kills "Airlock" (this test binary run again in
// a child process) with SIGKILL while a command it started runs, and
// checks that the command and the grandchild it started die too.
func TestParentDeathKillsGroup(t *testing.T) {
	if os.Getenv(parentEnv) != "" {
		// The command's output is this process's, so that the test reads
		// the pids directly.
		_, err := proc.Start(context.Background(), proc.Spec{Path: "sh", Env: testEnv, Stdout: os.Stdout,
			Args: []string{"-c", "sleep 100 & echo $!; echo $$; wait"}})
		if err != nil {
			fmt.Println("ERR", err)
			os.Exit(1)
		}
		select {}
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestParentDeathKillsGroup$")
	cmd.Env = append(os.Environ(), parentEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pids := readPIDs(t, out, 2)
	for _, pid := range pids {
		if dead(pid) {
			t.Fatalf("process %d is dead before its parent was killed", pid)
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitDead(t, pids...)
}

// A Restrict that fails stops the start: the command never runs.
func TestRestrictFailureStartsNothing(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	boom := errors.New("no sandbox today")
	_, err := proc.Start(context.Background(), proc.Spec{Path: "/bin/sh", Args: []string{"-c", "touch " + marker}, Restrict: func() error { return boom }})
	if !errors.Is(err, boom) {
		t.Fatalf("Start = %v, want the Restrict error", err)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the command ran although Restrict failed (%v)", err)
	}
	// A Restrict that succeeds runs on the starting thread, and the command
	// starts after it.
	called := false
	p, err := proc.Start(context.Background(), proc.Spec{Path: "/bin/sh", Args: []string{"-c", "touch " + marker}, Restrict: func() error { called = true; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if ex := p.Wait(); ex.Code != 0 || !called {
		t.Fatalf("exit %+v, Restrict called %v", ex, called)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the command did not run: %v", err)
	}
}
