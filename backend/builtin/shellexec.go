package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/airlock-dev/airlock/backend/proc"
	"github.com/airlock-dev/airlock/backend/sandbox"
)

// TimeoutExitCode is shell_exec's exit code for a command killed at its
// timeout, as timeout(1) reports it.
const TimeoutExitCode = 124

// killGrace is how long a timed-out command's process group has between
// SIGTERM and SIGKILL.
const killGrace = time.Second

// Exec runs shell_exec: the command (with args appended, quoted) in the
// shell, in cwd inside an allowed folder, with the environment reduced to
// the allow list, output capped, and the whole process group killed at the
// timeout. A command matching a deny rule is refused here whatever the
// pipeline decided; commands that ask run because the pipeline asked a
// person before it dispatched the call.
func (b *Builtin) Exec(ctx context.Context, args ExecArgs) (ExecResult, error) {
	cfg := b.cur.Load()
	script, err := shellScript(args.Command, args.Args)
	if err != nil {
		return ExecResult{}, err
	}
	dir, realDir, err := cfg.openCwd(args.Cwd)
	if err != nil {
		return ExecResult{}, err
	}
	defer dir.Close()
	if cl := cfg.classifier.ClassifyAt(script, realDir); cl.Outcome == core.Deny {
		return ExecResult{}, deniedError(cl)
	}
	// On Linux the child changes into the folder through the handle just
	// checked (its copy of the descriptor, before exec), so a symlink swapped
	// into the path meanwhile cannot move it out of the allowed folder.
	workDir := realDir
	if runtime.GOOS == "linux" {
		workDir = fmt.Sprintf("/proc/self/fd/%d", dir.Fd())
	}
	timeout := time.Duration(cfg.settings.ShellTimeoutSeconds) * time.Second
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stdout := proc.NewCapped(cfg.settings.OutputCapBytes)
	stderr := proc.NewCapped(cfg.settings.OutputCapBytes)
	p, err := proc.Start(runCtx, proc.Spec{
		Path:      b.shell,
		Args:      shellArgs(b.shell, script),
		Dir:       workDir,
		Env:       cfg.environment(b.opts.Environ(), realDir),
		Stdout:    stdout,
		Stderr:    stderr,
		KillGrace: killGrace,
		Restrict:  b.sandbox.Restrict,
	})
	if err != nil {
		return ExecResult{}, core.Errorf(core.EInternal, "the shell could not be started: %v", err)
	}
	dir.Close() // the child is in the folder now
	ex := p.Wait()
	if ctx.Err() != nil {
		return ExecResult{}, core.Errorf(pipeline.ECancelled, "the call was cancelled; the command's process group was killed")
	}
	res := ExecResult{Stdout: stdout.String(), Stderr: stderr.String(), ExitCode: ex.ShellCode()}
	if errors.Is(runCtx.Err(), context.DeadlineExceeded) {
		res.ExitCode, res.TimedOut = TimeoutExitCode, true
		res.Stderr += fmt.Sprintf("\n[airlock: the command ran longer than %d s; its process group was killed]", cfg.settings.ShellTimeoutSeconds)
	}
	if res.ExitCode != 0 && sandboxMayHaveRefused(res.Stderr) {
		if note := b.sandboxNote(); note != "" {
			res.Stderr = strings.TrimRight(res.Stderr, "\n") + note
		}
	}
	return res, nil
}

// sandboxMayHaveRefused reports whether a failed command's error output
// reads like a refusal of the sandbox: a file it may not use (as the C
// library says it, or Go and Node), a signal it may not send, or a setuid
// program (sudo) that cannot gain rights under no_new_privs.
func sandboxMayHaveRefused(stderr string) bool {
	lower := strings.ToLower(stderr)
	for _, s := range []string{"permission denied", "operation not permitted", "eacces", "eperm", "no new privileges"} {
		if strings.Contains(lower, s) {
			return true
		}
	}
	return false
}

