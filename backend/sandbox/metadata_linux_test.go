package sandbox_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/sandbox"
)

// Landlock has no right for a file's metadata: chmod, chown, utimes and
// extended attributes are not checked, so the rule set leaves them allowed
// in the data directory, although the README says the data directory
// "cannot be read, written, renamed" by any path. A command can make the
// token or the whole data directory readable and writable by every local
// user (chmod 0777), or make Airlock unable to read its database or rules
// on its next start (chmod 0), which the sandbox is meant to prevent.
func TestSandboxKeepsDataDirectoryMetadata(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".config", "airlock")
	project := filepath.Join(home, "src", "app")
	tmp := filepath.Join(home, "tmp")
	for _, d := range []string{data, project, tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(data, 0o700); err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(data, "agent-token")
	if err := os.WriteFile(token, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	stamp := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(token, stamp, stamp); err != nil {
		t.Fatal(err)
	}
	sb := sandbox.New([]string{data})
	if st := sb.Status(); !st.Enforced {
		t.Skipf("the kernel enforces no sandbox here: %s", st.Reason)
	}
	tmpDir = tmp
	for name, script := range map[string]string{
		"token readable by all":      `chmod 0644 "$0/agent-token"`,
		"token unreadable":           `chmod 0 "$0/agent-token"`,
		"data directory open to all": `chmod 0777 "$0"`,
		"modification time":          `touch -m -d 2000-01-01 "$0/agent-token"`,
	} {
		t.Run(name, func(t *testing.T) {
			code, out := runArg(t, sb, project, script, data)
			if code == 0 {
				t.Errorf("%q exited 0 in the sandbox: %s", script, out)
			}
		})
	}
	if fi, err := os.Stat(data); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the data directory's mode after the commands: %v, %v; want 0700", fi.Mode(), err)
	}
	if fi, err := os.Stat(token); err != nil || fi.Mode().Perm() != 0o600 || !fi.ModTime().Equal(stamp) {
		t.Errorf("the token's mode and time after the commands: %v %v, %v; want 0600 %v", fi.Mode(), fi.ModTime(), err, stamp)
	}
}

// Landlock ABI 6 can scope signals (LANDLOCK_SCOPE_SIGNAL): a sandboxed
// process then cannot signal a process outside its domain. The rule set
// does not ask for it, so a command can stop or kill Airlock itself (the
// test process stands in for it), which ends every agent's session and the
// approvals it waits for. kill -0 checks the permission without sending
// anything.
func TestSandboxedCommandCannotSignalAirlock(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".config", "airlock")
	project := filepath.Join(home, "src", "app")
	tmp := filepath.Join(home, "tmp")
	for _, d := range []string{data, project, tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	sb := sandbox.New([]string{data})
	st := sb.Status()
	if !st.Enforced {
		t.Skipf("the kernel enforces no sandbox here: %s", st.Reason)
	}
	if abi, _ := strconv.Atoi(strings.TrimPrefix(st.Mechanism, "Landlock ABI ")); abi < 6 {
		t.Skipf("%s cannot scope signals", st.Mechanism)
	}
	tmpDir = tmp
	if code, out := runArg(t, sb, project, `kill -0 $PPID`, data); code == 0 {
		t.Errorf("a sandboxed command may signal Airlock (pid %d): kill -0 succeeded %s", os.Getpid(), out)
	}
}
