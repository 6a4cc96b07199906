package builtin_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
)

// Airlock's data directory inside an allowed folder (a home folder allowed
// whole) stays out of the file tools' reach: reading it gave an agent the
// shared token's rights, and writing rules.json its own rules (found by a
// security test). It cannot be an allowed folder either.
func TestDataDirOutOfReach(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".config", "airlock")
	mustWrite(t, filepath.Join(data, "agent-token"), "alk_secret")
	mustWrite(t, filepath.Join(data, "rules.json"), `{"rules":[]}`)
	mustWrite(t, filepath.Join(home, "notes.txt"), "mine")
	mustSymlink(t, filepath.Join(".config", "airlock", "agent-token"), filepath.Join(home, "tok"))
	mustSymlink(t, filepath.Join(".config", "airlock"), filepath.Join(home, "cfg"))
	// A hard link to the token, beside it (found in an earlier stop, left
	// then).
	if err := os.Link(filepath.Join(data, "agent-token"), filepath.Join(home, "hard")); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(data, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b, err := builtin.New(builtin.Options{Store: db, DataDir: data, Environ: testEnviron})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.AllowPath(home); err != nil {
		t.Fatalf("allowing the home folder that holds the data directory: %v", err)
	}
	ctx := context.Background()

	if res, err := b.ReadFile(ctx, builtin.ReadArgs{Path: filepath.Join(home, "notes.txt")}); err != nil || res.Content != "mine" {
		t.Fatalf("reading a file beside the data directory = %q, %v", res.Content, err)
	}
	for _, p := range []string{filepath.Join(data, "agent-token"), ".config/airlock/agent-token", "tok", "cfg/rules.json", filepath.Join(home, ".config/./airlock/../airlock/rules.json"), "hard"} {
		res, err := b.ReadFile(ctx, builtin.ReadArgs{Path: p})
		if code(err) != builtin.EPathProtected || res.Content != "" {
			t.Errorf("ReadFile(%s) = %q, %v; want %s", p, res.Content, err, builtin.EPathProtected)
		}
		v := b.Check(ctx, toolReq(builtin.ServerFileRead, builtin.ToolFileRead, jsonArgs(t, map[string]any{"path": p})))
		if v.Outcome != core.Deny || v.Code != builtin.EPathProtected {
			t.Errorf("Check(file_read %s) = %+v, want a denial %s before anyone is asked", p, v, builtin.EPathProtected)
		}
	}
	for _, p := range []string{filepath.Join(data, "rules.json"), "cfg/rules.json", "cfg/new/x.txt", ".config/airlock/journal/x.txt", "hard"} {
		args := builtin.WriteArgs{Path: p, Content: `{"rules":[{"decision":"auto-approve"}]}`, Overwrite: true}
		if _, err := b.WriteFile(ctx, args); code(err) != builtin.EPathProtected {
			t.Errorf("WriteFile(%s) = %v; want %s", p, err, builtin.EPathProtected)
		}
		v := b.Check(ctx, toolReq(builtin.ServerFileWrite, builtin.ToolFileWrite, jsonArgs(t, args)))
		if v.Outcome != core.Deny || v.Code != builtin.EPathProtected {
			t.Errorf("Check(file_write %s) = %+v, want a denial %s", p, v, builtin.EPathProtected)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(data, "rules.json")); string(got) != `{"rules":[]}` {
		t.Errorf("rules.json = %s, want it untouched", got)
	}
	for _, p := range []string{filepath.Join(data, "new"), filepath.Join(data, "journal")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was created", p)
		}
	}
	if _, err := b.Exec(ctx, builtin.ExecArgs{Command: "ls", Cwd: data}); code(err) != builtin.EPathProtected {
		t.Errorf("shell_exec with cwd in the data directory = %v; want %s", err, builtin.EPathProtected)
	}
	for _, dir := range []string{data, filepath.Join(data, "journal"), filepath.Join(home, "cfg")} {
		os.MkdirAll(dir, 0o755)
		if _, err := b.AllowPath(dir); code(err) != core.EInvalid {
			t.Errorf("AllowPath(%s) = %v; want it refused", dir, err)
		}
	}
}