// sandboxNote explains a refusal the kernel sandbox may have caused.
func (b *Builtin) sandboxNote() string {
	st := b.sandbox.Status()
	if !st.Enforced {
		return ""
	}
	return fmt.Sprintf("\n[airlock: shell commands run in a sandbox (%s) that keeps them out of Airlock's data directory (%s); it also keeps them from creating, removing or renaming files directly in the folders on that directory's path (%s), and a folder made there is usable from the next command on; setuid programs such as sudo gain no rights in it, and it may signal only processes it started. If a path above is one of these, or the command used sudo or signalled another process, that is why it was refused.]",
		st.Mechanism, strings.Join(st.Hidden, ", "), strings.Join(sandbox.PathFolders(st.Hidden), ", "))
}

// shellScript is the command line shell_exec runs and the policy checks:
// the command, then each argument quoted so that the shell passes it as
// one word.
func shellScript(command string, args []string) (string, error) {
	if strings.TrimSpace(command) == "" {
		return "", (&core.Error{Code: EInvalidArguments, Message: "the command is empty"}).WithHint(`pass a command such as "ls -la"`)
	}
	if strings.ContainsRune(command, 0) {
		return "", core.Errorf(EInvalidArguments, "the command contains a NUL byte")
	}
	var b strings.Builder
	b.WriteString(command)
	for i, a := range args {
		if strings.ContainsRune(a, 0) {
			return "", core.Errorf(EInvalidArguments, "argument %d contains a NUL byte", i+1)
		}
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			return "", core.Errorf(EInvalidArguments, "argument %d cannot be passed to the shell: %v", i+1, err)
		}
		b.WriteByte(' ')
		b.WriteString(q)
	}
	if b.Len() > MaxCommandBytes {
		return "", core.Errorf(core.ETooLarge, "the command line is %d bytes; the limit is %d", b.Len(), MaxCommandBytes)
	}
	return b.String(), nil
}

// shellArgs runs script without any start-up file: a profile or rc file
// would run commands nobody checked.
func shellArgs(shell, script string) []string {
	if filepath.Base(shell) == "bash" {
		return []string{"--noprofile", "--norc", "-c", script}
	}
	return []string{"-c", script}
}

// deniedError is the refusal of a command that matched a deny rule.
func deniedError(cl Classification) *core.Error {
	for _, f := range cl.Findings {
		if f.Outcome == core.Deny && (f.Rule == ruleAirlockItself || f.Rule == ruleAirlockData) {
			return (&core.Error{Code: ECommandDenied, Message: "refused: " + f.Reason}).
				WithHint("Airlock's own program and data directory are out of reach of its shell tool, whatever its settings say; a person changes Airlock's settings in its UI or on its command line")
		}
	}
	for _, f := range cl.Findings {
		if f.Outcome == core.Deny {
			return (&core.Error{Code: ECommandDenied, Message: "refused: " + f.Reason}).
				WithHint("denied commands are never run and cannot be approved; the deny list is in Airlock's Built-in tools settings (#/builtin)")
		}
	}
	return core.Errorf(ECommandDenied, "refused by the deny list")
}

// openCwd opens the working directory: cwd inside an allowed folder, or the
// first allowed folder. It returns the open folder and its real path.
func (c *config) openCwd(cwd string) (*os.File, string, error) {
	if len(c.roots) == 0 {
		return nil, "", disabledError()
	}
	if cwd == "" {
		cwd = c.roots[0].path
	}
	res, err := c.resolve(cwd)
	if err != nil {
		return nil, "", err
	}
	defer res.close()
	f, err := res.root.Open(res.rel)
	if err != nil {
		return nil, "", res.fail(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, "", res.fail(err)
	}
	if !fi.IsDir() {
		f.Close()
		return nil, "", core.Errorf(ENotADirectory, "cwd %s is not a folder", res.shown)
	}
	real := fdPath(f, filepath.Join(res.dir.real, res.rel))
	if err := c.protectedErr(real, res.shown); err != nil {
		f.Close()
		return nil, "", err
	}
	return f, real, nil
}

// environment is what a command inherits: the allow-listed variables of
// Airlock's environment, never Airlock's own or those that run other code,
// plus PWD.
func (c *config) environment(environ []string, pwd string) []string {
	out := make([]string, 0, len(c.settings.EnvAllow)+1)
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "PWD" || neverPassed(name) || !envAllowed(c.settings.EnvAllow, name) {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PWD="+pwd)
}

func envAllowed(allow []string, name string) bool {
	for _, a := range allow {
		if prefix, ok := strings.CutSuffix(a, "*"); ok {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		} else if a == name {
			return true
		}
	}
	return false
}
