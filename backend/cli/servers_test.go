package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/config"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/google/go-cmp/cmp"
)

// servers runs `airlock servers args...` on dir and returns its output.
func servers(t *testing.T, dir, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = Servers(context.Background(), dir, args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

func mustServers(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, _, err := servers(t, dir, "", args...)
	if err != nil {
		t.Fatalf("servers %v: %v", args, err)
	}
	return out
}

func TestServersAddListRemove(t *testing.T) {
	dir := t.TempDir()
	mustServers(t, dir, "add", "fs", "--env", "DEBUG=1", "--env", "B=x=y", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/my dir")
	mustServers(t, dir, "add", "--url", "https://example.com/mcp", "--header", "Authorization=Bearer t", "--disabled", "web")
	mustServers(t, dir, "add", "old", "--url", "http://127.0.0.1:9000/sse", "--type", "sse", "--start-timeout", "90", "--call-timeout", "1h30m")

	// No Airlock runs on dir: the list says so instead of a live state.
	row := func(id, state, transport, target string) string {
		return fmt.Sprintf("%-5s%-15s%-7s%-11s%-58s\n", id, state, "-", transport, target)
	}
	want := fmt.Sprintf("%-5s%-15s%-7s%-11s%-58sNOTE\n", "ID", "STATE", "TOOLS", "TRANSPORT", "COMMAND/URL") +
		row("fs", "(not running)", "stdio", `npx -y @modelcontextprotocol/server-filesystem "/my dir"`) +
		row("old", "(not running)", "sse", "http://127.0.0.1:9000/sse") +
		row("web", "disabled", "http", "https://example.com/mcp")
	if diff := cmp.Diff(want, mustServers(t, dir, "list")); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}

	var got []core.ServerConfig
	if err := json.Unmarshal([]byte(mustServers(t, dir, "list", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	wantJSON := []core.ServerConfig{
		{ID: "fs", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/my dir"}, Env: map[string]string{"DEBUG": "1", "B": "x=y"}},
		{ID: "old", URL: "http://127.0.0.1:9000/sse", Type: "sse", StartTimeout: 90, CallTimeout: 5400},
		{ID: "web", URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer t"}, Disabled: true},
	}
	if diff := cmp.Diff(wantJSON, got); diff != "" {
		t.Errorf("list --json (-want +got):\n%s", diff)
	}

	if out := mustServers(t, dir, "rm", "old"); out != "removed server old\n" {
		t.Errorf("rm printed %q", out)
	}
	got = nil
	json.Unmarshal([]byte(mustServers(t, dir, "list", "--json")), &got)
	if len(got) != 2 {
		t.Errorf("after rm: %d servers, want 2", len(got))
	}
}

func TestServersErrors(t *testing.T) {
	dir := t.TempDir()
	mustServers(t, dir, "add", "fs", "--", "cmd")
	tests := []struct {
		name string
		args []string
		code string
		msg  string
	}{
		{"no command", nil, core.EInvalid, "missing servers command"},
		{"unknown command", []string{"frob"}, core.EInvalid, `unknown servers command "frob"`},
		{"add without id", []string{"add", "--url", "http://h"}, core.EInvalid, "missing server id"},
		{"add command without --", []string{"add", "x", "npx", "pkg"}, core.EInvalid, "put the command after --"},
		{"add nothing to run", []string{"add", "x"}, core.EInvalid, "give a command after -- or a --url"},
		{"add empty command", []string{"add", "x", "--"}, core.EInvalid, "no command after --"},
		{"add both", []string{"add", "x", "--url", "http://h", "--", "cmd"}, core.EInvalid, "both a command and a url"},
		{"add duplicate", []string{"add", "fs", "--", "other"}, core.EConflict, `server "fs" already exists`},
		{"add bad id", []string{"add", "a__b", "--", "cmd"}, core.EInvalid, "namespace separator"},
		{"add bad url", []string{"add", "x", "--url", "file:///etc/passwd"}, core.EInvalid, "http:// or https://"},
		{"add bad env", []string{"add", "x", "--env", "NOVALUE", "--", "cmd"}, core.EInvalid, "not KEY=VALUE"},
		{"unknown flag", []string{"list", "--yaml"}, core.EInvalid, "flag provided but not defined"},
		{"add no timeout", []string{"add", "x", "--call-timeout", "0", "--", "cmd"}, core.EInvalid, `"0" is not a whole number of seconds from 1s to 24h`},
		{"add timeout with a fraction", []string{"add", "x", "--start-timeout", "1.5s", "--", "cmd"}, core.EInvalid, "not a whole number of seconds"},
		{"add timeout over a day", []string{"add", "x", "--call-timeout", "25h", "--", "cmd"}, core.EInvalid, "not a whole number of seconds from 1s to 24h"},
		{"rm missing", []string{"rm", "nope"}, core.ENotFound, `server "nope" not found`},
		{"rm no id", []string{"rm"}, core.EInvalid, "at least one server id"},
		{"import nothing", []string{"import"}, core.EInvalid, "give a file"},
		{"import missing file", []string{"import", filepath.Join(dir, "nope.json")}, core.ENotFound, "not found"},
		{"import file and --from", []string{"import", "f.json", "--from", "cursor"}, core.EInvalid, "not both"},
		{"import unknown --from", []string{"import", "--from", "emacs"}, core.EInvalid, "unknown --from"},
		{"import bad JSON", []string{"import", "-"}, core.EInvalid, "line 1, column 16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := servers(t, dir, `{"mcpServers": }`, tt.args...)
			if core.ErrorCode(err) != tt.code || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("servers %v: error %v, want code %s containing %q", tt.args, err, tt.code, tt.msg)
			}
		})
	}
}

func TestServersHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"list", "-h"}, {"add", "--help"}, {"rm", "-h"}, {"import", "-h"}, {"export", "-h"}} {
		out, _, err := servers(t, t.TempDir(), "", args...)
		if err != nil || !strings.Contains(out, "usage: airlock servers") {
			t.Errorf("servers %v: err %v, output %q; want usage on stdout", args, err, out)
		}
	}
}

const claudeConfig = `{
  "mcpServers": {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "autoApprove": ["read_file"], "timeout": 60},
    "fs": {"command": "dup"},
    "bad": {"url": "ftp://x"}
  },
  "globalShortcut": ""
}`

func TestServersImportExport(t *testing.T) {
	dir := t.TempDir()
	mustServers(t, dir, "add", "fs", "--", "cmd")
	file := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	if err := os.WriteFile(file, []byte(claudeConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	want := "added    filesystem\n" +
		"skipped  bad: server \"bad\" has url \"ftp://x\"; it must be an http:// or https:// URL\n" +
		"skipped  fs: a server with this id already exists\n" +
		"1 added, 2 skipped from " + file + "\n"
	if diff := cmp.Diff(want, mustServers(t, dir, "import", file)); diff != "" {
		t.Errorf("import (-want +got):\n%s", diff)
	}

	// Export, then import into an empty data dir through stdin: the same
	// servers, extra fields included.
	exported := mustServers(t, dir, "export")
	other := t.TempDir()
	out, _, err := servers(t, other, exported, "import", "--json", "-")
	if err != nil {
		t.Fatal(err)
	}
	var res config.ImportResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("import --json printed %q: %v", out, err)
	}
	if diff := cmp.Diff(config.ImportResult{Added: []string{"filesystem", "fs"}, Skipped: []config.Skipped{}}, res); diff != "" {
		t.Errorf("import --json (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(exported, mustServers(t, other, "export")); diff != "" {
		t.Errorf("export after re-import (-first +second):\n%s", diff)
	}
	if !strings.Contains(exported, `"autoApprove"`) || !strings.Contains(exported, `"timeout": 60`) {
		t.Errorf("export lost extra fields:\n%s", exported)
	}
}

func TestServersImportFrom(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home) // os.UserHomeDir on Windows
	dir := t.TempDir()
	if _, _, err := servers(t, dir, "", "import", "--from", "cursor"); core.ErrorCode(err) != core.ENotFound {
		t.Fatalf("--from cursor without a config: %v, want not_found", err)
	}
	claudeCode := `{"numStartups": 1, "projects": {"/p": {"mcpServers": {"proj": {"command": "p"}}}}, "mcpServers": {"top": {"type": "stdio", "command": "t"}}}`
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(claudeCode), 0o600); err != nil {
		t.Fatal(err)
	}
	out := mustServers(t, dir, "import", "--from", "claude-code")
	if !strings.HasPrefix(out, "added    top\n1 added, 0 skipped from ") {
		t.Errorf("import --from claude-code printed %q", out)
	}
}

func TestServersBrokenFile(t *testing.T) {
	dir := t.TempDir()
	broken := `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`
	if err := os.WriteFile(config.Path(dir), []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"list"}, {"export"}, {"add", "b", "--", "x"}, {"rm", "a"}, {"import", "-"}} {
		_, _, err := servers(t, dir, `{"mcpServers": {"c": {"command": "z"}}}`, args...)
		if core.ErrorCode(err) != core.EInvalid || !strings.Contains(err.Error(), "more than once") {
			t.Errorf("servers %v on a broken file: %v, want invalid naming the duplicate", args, err)
		}
	}
	data, _ := os.ReadFile(config.Path(dir))
	if string(data) != broken {
		t.Errorf("the broken file was overwritten with %s", data)
	}
}

func TestServersDataDirFlag(t *testing.T) {
	other := t.TempDir()
	mustServers(t, "", "add", "--data-dir", other, "x", "--", "cmd")
	if _, _, err := servers(t, "", "", "list"); core.ErrorCode(err) != core.EInvalid {
		t.Errorf("list without a data dir: %v, want invalid", err)
	}
	if out := mustServers(t, t.TempDir(), "list", "--data-dir", other); !strings.Contains(out, "\nx ") {
		t.Errorf("list --data-dir printed %q", out)
	}
}

func TestServersEmptyList(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := Servers(context.Background(), t.TempDir(), []string{"list"}, io.MultiReader(), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	// No empty table: what to do instead (scripts use --json).
	if !strings.HasPrefix(out.String(), "no servers yet: add one with 'airlock servers add'") || strings.Contains(out.String(), "STATE") {
		t.Errorf("empty list: stdout %q, stderr %q", out.String(), errOut.String())
	}
}

// Removing a server lists the rules that still name it: they would apply
// to a server added later under the same id (found by a new-user test: an
// auto-approve rule went to another program added as "slow").
func TestServersRemoveListsItsRules(t *testing.T) {
	dir := t.TempDir()
	mustServers(t, dir, "add", "slow", "--", "node", "slow.js")
	mustServers(t, dir, "add", "other", "--", "node", "other.js")
	db, err := store.Open(filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	mustRunRules(t, db, "add", "--server", "slow", "--auto-approve")
	mustRunRules(t, db, "add", "--server", "other", "--auto-approve")
	rules, _ := store.NewRules(db).ListRules()
	db.Close()
	var slowRule string
	for _, r := range rules {
		if r.ServerID != nil && *r.ServerID == "slow" {
			slowRule = r.ID
		}
	}
	out := mustServers(t, dir, "rm", "slow")
	want := "removed server slow\n" +
		"  1 rule(s) still name server slow and would apply to a server added later under that id:\n" +
		"    " + slowRule + "  auto-approves: priority 0, server slow\n" +
		"  remove them with: airlock rules rm " + slowRule + "\n"
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("rm printed (-want +got):\n%s", diff)
	}
}

// servers update changes the settings given and keeps the rest (found by a
// new-user test: no command changed a server's timeouts, and adding it
// again was refused without a hint).
func TestServersUpdate(t *testing.T) {
	dir := t.TempDir()
	mustServers(t, dir, "add", "fs", "--env", "A=1", "--start-timeout", "90", "--", "npx", "-y", "server-filesystem", "/tmp")
	_, _, err := servers(t, dir, "", "add", "fs", "--", "npx")
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != core.EConflict || !strings.Contains(ce.Hint, "airlock servers update fs") {
		t.Errorf("adding fs again: %v, want a conflict pointing to servers update", err)
	}
	if out := mustServers(t, dir, "update", "fs", "--call-timeout", "45m", "--no-prefix=true"); out != "updated server fs\n" {
		t.Errorf("update printed %q", out)
	}
	mustServers(t, dir, "update", "fs", "--disabled") // bare, as on servers add
	var got []core.ServerConfig
	if err := json.Unmarshal([]byte(mustServers(t, dir, "list", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	want := []core.ServerConfig{{ID: "fs", Command: "npx", Args: []string{"-y", "server-filesystem", "/tmp"}, Env: map[string]string{"A": "1"},
		StartTimeout: 90, CallTimeout: 2700, NoPrefix: true, Disabled: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after update (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		args []string
		code string
		msg  string
	}{
		{[]string{"update", "fs"}, core.EInvalid, "nothing to change"},
		{[]string{"update", "fs", "--", "node", "/z.js"}, core.EInvalid, "does not change a server's command"},
		{[]string{"update", "nope", "--disabled=true"}, core.ENotFound, `server "nope" not found`},
		{[]string{"update", "fs", "--disabled=maybe"}, core.EInvalid, `invalid boolean value "maybe"`},
		{[]string{"rm", "fs", "nope"}, core.ENotFound, `server "nope" not found; nothing was removed`},
		{[]string{"update", "fs", "--call-timeout", "0"}, core.EInvalid, "call-timeout"},
	} {
		_, _, err := servers(t, dir, "", tc.args...)
		if core.ErrorCode(err) != tc.code || !strings.Contains(core.ErrorMessage(err), tc.msg) {
			t.Errorf("servers %v: %v, want %s containing %q", tc.args, err, tc.code, tc.msg)
		}
	}
}

// servers add records the order servers were added in, for the running
// Airlock or the next one: zeta added before alpha stays first (found by
// a regression test: servers added while Airlock did not run were ordered
// by id).
func TestServersAddRecordsTheOrder(t *testing.T) {
	dir := t.TempDir()
	mustServers(t, dir, "add", "zeta", "--no-prefix", "--", "node", "z.js")
	mustServers(t, dir, "add", "alpha", "--no-prefix", "--", "node", "a.js")
	db, err := store.Open(filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	order, err := db.ServerOrder([]string{"alpha", "zeta"}, true)
	if err != nil || order["zeta"] >= order["alpha"] {
		t.Errorf("order = %v, %v; want zeta before alpha", order, err)
	}
}

// With no Airlock running, a server removed and added again comes after
// the others, as the running Airlock puts it (found by a code review: it
// took its first place back, and with it a name a second --no-prefix
// server exposes).
func TestRemovedServerLosesItsPlace(t *testing.T) {
	dir := t.TempDir()
	mustServers(t, dir, "add", "a", "--no-prefix", "--", "node", "a.js")
	mustServers(t, dir, "add", "b", "--no-prefix", "--", "node", "b.js")
	mustServers(t, dir, "rm", "a")
	mustServers(t, dir, "add", "a", "--no-prefix", "--", "node", "a.js")
	db, err := store.Open(filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.ServerOrder([]string{"a", "b"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if got["a"] < got["b"] {
		t.Errorf("a, removed and added again after b, orders before it: %v", got)
	}
}
