package sandbox_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/proc"
	"github.com/airlock-dev/airlock/backend/sandbox"
	"github.com/airlock-dev/airlock/backend/store"
)

// Landlock checks paths, not who a command talks to: connecting to a
// Unix socket by its path is not checked (ABI 7 has no right for it, and
// the rule set scopes no abstract sockets either). Any program of the user
// that runs commands on request and is not in the sandbox runs them
// outside it: a tmux or screen server the user left running, systemd
// --user (systemd-run --user over D-Bus), the Docker daemon. The command
// then reads the data directory by its plain path. Here a tmux server
// stands in for them; the test skips without tmux.
func TestSandboxedCommandCannotRunCommandsOutsideIt(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("no tmux here")
	}
	home := t.TempDir()
	data := filepath.Join(home, ".config", "airlock")
	project := filepath.Join(home, "src", "app")
	tmp := filepath.Join(home, "tmp")
	for _, d := range []string{data, project, tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(data, "rules.json"), []byte(`{"rules":["mine"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	sb := sandbox.New([]string{data})
	if st := sb.Status(); !st.Enforced {
		t.Skipf("the kernel enforces no sandbox here: %s", st.Reason)
	}
	// The user's tmux server, started outside Airlock.
	sock := filepath.Join(tmp, "tmux.sock")
	if out, err := exec.Command(tmux, "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", "user").CombinedOutput(); err != nil {
		t.Skipf("tmux cannot start a server here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command(tmux, "-S", sock, "kill-server").Run() })
	tmpDir = tmp
	script := `tmux -S "$1" run-shell "cat '$0/rules.json' > '$PWD/stolen'" && cat stolen`
	code, out := runArgs(t, sb, project, script, data, sock)
	if code == 0 || strings.Contains(out, "mine") {
		t.Errorf("a sandboxed command read the data directory through the user's tmux server: exit %d, %q", code, out)
	}
}

// A command may make folders anywhere, the data directory included (the
// rule set leaves MAKE_DIR unhandled, and the package calls such a folder
// harmless). A folder squatting a name Airlock makes later is not: with
// airlock.db-wal a folder, the database cannot be opened, and Airlock does
// not start again, until someone finds and removes it. (The WAL file is
// there while Airlock runs; a process the command leaves behind, which
// setsid takes out of the process group that is killed, makes the folder
// once Airlock has stopped. The test makes it between two opens.)
func TestSandboxedCommandCannotBreakAirlocksDatabase(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".config", "airlock")
	project := filepath.Join(home, "src", "app")
	tmp := filepath.Join(home, "tmp")
	for _, d := range []string{data, project, tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	dbPath := filepath.Join(data, store.FileName)
	db, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	db.Close() // Airlock stops
	sb := sandbox.New([]string{data})
	if st := sb.Status(); !st.Enforced {
		t.Skipf("the kernel enforces no sandbox here: %s", st.Reason)
	}
	tmpDir = tmp
	code, out := runArg(t, sb, project, `mkdir "$0/airlock.db-wal"`, data)
	db, err = store.Open(dbPath) // Airlock starts again
	if err != nil {
		t.Errorf("after a sandboxed command's %q (exit %d %s), Airlock cannot open its database: %v", `mkdir "$0/airlock.db-wal"`, code, out, err)
		return
	}
	db.Close()
}

// runArgs is runArg with more arguments ($1, ...).
func runArgs(t *testing.T, sb *sandbox.Sandbox, dir, script string, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	p, err := proc.Start(context.Background(), proc.Spec{Path: "/bin/sh", Args: append([]string{"-c", script}, args...), Dir: dir,
		Env: []string{"PATH=/usr/bin:/bin", "TMPDIR=" + tmpDir}, Stdout: &out, Stderr: &out, Restrict: sb.Restrict})
	if err != nil {
		t.Fatalf("start %q: %v", script, err)
	}
	return p.Wait().Code, strings.TrimSpace(out.String())
}
