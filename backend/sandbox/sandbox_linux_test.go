package sandbox_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/proc"
	"github.com/airlock-dev/airlock/backend/sandbox"
)

// TestSandboxHidesTheDataDirectory builds a home folder with Airlock's data
// directory in it and a project beside it, and checks what a command in
// the sandbox can do: nothing in the data directory, however the path is
// written, and everything in the project.
func TestSandboxHidesTheDataDirectory(t *testing.T) {
	home, data, project := homeLayout(t)
	rules := filepath.Join(data, "rules.json")
	if err := os.WriteFile(rules, []byte(`{"rules":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".profile"), []byte("# profile\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(data, filepath.Join(project, "link")); err != nil {
		t.Fatal(err)
	}
	sb := sandbox.New([]string{data})
	st := sb.Status()
	if !st.Enforced {
		t.Skipf("the kernel enforces no sandbox here: %s", st.Reason)
	}
	t.Logf("sandbox: %s, hiding %v", st.Mechanism, st.Hidden)

	refused := map[string]string{
		"read by a computed path":  `cat "$(printf %s "$0")/rules.json"`,
		"write by a computed path": `echo '{"rules":[{"auto":true}]}' > "$(printf %s "$0")/rules.json"`,
		"truncate":                 `: > "$0/rules.json"`,
		"append":                   `echo x >> "$0/rules.json"`,
		"remove":                   `rm -f "$0/rules.json"`,
		"rename away":              `mv "$0/rules.json" "$0/../../src/app/stolen"`,
		"replace by rename":        `echo evil > "$0/../../src/app/evil" && mv "$0/../../src/app/evil" "$0/rules.json"`,
		"new file":                 `echo x > "$0/servers.json"`,
		"through a link":           `cat link/rules.json`,
		"through /proc/self/root":  `cat "/proc/self/root$0/rules.json"`,
		"copy out":                 `cp "$0/rules.json" ./copy`,
		"hard link out":            `ln "$0/rules.json" ./hard`,
		"move the data directory":  `mv "$0" "$0.old"`,
	}
	for name, script := range refused {
		t.Run("refused/"+name, func(t *testing.T) {
			code, out := runArg(t, sb, project, script, data)
			if code == 0 {
				t.Errorf("%q exited 0 in the sandbox: %s", script, out)
			}
			if got, err := os.ReadFile(rules); err != nil || string(got) != `{"rules":[]}` {
				t.Fatalf("rules.json after %q: %q, %v", script, got, err)
			}
		})
	}
	allowed := map[string]string{
		"work in the project":    `echo hi > note && cat note && mkdir -p a/b && mv note a/b/ && rm -r a`,
		"read a file in home":    `cat "$0/../../.profile"`,
		"write a file in home":   `echo "# more" >> "$0/../../.profile"`,
		"list the folders above": `ls "$0/.." "$0/../.." / >/dev/null`,
		"other tools' config":    `echo x > "$0/../other/conf" && cat "$0/../other/conf"`,
		"temporary files":        `f=$(mktemp) && echo x > "$f" && rm "$f"`,
		"system files":           `head -c 10 /etc/passwd >/dev/null && ls /usr/bin >/dev/null`,
		"the name in a string":   `echo "$0/rules.json"`,
		// Names are no secret: listing is allowed everywhere, so that the
		// folders on the data directory's path can be listed.
		"list the data directory": `ls "$0"`,
	}
	for name, script := range allowed {
		t.Run("allowed/"+name, func(t *testing.T) {
			if code, out := runArg(t, sb, project, script, data); code != 0 {
				t.Errorf("%q exited %d in the sandbox: %s", script, code, out)
			}
		})
	}
	// The price, as the package says: no file can be made directly in a
	// folder on the data directory's path. A folder can (tools make theirs
	// in the home folder), and the next command can use it, but nothing can
	// be put in one made in the data directory.
	if code, _ := runArg(t, sb, project, `touch "$0/../../new-in-home"`, data); code == 0 {
		t.Errorf("a command made a file directly in the home folder, which holds the data directory's folder")
	}
	if code, out := runArg(t, sb, project, `mkdir "$0/../../.npm"`, data); code != 0 {
		t.Errorf("a command could not make a tool's folder in the home folder: %s", out)
	}
	if code, out := runArg(t, sb, project, `echo x > "$0/../../.npm/log" && cat "$0/../../.npm/log"`, data); code != 0 {
		t.Errorf("the next command could not use the tool's folder made in the home folder: %s", out)
	}
	if code, _ := runArg(t, sb, project, `mkdir -p "$0/sub" && echo x > "$0/sub/f"`, data); code == 0 {
		t.Errorf("a command put a file in a folder it made in the data directory")
	}
	// Airlock itself is not in the sandbox: the thread that entered it is
	// gone.
	if _, err := os.ReadFile(rules); err != nil {
		t.Errorf("Airlock cannot read its own rules after starting commands: %v", err)
	}
	if err := os.WriteFile(rules, []byte(`{"rules":[]}`), 0o600); err != nil {
		t.Errorf("Airlock cannot write its own rules after starting commands: %v", err)
	}
}

// homeLayout makes a home folder with Airlock's data directory in it
// (~/.config/airlock), another tool's folder beside it, a project
// (~/src/app) and the commands' TMPDIR (~/tmp).
func homeLayout(t *testing.T) (home, data, project string) {
	t.Helper()
	home = t.TempDir()
	data = filepath.Join(home, ".config", "airlock")
	project = filepath.Join(home, "src", "app")
	tmpDir = filepath.Join(home, "tmp")
	for _, d := range []string{data, project, tmpDir, filepath.Join(home, ".config", "other")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return home, data, project
}

// tmpDir is the commands' TMPDIR. The test's home folder is in the
// system's temporary folder, which makes that folder one on the data
// directory's path, where no entries can be made.
var tmpDir = os.TempDir()

// runArg is run with arg as the script's $0.
func runArg(t *testing.T, sb *sandbox.Sandbox, dir, script, arg string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	p, err := proc.Start(context.Background(), proc.Spec{Path: "/bin/sh", Args: []string{"-c", script, arg}, Dir: dir,
		Env: []string{"PATH=/usr/bin:/bin", "TMPDIR=" + tmpDir}, Stdout: &out, Stderr: &out, Restrict: sb.Restrict})
	if err != nil {
		t.Fatalf("start %q: %v", script, err)
	}
	return p.Wait().Code, strings.TrimSpace(out.String())
}
