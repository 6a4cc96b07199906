package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
)

func runBuiltin(t *testing.T, db *store.DB, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := RunBuiltin(context.Background(), db, args, &out, &errOut)
	return out.String(), err
}

func mustRunBuiltin(t *testing.T, db *store.DB, args ...string) string {
	t.Helper()
	out, err := runBuiltin(t, db, args...)
	if err != nil {
		t.Fatalf("airlock builtin %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func TestBuiltinCLI(t *testing.T) {
	db := rulesDB(t)
	dir := t.TempDir()

	if out := mustRunBuiltin(t, db, "show"); !strings.Contains(out, "built-in tools: off") || !strings.Contains(out, "shell sandbox: ") || !strings.Contains(out, filepath.Dir(db.Path)) {
		t.Errorf("show on a fresh database (want the shell sandbox and the data directory it keeps commands out of):\n%s", out)
	}
	if out := mustRunBuiltin(t, db, "allow-path", dir); !strings.Contains(out, "built-in tools are on") {
		t.Errorf("allow-path: %s", out)
	}
	mustRunBuiltin(t, db, "set", "shellTimeoutSeconds", "120")
	mustRunBuiltin(t, db, "set", "binaryMimeAllow", `["image/png"]`)
	mustRunBuiltin(t, db, "add", "ask", "docker {run,exec}")
	mustRunBuiltin(t, db, "remove", "executableExtensions", ".sh")
	mustRunBuiltin(t, db, "add", "envAllow", "GOPATH")

	var ov builtin.Overview
	if err := json.Unmarshal([]byte(mustRunBuiltin(t, db, "show", "--json")), &ov); err != nil {
		t.Fatal(err)
	}
	want := builtin.Defaults()
	want.Roots = []string{dir}
	want.ShellTimeoutSeconds = 120
	want.BinaryMIMEAllow = []string{"image/png"}
	want.Ask = append(want.Ask, "docker {run,exec}")
	want.ExecutableExtensions = deleteString(want.ExecutableExtensions, ".sh")
	want.EnvAllow = append(want.EnvAllow, "GOPATH")
	if diff := cmp.Diff(want, ov.Settings); diff != "" {
		t.Errorf("settings after the edits (-want +got):\n%s", diff)
	}
	if !ov.Enabled {
		t.Error("show --json: not enabled")
	}

	// A new Builtin over the same database (a restarted Airlock) sees them.
	b, err := builtin.New(builtin.Options{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, b.Settings()); diff != "" {
		t.Errorf("stored settings (-want +got):\n%s", diff)
	}

	mustRunBuiltin(t, db, "reset", "shellTimeoutSeconds")
	mustRunBuiltin(t, db, "reset", "ask")
	b, _ = builtin.New(builtin.Options{Store: db})
	if got := b.Settings(); got.ShellTimeoutSeconds != 60 || !cmp.Equal(got.Ask, builtin.Defaults().Ask) || len(got.BinaryMIMEAllow) != 1 {
		t.Errorf("after resetting two keys: %+v", got)
	}
	mustRunBuiltin(t, db, "reset")
	b, _ = builtin.New(builtin.Options{Store: db})
	want = builtin.Defaults()
	want.Roots = []string{dir}
	if diff := cmp.Diff(want, b.Settings()); diff != "" {
		t.Errorf("after reset, the defaults with the folders kept (-want +got):\n%s", diff)
	}

	if out := mustRunBuiltin(t, db, "remove-path", dir); !strings.Contains(out, "built-in tools are off") {
		t.Errorf("remove-path: %s", out)
	}
}

func deleteString(l []string, s string) []string {
	var out []string
	for _, x := range l {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

func TestBuiltinAllowPathIsAbsolute(t *testing.T) {
	db := rulesDB(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "proj"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	mustRunBuiltin(t, db, "allow-path", "proj")
	b, err := builtin.New(builtin.Options{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{filepath.Join(dir, "proj")}, b.Settings().Roots); diff != "" {
		t.Errorf("a relative folder is stored absolute (-want +got):\n%s", diff)
	}
}

func TestBuiltinCheck(t *testing.T) {
	db := rulesDB(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--", "ls -la"}, "decision: allow"},
		{[]string{"check", "--", "sudo", "ls"}, "decision: ask"},
		{[]string{"check", "--", "curl x | sh"}, "matches the ask rule"},
		{[]string{"check", "--", "bash", "-c", "rm -rf /"}, "decision: deny"},
	} {
		out := mustRunBuiltin(t, db, tc.args...)
		if !strings.Contains(out, tc.want) {
			t.Errorf("airlock builtin %s:\n%s\nwant %q", strings.Join(tc.args, " "), out, tc.want)
		}
	}
	var c builtin.Classification
	if err := json.Unmarshal([]byte(mustRunBuiltin(t, db, "check", "--json", "--", "reboot")), &c); err != nil {
		t.Fatal(err)
	}
	if c.Outcome != core.Deny || len(c.Findings) == 0 {
		t.Errorf("check --json reboot: %+v", c)
	}
}

func TestBuiltinCLIErrors(t *testing.T) {
	db := rulesDB(t)
	for _, tc := range []struct {
		args     []string
		code     string
		mentions string
	}{
		{nil, core.EInvalid, "missing builtin command"},
		{[]string{"frobnicate"}, core.EInvalid, "unknown builtin command"},
		{[]string{"allow-path"}, core.EInvalid, "exactly one folder"},
		{[]string{"allow-path", "/nonexistent/dir"}, core.ENotFound, "does not exist"},
		{[]string{"allow-path", "/"}, core.EInvalid, "root of the file system"},
		{[]string{"remove-path", "/tmp/never-allowed"}, core.ENotFound, "not an allowed folder"},
		{[]string{"set", "shellTimeoutSeconds", "soon"}, core.EInvalid, "whole number"},
		{[]string{"set", "shellTimeoutSeconds", "0"}, core.EInvalid, "between"},
		{[]string{"set", "deny", "rm"}, core.EInvalid, "JSON array"},
		{[]string{"set", "roots", "[]"}, core.EInvalid, "allow-path"},
		{[]string{"set", "colour", "blue"}, core.EInvalid, "unknown key"},
		{[]string{"add", "deny", "rm {-r"}, core.EInvalid, "deny rule"},
		{[]string{"add", "shellTimeoutSeconds", "5"}, core.EInvalid, "is a number"},
		{[]string{"add", "envAllow", "AIRLOCK_TOKEN"}, core.EInvalid, "never passed"},
		{[]string{"remove", "ask", "not there"}, core.ENotFound, "not in ask"},
		{[]string{"show", "--bogus"}, core.EInvalid, "bogus"},
		{[]string{"check"}, core.EInvalid, "give a command"},
		{[]string{"check", "--", " "}, builtin.EInvalidArguments, "empty"},
	} {
		_, err := runBuiltin(t, db, tc.args...)
		if core.ErrorCode(err) != tc.code || !strings.Contains(err.Error(), tc.mentions) {
			t.Errorf("airlock builtin %s = %v; want %s mentioning %q", strings.Join(tc.args, " "), err, tc.code, tc.mentions)
		}
	}
	if out, err := runBuiltin(t, db, "set", "-h"); err != nil || !strings.Contains(out, "usage: airlock builtin set") {
		t.Errorf("set -h: %q, %v", out, err)
	}
}
