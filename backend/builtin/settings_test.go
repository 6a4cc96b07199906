package builtin_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
)

func openDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestDefaultsAreSafe(t *testing.T) {
	d := builtin.Defaults()
	if err := d.Validate(); err != nil {
		t.Fatalf("Defaults().Validate() = %v", err)
	}
	if len(d.Roots) != 0 || len(d.BinaryMIMEAllow) != 0 {
		t.Errorf("defaults allow folders %v and binary types %v, want none", d.Roots, d.BinaryMIMEAllow)
	}
	if d.ShellTimeoutSeconds != 60 {
		t.Errorf("default timeout %d s, want 60", d.ShellTimeoutSeconds)
	}
	b, err := builtin.New(builtin.Options{Store: openDB(t)})
	if err != nil {
		t.Fatal(err)
	}
	if b.Enabled() {
		t.Error("a fresh Airlock has the built-in servers on, want off until a folder is allowed")
	}
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		edit     func(*builtin.Settings)
		mentions string
	}{
		{"relative root", func(s *builtin.Settings) { s.Roots = []string{"project"} }, "absolute"},
		{"file system root", func(s *builtin.Settings) { s.Roots = []string{"/"} }, "root of the file system"},
		{"proc", func(s *builtin.Settings) { s.Roots = []string{"/proc/self"} }, "pseudo file system"},
		{"NUL in a root", func(s *builtin.Settings) { s.Roots = []string{dir + "\x00x"} }, "NUL"},
		{"bad deny rule", func(s *builtin.Settings) { s.Deny = append(s.Deny, "rm {-r") }, "deny rule"},
		{"rule starting with a flag", func(s *builtin.Settings) { s.Ask = []string{"-rf"} }, "command name"},
		{"empty rule", func(s *builtin.Settings) { s.Ask = []string{"  "} }, "empty rule"},
		{"pipeline with a redirection", func(s *builtin.Settings) { s.Deny = []string{"cat | > /dev/sda"} }, "redirection"},
		{"env *", func(s *builtin.Settings) { s.EnvAllow = []string{"*"} }, "every secret"},
		{"env Airlock's own", func(s *builtin.Settings) { s.EnvAllow = []string{"AIRLOCK_TOKEN"} }, "never passed"},
		{"env AIRLOCK_*", func(s *builtin.Settings) { s.EnvAllow = []string{"AIRL*"} }, "never passed"},
		{"env loader", func(s *builtin.Settings) { s.EnvAllow = []string{"LD_PRELOAD"} }, "never passed"},
		{"env not a name", func(s *builtin.Settings) { s.EnvAllow = []string{"A-B"} }, "not a variable name"},
		{"timeout 0", func(s *builtin.Settings) { s.ShellTimeoutSeconds = 0 }, "shellTimeoutSeconds"},
		{"timeout too long", func(s *builtin.Settings) { s.ShellTimeoutSeconds = 7200 }, "shellTimeoutSeconds"},
		{"output cap too small", func(s *builtin.Settings) { s.OutputCapBytes = 10 }, "outputCapBytes"},
		{"read cap too big", func(s *builtin.Settings) { s.ReadCapBytes = 1 << 40 }, "readCapBytes"},
		{"write cap 0", func(s *builtin.Settings) { s.WriteCapBytes = 0 }, "writeCapBytes"},
		{"write cap over what one request carries", func(s *builtin.Settings) { s.WriteCapBytes = builtin.MaxWriteCapBytes + 1 }, "the content comes inside one MCP request"},
		{"MIME wildcard", func(s *builtin.Settings) { s.BinaryMIMEAllow = []string{"image/*"} }, "MIME type"},
		{"MIME not a type", func(s *builtin.Settings) { s.BinaryMIMEAllow = []string{"png"} }, "MIME type"},
		{"extension without dot", func(s *builtin.Settings) { s.ExecutableExtensions = []string{"exe"} }, "extension"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := builtin.Defaults()
			tc.edit(&s)
			err := s.Validate()
			if code(err) != core.EInvalid || !strings.Contains(core.ErrorMessage(err), tc.mentions) {
				t.Errorf("Validate() = %v, want %s mentioning %q", err, core.EInvalid, tc.mentions)
			}
		})
	}
}

