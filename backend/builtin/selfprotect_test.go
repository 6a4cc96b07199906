package builtin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/core"
)

// The shell tool runs as the user who runs Airlock, who may change
// Airlock's settings: an agent that could run `airlock rules add
// --auto-approve`, or write rules.json, would decide its own approvals from
// then on (found by a security test: both were allowed). The shell policy
// refuses commands that run Airlock itself or name its data directory,
// whatever its lists say, and nobody can approve them.
func TestShellKeepsOffAirlockItself(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".config", "airlock")
	proj := filepath.Join(home, "proj")
	b := selfProtected(t, home, proj)
	mustSymlink(t, data, filepath.Join(proj, "cfg"))
	for _, cmd := range []string{
		// Airlock's own program, however it is reached.
		"airlock rules add --auto-approve",
		"/usr/local/bin/airlock agents update me --role owner",
		"env FOO=1 airlock token",
		"sh -c 'airlock servers accept x y --yes'",
		"echo $(airlock-bridge --url http://127.0.0.1:1/mcp)",
		"xargs airlock rules rm < ids.txt",
		"command -p airlock token",
		// Its data directory, however it is written.
		"cat " + filepath.Join(data, "airlock.lock"),
		"cat ~/.config/airlock/airlock.lock",
		`cp evil.json "$HOME/.config/airlock/rules.json"`,
		"cp evil.json ${HOME}/.config/airlock/servers.json",
		"echo '{}' > ~/.config/airlock/rules.json",
		"sqlite3 < ~/.config/airlock/airlock.db",
		"cat ~/.config/air*/rules.json",
		"cat ~/.config/airlock/../airlock/rules.json",
		"cat /proc/self/root" + filepath.Join(data, "rules.json"),
		"tar czf /tmp/x.tgz --directory=" + data + " .",
		"cat ../.config/airlock/rules.json",
		"cd .. && cat .config/airlock/rules.json",
		"cd ~/.config/airlock && cat rules.json",
		"D=~/.config/airlock; cat $D/rules.json",
		"cat cfg/rules.json",
		"ln -s ~/.config/airlock x",
	} {
		cl, err := b.ClassifyCommand(cmd, nil)
		if err != nil || cl.Outcome != core.Deny {
			t.Errorf("%s: %s (%+v), want deny", cmd, cl.Outcome, cl.Findings)
		}
	}
	for _, cmd := range []string{
		"cat notes.txt",
		"ls ~",
		"ls ~/*",
		"ls ~/.config",
		"cat ~/.config/airlockx/settings",
		"cat ~/.config/other/airlock.lock",
		"git log --oneline",
		"echo airlock",
		"grep -r airlock .",
		"command -v airlock", // says where it is; runs nothing
	} {
		if cl, err := b.ClassifyCommand(cmd, nil); err != nil || cl.Outcome != core.Allow {
			t.Errorf("%s: %s (%+v), want allow", cmd, cl.Outcome, cl.Findings)
		}
	}

	// Through the tool: refused before it runs, and said why.
	shell := connect(t, b.Servers()[builtin.ServerShellExec])
	for _, tc := range []struct{ cmd, mentions string }{
		{"airlock rules add --auto-approve", "runs Airlock itself"},
		{"echo '{\"rules\":[]}' > ~/.config/airlock/rules.json", "in Airlock's data directory"},
	} {
		res, c := call(t, shell, "shell_exec", map[string]any{"command": tc.cmd}, nil)
		if c != builtin.ECommandDenied || !strings.Contains(firstText(res), tc.mentions) || !strings.Contains(firstText(res), "out of reach of its shell tool") {
			t.Errorf("shell_exec %s: code %q, text %q; want %s mentioning %q", tc.cmd, c, firstText(res), builtin.ECommandDenied, tc.mentions)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(data, "rules.json")); string(b) != `{"rules":[]}` {
		t.Errorf("rules.json was written: %s", b)
	}
}

// A path the command computes as it runs is beyond the shell policy, which
// judges the command line (the README says so). Where the kernel has
// Landlock, such a command runs in a sandbox that keeps it out of the data
// directory anyway, and the answer says why it failed.
func TestShellSandboxKeepsComputedPathsOut(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".config", "airlock")
	proj := filepath.Join(home, "proj")
	b := selfProtected(t, home, proj)
	st := b.Get().Sandbox
	if !st.Enforced {
		t.Skipf("the kernel enforces no sandbox here: %s", st.Reason)
	}
	shell := connect(t, b.Servers()[builtin.ServerShellExec])
	for _, cmd := range []string{
		`cat "$(printf %s ~)/.config/airlock/rules.json"`,
		`echo '{"rules":[{"id":"mine"}]}' > "$(printf %s ~)/.config/$(printf air)lock/rules.json"`,
		`f=$(printf '%s/.con%s/air%s/rules.json' "$HOME" fig lock); rm -f "$f"`,
	} {
		if cl, err := b.ClassifyCommand(cmd, nil); err != nil || cl.Outcome == core.Deny {
			t.Fatalf("the shell policy refuses %s (%v): this test is about what it cannot see", cmd, err)
		}
		var out builtin.ExecResult
		res, c := call(t, shell, "shell_exec", map[string]any{"command": cmd, "cwd": proj}, &out)
		if c != "" || res.IsError {
			t.Fatalf("shell_exec %s: %s %s", cmd, c, firstText(res))
		}
		if out.ExitCode == 0 || !strings.Contains(out.Stderr, "Permission denied") || !strings.Contains(out.Stderr, "sandbox") || !strings.Contains(out.Stderr, data) {
			t.Errorf("shell_exec %s: exit %d, stderr %q; want a refusal by the sandbox that names the data directory", cmd, out.ExitCode, out.Stderr)
		}
		t.Logf("%s:\n%s", cmd, out.Stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(data, "rules.json")); string(got) != `{"rules":[]}` {
		t.Errorf("rules.json is %q", got)
	}
	// Work in the project is untouched.
	var out builtin.ExecResult
	if _, c := call(t, shell, "shell_exec", map[string]any{"command": "echo done > out.txt && cat notes.txt out.txt", "cwd": proj}, &out); c != "" || out.ExitCode != 0 || out.Stdout != "minedone\n" {
		t.Errorf("work in the project: code %q, %+v", c, out)
	}
}
