//go:build unix

// Package proc supervises child processes: the stdio MCP servers Airlock
// starts, the commands of the built-in shell_exec tool and, later, agent
// runs.
//
// Every process starts in its own process group, so that stopping it stops
// everything it started too (the children of `sh -c`, a server's workers):
// Stop sends SIGTERM to the whole group and SIGKILL after a grace period, a
// cancelled context does the same, and when the process exits on its own
// whatever is left of its group is killed before it is reaped. Output goes
// to writers that never block the child (Capped, Tail) or to pipes the
// caller reads.
//
// The group outlives Airlock in no case: a guard process in it kills it
// when Airlock dies, even by SIGKILL (see startGuard).
//
// It imports only the standard library.
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Spec says what to run and where its input and output go.
type Spec struct {
	// Path is the program. A name without a slash is looked up in the PATH
	// of Env (or Airlock's own PATH when Env has none).
	Path string
	// Args are the arguments after the program name.
	Args []string
	// Dir is the working directory; empty means Airlock's own.
	Dir string
	// Env is the complete environment. Unlike os/exec, nil means an empty
	// environment, never Airlock's own: nothing leaks by omission.
	Env []string
	// Stdin feeds the child's standard input; nil means /dev/null unless
	// StdinPipe is set.
	Stdin io.Reader
	// Stdout and Stderr receive the child's output; nil discards it (unless
	// StdoutPipe is set). Give writers that do not block, such as Capped or
	// Tail: a slow writer slows the child down.
	Stdout io.Writer
	Stderr io.Writer
	// StdinPipe makes Process.Stdin a pipe to the child's standard input
	// (an MCP stdio server reads its requests there).
	StdinPipe bool
	// StdoutPipe makes Process.Stdout a pipe from the child's standard
	// output; the caller must read it to EOF (or close it).
	StdoutPipe bool
	// KillGrace is how long a cancelled context waits after SIGTERM before
	// SIGKILL; zero kills at once.
	KillGrace time.Duration
	// WaitDelay bounds how long Wait waits for the output copies after the
	// process exited, for a grandchild that left the group and still holds
	// the output open. Zero means DefaultWaitDelay.
	WaitDelay time.Duration
	// Restrict, when set, runs on the OS thread that starts the child, just
	// before it does: whatever it does to that thread (no_new_privs, a
	// Landlock domain) the child inherits, and nothing else does, because
	// the thread is thrown away afterwards. If it fails, nothing starts.
	Restrict func() error
}

// DefaultWaitDelay is the WaitDelay used when a Spec gives none.
const DefaultWaitDelay = 2 * time.Second

// Exit is how a process ended.
type Exit struct {
	// Code is the exit status; -1 when a signal ended the process.
	Code int `json:"code"`
	// Signal is the signal that ended the process, or 0.
	Signal syscall.Signal `json:"signal,omitempty"`
	// Stopped is set when Stop or a cancelled context ended the process.
	Stopped bool `json:"stopped,omitempty"`
	// Err is a failure to wait or to copy output; nil normally.
	Err error `json:"-"`
}

// ShellCode is the exit status as a shell reports it: the code, or 128 plus
// the signal number.
func (e Exit) ShellCode() int {
	if e.Signal != 0 {
		return 128 + int(e.Signal)
	}
	return e.Code
}

func (e Exit) String() string {
	switch {
	case e.Signal != 0:
		return "killed by signal " + e.Signal.String()
	case e.Code == 0:
		return "exited normally"
	default:
		return fmt.Sprintf("exit status %d", e.Code)
	}
}

// Process is a started child process and its group.
type Process struct {
	cmd    *exec.Cmd
	pid    int
	stdin  io.WriteCloser
	stdout io.ReadCloser
	done   chan struct{}
	exit   Exit
	guard  *guard

	// mu guards signalling against reaping: once the process is reaped the
	// group has been killed, and no signal may be sent after that.
	mu      sync.Mutex
	reaped  bool
	stopped bool
}