// TestSettingsPersist: settings survive a restart; a stored value missing
// fields gets the defaults for them; settings are normalised.
func TestSettingsPersist(t *testing.T) {
	db := openDB(t)
	dir := t.TempDir()
	b, err := builtin.New(builtin.Options{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	s := b.Settings()
	s.Roots = []string{dir, dir + "/"}
	s.ShellTimeoutSeconds = 5
	s.BinaryMIMEAllow = []string{"Image/PNG"}
	s.ExecutableExtensions = []string{".EXE", ".exe"}
	ov, err := b.Update(s)
	if err != nil {
		t.Fatal(err)
	}
	want := s
	want.Roots = []string{dir}
	want.BinaryMIMEAllow = []string{"image/png"}
	want.ExecutableExtensions = []string{".exe"}
	if diff := cmp.Diff(want, ov.Settings); diff != "" {
		t.Errorf("normalised settings (-want +got):\n%s", diff)
	}
	again, err := builtin.New(builtin.Options{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, again.Settings()); diff != "" {
		t.Errorf("settings after a restart (-want +got):\n%s", diff)
	}
	raw, ok, err := db.Setting(builtin.SettingsKey)
	if err != nil || !ok || !strings.Contains(raw, `"shellTimeoutSeconds":5`) {
		t.Errorf("stored %q (%v, %v), want camelCase JSON", raw, ok, err)
	}

	// An older or hand-edited value without some fields.
	if err := db.SetSetting(builtin.SettingsKey, `{"roots":["`+dir+`"],"shellTimeoutSeconds":9}`); err != nil {
		t.Fatal(err)
	}
	partial, err := builtin.New(builtin.Options{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	got := partial.Settings()
	if got.ShellTimeoutSeconds != 9 || !cmp.Equal(got.Deny, builtin.Defaults().Deny) || got.OutputCapBytes != builtin.Defaults().OutputCapBytes {
		t.Errorf("partial settings %+v, want timeout 9 and the defaults for the rest", got)
	}

	// A write cap an older Airlock allowed, above what one request
	// carries, is lowered to the most that works, not refused.
	if err := db.SetSetting(builtin.SettingsKey, `{"roots":["`+dir+`"],"writeCapBytes":104857600}`); err != nil {
		t.Fatal(err)
	}
	old, err := builtin.New(builtin.Options{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	if ov := old.Get(); ov.Error != "" || ov.Settings.WriteCapBytes != builtin.MaxWriteCapBytes {
		t.Errorf("stored 100 MiB write cap: error %q, cap %d; want %d", ov.Error, ov.Settings.WriteCapBytes, builtin.MaxWriteCapBytes)
	}
}

// TestStoredListsGetNewDefaults: ask lists an older Airlock stored (with
// no version, or an older one) are given the entries added since, once;
// an entry the person removes afterwards stays removed.
func TestStoredListsGetNewDefaults(t *testing.T) {
	db := openDB(t)
	if err := db.SetSetting(builtin.SettingsKey, `{"ask":["sudo","my own rule"],"deny":["rm -rf"]}`); err != nil {
		t.Fatal(err)
	}
	b, err := builtin.New(builtin.Options{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	ask := b.Settings().Ask
	for _, want := range []string{"sudo", "my own rule", "git --config-env", "man {-P,--pager,-H,--html}"} {
		if !slices.Contains(ask, want) {
			t.Errorf("ask list %q lacks %q", ask, want)
		}
	}
	if got := b.Settings().Deny; len(got) < 2 || got[0] != "rm -rf" || !slices.Contains(got, "loginctl {poweroff,reboot,halt,kexec,suspend,hibernate}") {
		t.Errorf("deny list %q, want the stored one and the entries added since", got)
	}
	if v := b.Settings().ListsVersion; v != builtin.ListsVersion {
		t.Errorf("lists version %d, want %d", v, builtin.ListsVersion)
	}
	// The person removes a default entry; it stays removed after a restart.
	s := b.Settings()
	s.Ask = slices.DeleteFunc(slices.Clone(s.Ask), func(e string) bool { return e == "git --config-env" })
	s.ListsVersion = 0 // as a client that does not know the field sends it
	if _, err := b.Update(s); err != nil {
		t.Fatal(err)
	}
	again, err := builtin.New(builtin.Options{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(again.Settings().Ask, "git --config-env") {
		t.Error("an entry the person removed came back after a restart")
	}
	// A list stored at version 2 gets only version 3's entries.
	if err := db.SetSetting(builtin.SettingsKey, `{"ask":["sudo"],"listsVersion":2}`); err != nil {
		t.Fatal(err)
	}
	v2, err := builtin.New(builtin.Options{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	if ask := v2.Settings().Ask; slices.Contains(ask, "man {-P,--pager,-H,--html}") || !slices.Contains(ask, "gdb") {
		t.Errorf("version 2 lists upgraded to %q: want version 3's entries only", ask)
	}
}

// TestBrokenStoredSettings: invalid stored settings do not stop Airlock;
// the tools stay off (no stored folder applies) and the overview says why.
func TestBrokenStoredSettings(t *testing.T) {
	db := openDB(t)
	for _, raw := range []string{`{not json`, `{"roots":["relative"]}`, `{"shellTimeoutSeconds":-1}`} {
		if err := db.SetSetting(builtin.SettingsKey, raw); err != nil {
			t.Fatal(err)
		}
		b, err := builtin.New(builtin.Options{Store: db})
		if err != nil {
			t.Fatalf("New with stored %s: %v", raw, err)
		}
		ov := b.Get()
		if ov.Enabled || ov.Error == "" {
			t.Errorf("stored %s: enabled=%v error=%q; want off with an error", raw, ov.Enabled, ov.Error)
		}
	}
}

func TestAllowAndRemovePath(t *testing.T) {
	db := openDB(t)
	dir, cmdDir := t.TempDir(), t.TempDir()
	b, err := builtin.New(builtin.Options{Store: db, Roots: []string{cmdDir}})
	if err != nil {
		t.Fatal(err)
	}
	if !b.Enabled() {
		t.Error("a --allow-path folder does not turn the tools on")
	}
	ov, err := b.AllowPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []builtin.RootStatus{
		{Path: cmdDir, Source: builtin.SourceCommandLine, Available: true},
		{Path: dir, Source: builtin.SourceSettings, Available: true},
	}
	if diff := cmp.Diff(want, ov.Roots); diff != "" {
		t.Errorf("roots (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{dir}, ov.Settings.Roots); diff != "" {
		t.Errorf("stored roots (-want +got); the --allow-path folder must not be stored:\n%s", diff)
	}
	for _, tc := range []struct {
		name, dir, code string
	}{
		{"relative", "some/dir", core.EInvalid},
		{"missing", filepath.Join(dir, "missing"), core.ENotFound},
		{"a file", writeTemp(t), core.EInvalid},
		{"file system root", "/", core.EInvalid},
	} {
		if _, err := b.AllowPath(tc.dir); code(err) != tc.code {
			t.Errorf("AllowPath(%s %s) = %v, want %s", tc.name, tc.dir, err, tc.code)
		}
	}
	if _, err := b.RemovePath(cmdDir); code(err) != core.EInvalid || !strings.Contains(err.Error(), "--allow-path") {
		t.Errorf("RemovePath(command-line folder) = %v, want %s naming --allow-path", err, core.EInvalid)
	}
	if _, err := b.RemovePath(filepath.Join(dir, "other")); code(err) != core.ENotFound {
		t.Errorf("RemovePath(not allowed) = %v, want %s", err, core.ENotFound)
	}
	if _, err := b.RemovePath(dir); err != nil {
		t.Fatal(err)
	}
	if got := b.Settings().Roots; len(got) != 0 {
		t.Errorf("roots after RemovePath: %v", got)
	}

	// A missing folder given with --allow-path stops Airlock.
	if _, err := builtin.New(builtin.Options{Roots: []string{filepath.Join(dir, "typo")}}); code(err) != core.ENotFound {
		t.Errorf("New with a missing --allow-path folder: %v, want %s", err, core.ENotFound)
	}
}

func writeTemp(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "file")
	mustWrite(t, p, "x")
	return p
}

// TestReloadFromAnotherProcess: the CLI changes the stored settings while
// Airlock runs; Reload (which Watch calls) applies them to the next call
// and reports the change.
func TestReloadFromAnotherProcess(t *testing.T) {
	db := openDB(t)
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "a.txt"), "A")
	var mu sync.Mutex
	var changes []builtin.Overview
	running, err := builtin.New(builtin.Options{Store: db, OnChange: func(ov builtin.Overview) {
		mu.Lock()
		changes = append(changes, ov)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	cli, err := builtin.New(builtin.Options{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := running.Reload(); changed || err != nil {
		t.Errorf("Reload with nothing changed = %v, %v", changed, err)
	}
	if _, err := cli.AllowPath(dir); err != nil {
		t.Fatal(err)
	}
	if changed, err := running.Reload(); !changed || err != nil {
		t.Fatalf("Reload after the CLI allowed a folder = %v, %v; want true", changed, err)
	}
	res, err := running.ReadFile(context.Background(), builtin.ReadArgs{Path: "a.txt"})
	if err != nil || res.Content != "A" {
		t.Errorf("ReadFile after Reload = %q, %v", res.Content, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(changes) != 1 || !changes[0].Enabled {
		t.Errorf("OnChange calls %+v, want one with the tools on", changes)
	}

	// Settings another process broke are refused; the current ones stay.
	if err := db.SetSetting(builtin.SettingsKey, `{"roots":["relative"]}`); err != nil {
		t.Fatal(err)
	}
	if changed, err := running.Reload(); changed || err == nil {
		t.Errorf("Reload of broken settings = %v, %v; want an error", changed, err)
	}
	if !running.Enabled() {
		t.Error("broken stored settings turned the tools off; the last good settings should stay")
	}
}

// TestOverviewJSON: the settings page gets camelCase JSON.
func TestOverviewJSON(t *testing.T) {
	b, err := builtin.New(builtin.Options{Roots: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(b.Get())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"settings"`, `"roots"`, `"enabled":true`, `"defaults"`, `"envAllow"`, `"shellTimeoutSeconds"`, `"outputCapBytes"`, `"readCapBytes"`, `"writeCapBytes"`, `"binaryMimeAllow"`, `"executableExtensions"`, `"source":"command line"`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("overview JSON lacks %s: %s", key, data)
		}
	}
}

func TestClassifyCommandUsesCurrentSettings(t *testing.T) {
	b, err := builtin.New(builtin.Options{Roots: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := b.ClassifyCommand("docker", []string{"run", "alpine"}); err != nil || c.Outcome != core.Allow {
		t.Fatalf("docker run before the rule: %+v, %v", c, err)
	}
	s := b.Settings()
	s.Ask = append(s.Ask, "docker run")
	if _, err := b.Update(s); err != nil {
		t.Fatal(err)
	}
	if c, _ := b.ClassifyCommand("docker", []string{"run", "alpine"}); c.Outcome != core.Ask {
		t.Errorf("docker run after adding an ask rule: %s, want ask", c.Outcome)
	}
	if _, err := b.ClassifyCommand(" ", nil); code(err) != builtin.EInvalidArguments {
		t.Errorf("empty command: %v", err)
	}
}