// Start starts the process described by s in a new process group. When ctx
// is cancelled the process group is stopped (SIGTERM, then SIGKILL after
// s.KillGrace).
func Start(ctx context.Context, s Spec) (*Process, error) {
	if s.Path == "" {
		return nil, errors.New("proc: no program given")
	}
	env := s.Env
	if env == nil {
		env = []string{}
	}
	path, err := LookPath(s.Path, env)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, s.Args...)
	cmd.Args[0] = s.Path
	cmd.Dir = s.Dir
	cmd.Env = env
	cmd.WaitDelay = s.WaitDelay
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = DefaultWaitDelay
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.Stdin, s.Stdout, s.Stderr

	p := &Process{cmd: cmd, done: make(chan struct{})}
	// Pipes are made here rather than with cmd.StdoutPipe: os/exec closes
	// its pipes in Wait, which would race with a reader still draining the
	// last bytes. The child's ends are closed after Start.
	var childEnds []*os.File
	closeAll := func() {
		for _, f := range childEnds {
			f.Close()
		}
	}
	if s.StdinPipe {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("proc: stdin pipe: %w", err)
		}
		cmd.Stdin, p.stdin = r, w
		childEnds = append(childEnds, r)
	}
	if s.StdoutPipe {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll()
			if p.stdin != nil {
				p.stdin.Close()
			}
			return nil, fmt.Errorf("proc: stdout pipe: %w", err)
		}
		cmd.Stdout, p.stdout = w, r
		childEnds = append(childEnds, w)
	}
	fail := func(err error) (*Process, error) {
		closeAll()
		if p.stdin != nil {
			p.stdin.Close()
		}
		if p.stdout != nil {
			p.stdout.Close()
		}
		if p.guard != nil {
			p.guard.end()
		}
		return nil, err
	}
	// The guard comes first and leads the group, so that no moment passes
	// in which the child runs unguarded.
	if p.guard, err = startGuard(); err != nil {
		return fail(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: p.guard.pid}
	start := cmd.Start
	if s.Restrict != nil {
		start = func() error {
			return onThrowawayThread(func() error {
				if err := s.Restrict(); err != nil {
					return err
				}
				return cmd.Start()
			})
		}
	}
	if err := start(); err != nil {
		return fail(err) // "fork/exec PATH: why" names the program already
	}
	closeAll()
	p.pid = cmd.Process.Pid
	go p.reap()
	if ctx.Done() != nil {
		go func() {
			select {
			case <-ctx.Done():
				p.Stop(s.KillGrace)
			case <-p.done:
			}
		}()
	}
	return p, nil
}

// onThrowawayThread runs fn on an OS thread of its own and ends that
// thread afterwards: a goroutine that exits while locked to its thread
// takes the thread with it, so what fn did to the thread (a restriction a
// child started from it inherits) never reaches another goroutine. Threads
// the runtime needs meanwhile are not cloned from a locked one.
//
// The main thread is the exception: the runtime never ends it, and parks it
// instead, still restricted; and /proc/PID/ names it, so a command in the
// same Landlock domain could then open /proc/PID/mem of Airlock (found by a
// review). A goroutine that finds itself there keeps the main thread busy
// and unrestricted while fn runs on another thread, then lets it go.
func onThrowawayThread(fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if onMainThread() {
			// While this goroutine holds the main thread, the one below
			// cannot be scheduled on it.
			done <- onThrowawayThread(fn)
			runtime.UnlockOSThread()
			return
		}
		done <- fn() // never unlocked: the thread ends with this goroutine
	}()
	return <-done
}

// LookPath finds file like exec.LookPath, but in the PATH of env when env
// has one: the child's search path, not Airlock's. Start uses it; callers
// use it to refuse a missing program before they start anything. A name
// with a slash is returned as it is.
func LookPath(file string, env []string) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	pathVar, found := "", false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar, found = v, true
		}
	}
	if !found {
		return exec.LookPath(file)
	}
	for _, dir := range filepath.SplitList(pathVar) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry would search the working directory
		}
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("proc: %s not found in PATH %q: %w", file, pathVar, exec.ErrNotFound)
}

// reap waits for the process to exit, kills what is left of its group
// (before reaping it, where the system allows, so that no straggler holds
// the output open and makes Wait wait for WaitDelay), then reaps it and the
// guard.
func (p *Process) reap() {
	waitExited(p.pid)
	p.mu.Lock()
	syscall.Kill(-p.guard.pid, syscall.SIGKILL) // stragglers and the guard
	p.reaped = true
	p.mu.Unlock()

	err := p.cmd.Wait()
	st := p.cmd.ProcessState
	ex := Exit{Code: -1}
	if st != nil {
		ex.Code = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			ex.Signal = ws.Signal()
		}
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		ex.Err = err
	}
	p.mu.Lock()
	ex.Stopped = p.stopped
	p.mu.Unlock()
	if !reapedLeaderFirst {
		// Without a way to wait without reaping, the group is killed after
		// the fact; the guard, not reaped yet, keeps its id from being
		// reused.
		syscall.Kill(-p.guard.pid, syscall.SIGKILL)
	}
	p.guard.end() // after the last signal to the group
	p.exit = ex
	close(p.done)
}

// guard leads the process group of a child and kills the group when
// Airlock dies, however it dies: kill -9 included, when no code of Airlock
// runs any more.
//
// The guard is a shell that reads a pipe whose only writer is Airlock. The
// kernel closes that end when Airlock exits, so the read ends and the shell
// kills its own group: the child and everything the child started that is
// still in the group (the children of `sh -c`, the node that npx starts).
// The shell ignores the signals Stop sends before SIGKILL (and the usual
// ones a command may send its group), so that it lasts as long as the
// group; SIGKILL to the group ends it with the rest. Leading the group, it
// also keeps the group id from being reused until it is reaped, after the
// last signal to the group.
//
// Pdeathsig (Linux's PR_SET_PDEATHSIG) does not do: it reaches only the
// direct child, so the children of `sh -c` live on, re-parented to init;
// it fires when the OS thread that started the child exits, not the
// process (golang/go#27505: a thread locked for each child would be
// needed); and it exists on Linux only. A shell per child costs a fork and
// about a megabyte, and works on every Unix.
type guard struct {
	cmd *exec.Cmd
	pid int
	w   *os.File // Airlock's end of the pipe: the guard acts when it closes
}

// guardScript is the guard's shell script: wait for the end of stdin, then
// SIGKILL the process group.
const guardScript = `trap '' HUP INT QUIT PIPE ALRM TERM USR1 USR2; read x; kill -s KILL 0`

// startGuard starts a guard in a new process group.
func startGuard() (*guard, error) {
	r, w, err := os.Pipe() // close-on-exec: no other child inherits w
	if err != nil {
		return nil, fmt.Errorf("proc: guard pipe: %w", err)
	}
	cmd := exec.Command("/bin/sh", "-c", guardScript)
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("proc: start the process group's guard: %w", err)
	}
	return &guard{cmd: cmd, pid: cmd.Process.Pid, w: w}, nil
}

// end kills and reaps the guard alone; its group has been killed already,
// or holds nothing else.
func (g *guard) end() {
	g.w.Close()
	g.cmd.Process.Kill()
	g.cmd.Wait()
}

// PID returns the process id. (The process group is the guard's.)
func (p *Process) PID() int { return p.pid }

// Stdin returns the pipe to the child's standard input, or nil without
// Spec.StdinPipe. Close it to send EOF.
func (p *Process) Stdin() io.WriteCloser { return p.stdin }

// Stdout returns the pipe from the child's standard output, or nil without
// Spec.StdoutPipe. It reaches EOF when every process holding it has exited.
func (p *Process) Stdout() io.ReadCloser { return p.stdout }

// Done is closed once the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the process to exit and returns how it ended. It may be
// called any number of times, from any goroutine.
func (p *Process) Wait() Exit {
	<-p.done
	return p.exit
}

// Signal sends sig to the whole process group. It does nothing once the
// process has been reaped.
func (p *Process) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return nil
	}
	if err := syscall.Kill(-p.guard.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("proc: signal group %d: %w", p.guard.pid, err)
	}
	return nil
}

// Stop ends the process group: SIGTERM, then SIGKILL when the process has
// not exited after grace (at once when grace is zero). It returns how the
// process ended.
func (p *Process) Stop(grace time.Duration) Exit {
	p.mu.Lock()
	if !p.reaped {
		p.stopped = true
	}
	p.mu.Unlock()
	if grace > 0 {
		p.Signal(syscall.SIGTERM)
		t := time.NewTimer(grace)
		select {
		case <-p.done:
			t.Stop()
			return p.exit
		case <-t.C:
		}
	}
	p.Signal(syscall.SIGKILL)
	return p.Wait()
}
