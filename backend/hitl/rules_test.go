package hitl_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/store"
)

func sp(s string) *string { return &s }

func openDB(t testing.TB, path string) *store.DB {
	t.Helper()
	db, err := store.Open(path)
	if err != nil {
		t.Fatalf("open db: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// withoutDefaults removes the default prompt and resource rules a new
// database starts with, for tests that count the rules they make
// (TestDefaultRules covers the defaults).
func withoutDefaults(t testing.TB, db *store.DB) *store.DB {
	t.Helper()
	if err := store.NewRules(db).ImportRules(nil, true); err != nil {
		t.Fatal(err)
	}
	return db
}

func newRules(t testing.TB, db *store.DB, opts hitl.RulesOptions) *hitl.Rules {
	t.Helper()
	r, err := hitl.NewRules(store.NewRules(db), opts)
	if err != nil {
		t.Fatalf("NewRules: %v", err)
	}
	return r
}

func mustCreate(t testing.TB, r *hitl.Rules, in hitl.RuleInput) hitl.Rule {
	t.Helper()
	rule, err := r.Create(in)
	if err != nil {
		t.Fatalf("Create(%+v): %v", in, err)
	}
	return rule
}

// TestSeedExampleTable is seed 002's "実用例" table, word for word.
func TestSeedExampleTable(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "airlock.db"))
	r := newRules(t, db, hitl.RulesOptions{})
	// | 100 | filesystem     | -               | read_*   | ON  | ファイル読み込み系は常に許可 |
	// | 100 | filesystem     | -               | delete_* | OFF | ファイル削除系は必ず承認を求める |
	// | 50  | shell          | execute_command | -        | OFF | シェルコマンド実行は常に承認が必要 |
	// | 10  | weather-server | -               | -        | ON  | 天気サーバーのツールはすべて許可 |
	// | 0   | -              | -               | -        | OFF | その他すべてのツールは承認が必要（グローバルデフォルト） |
	read := mustCreate(t, r, hitl.RuleInput{Priority: 100, ServerID: sp("filesystem"), ToolPattern: sp("read_*"), AutoApprove: true})
	del := mustCreate(t, r, hitl.RuleInput{Priority: 100, ServerID: sp("filesystem"), ToolPattern: sp("delete_*"), AutoApprove: false})
	shell := mustCreate(t, r, hitl.RuleInput{Priority: 50, ServerID: sp("shell"), ToolName: sp("execute_command"), AutoApprove: false})
	weather := mustCreate(t, r, hitl.RuleInput{Priority: 10, ServerID: sp("weather-server"), AutoApprove: true})
	global := mustCreate(t, r, hitl.RuleInput{Priority: 0, AutoApprove: false})

	type result struct {
		Auto bool
		Rule string
	}
	tests := []struct {
		server, tool string
		want         result
	}{
		{"filesystem", "read_file", result{true, read.ID}},
		{"filesystem", "read_multiple_files", result{true, read.ID}},
		{"filesystem", "READ_FILE", result{true, read.ID}}, // patterns are case-insensitive
		{"filesystem", "delete_file", result{false, del.ID}},
		{"filesystem", "write_file", result{false, global.ID}},
		{"shell", "execute_command", result{false, shell.ID}},
		{"shell", "other", result{false, global.ID}},
		{"weather-server", "get_forecast", result{true, weather.ID}},
		{"weather-server", "get_alerts", result{true, weather.ID}},
		{"weather-server", "read_file", result{true, weather.ID}},
		{"github", "create_issue", result{false, global.ID}},
	}
	for _, tt := range tests {
		t.Run(tt.server+"/"+tt.tool, func(t *testing.T) {
			d := r.Decide(hitl.Call{Server: tt.server, Tool: tt.tool}.Request())
			if diff := cmp.Diff(tt.want, result{(d.Outcome == core.Allow), d.RuleID}); diff != "" {
				t.Errorf("decision (-want +got):\n%s\nreason: %s", diff, d.Reason)
			}
		})
	}
	// Without the global rule, the safe default still asks.
	if err := r.Delete(global.ID); err != nil {
		t.Fatal(err)
	}
	if d := r.Decide(hitl.Call{Server: "github", Tool: "create_issue"}.Request()); (d.Outcome == core.Allow) || d.RuleID != "" || d.Reason != hitl.NoMatchReason {
		t.Errorf("no rule matching: %+v, want ask with the safe-default reason", d)
	}
}

func TestRulesCRUD(t *testing.T) {
	db := withoutDefaults(t, openDB(t, filepath.Join(t.TempDir(), "airlock.db")))
	var versions []int64
	var events []string
	r := newRules(t, db, hitl.RulesOptions{Events: core.EventSinkFunc(func(name string, _ any) { events = append(events, name) })})
	r.OnChange(func(v int64) { versions = append(versions, v) })
	v0 := r.Version()

	a := mustCreate(t, r, hitl.RuleInput{ServerID: sp(" fs "), ToolPattern: sp("read_*"), AutoApprove: true, Priority: 5,
		Conditions: []hitl.Condition{{Path: "$.path", Op: "inside", Value: "/tmp"}}})
	if *a.ServerID != "fs" || len(a.ID) != 16 {
		t.Errorf("created rule %+v: want trimmed server and a 16-character id", a)
	}
	upd, err := r.Update(a.ID, hitl.RuleInput{ServerID: sp("fs"), ToolName: sp("read_file"), Priority: 7})
	if err != nil {
		t.Fatal(err)
	}
	if !upd.CreatedAt.Equal(a.CreatedAt) || upd.AutoApprove || upd.ToolPattern != nil {
		t.Errorf("updated rule %+v: want the same CreatedAt, the new fields", upd)
	}
	// What the service holds is what the store holds.
	fresh := newRules(t, db, hitl.RulesOptions{})
	if diff := cmp.Diff(r.List(), fresh.List()); diff != "" {
		t.Errorf("rules after reopening (-in memory +from the db):\n%s", diff)
	}
	if err := r.Delete(a.ID); err != nil {
		t.Fatal(err)
	}
	if len(r.List()) != 0 {
		t.Errorf("rules after delete: %+v", r.List())
	}
	if diff := cmp.Diff([]int64{v0 + 1, v0 + 2, v0 + 3}, versions); diff != "" {
		t.Errorf("OnChange versions (-want +got):\n%s", diff)
	}
	if len(events) != 3 || events[0] != core.EventRulesChanged {
		t.Errorf("events = %v, want 3 × %s", events, core.EventRulesChanged)
	}

	// Errors change nothing.
	before := r.Version()
	errTests := []struct {
		name string
		err  error
		code string
	}{
		{"update unknown", second(r.Update("nope", hitl.RuleInput{})), core.ENotFound},
		{"delete unknown", r.Delete("nope"), core.ENotFound},
		{"invalid pattern", second(r.Create(hitl.RuleInput{ToolPattern: sp("a[b]")})), core.EInvalid},
		{"invalid regex", second(r.Create(hitl.RuleInput{Conditions: []hitl.Condition{{Path: "$.x", Op: "regex", Value: "(("}}})), core.EInvalid},
		{"expiry in the past", second(r.Create(hitl.RuleInput{ExpiresAt: ptrTime(time.Now().Add(-time.Minute))})), core.EInvalid},
	}
	for _, tt := range errTests {
		if got := core.ErrorCode(tt.err); got != tt.code {
			t.Errorf("%s: error %v has code %q, want %q", tt.name, tt.err, got, tt.code)
		}
	}
	if r.Version() != before || len(r.List()) != 0 {
		t.Errorf("failed changes changed the rules: version %d → %d, %d rules", before, r.Version(), len(r.List()))
	}
}

func second[T any](_ T, err error) error { return err }

func ptrTime(t time.Time) *time.Time { return &t }

func TestExportImport(t *testing.T) {
	db := withoutDefaults(t, openDB(t, filepath.Join(t.TempDir(), "airlock.db")))
	r := newRules(t, db, hitl.RulesOptions{})
	mustCreate(t, r, hitl.RuleInput{ServerID: sp("fs"), ToolPattern: sp("read_*"), AutoApprove: true, Priority: 100})
	mustCreate(t, r, hitl.RuleInput{Priority: 0})
	data, err := r.Export()
	if err != nil {
		t.Fatal(err)
	}

	other := newRules(t, openDB(t, filepath.Join(t.TempDir(), "other.db")), hitl.RulesOptions{})
	mustCreate(t, other, hitl.RuleInput{ServerID: sp("extra")})
	n, err := other.Import(data, true)
	if err != nil || n != 2 {
		t.Fatalf("Import(replace) = %d, %v", n, err)
	}
	if diff := cmp.Diff(r.List(), other.List()); diff != "" {
		t.Errorf("imported rules (-exported +imported):\n%s", diff)
	}
	// Merging: a file rule without an id is added, one with a known id replaces it.
	n, err = other.Import([]byte(`{"version":1,"rules":[{"serverId":"new","autoApprove":true}]}`), false)
	if err != nil || n != 1 || len(other.List()) != 3 {
		t.Fatalf("Import(merge) = %d, %v; %d rules", n, err, len(other.List()))
	}

	before := other.List()
	bad := []struct{ name, file string }{
		{"syntax error", `{"version":1,"rules":[`},
		{"wrong version", `{"version":2,"rules":[]}`},
		{"unknown field", `{"version":1,"rules":[{"toolpattern":"x"}]}`},
		{"non-integer priority", `{"version":1,"rules":[{"priority":2.5}]}`},
		{"one bad rule among good ones", `{"version":1,"rules":[{"serverId":"ok"},{"toolPattern":"bad?"}]}`},
		{"duplicate ids", `{"version":1,"rules":[{"id":"x"},{"id":"x"}]}`},
	}
	for _, tt := range bad {
		if _, err := other.Import([]byte(tt.file), true); core.ErrorCode(err) != core.EInvalid {
			t.Errorf("%s: Import error %v, want code %s", tt.name, err, core.EInvalid)
		}
	}
	if diff := cmp.Diff(before, other.List()); diff != "" {
		t.Errorf("failed imports changed the rules (-before +after):\n%s", diff)
	}
}

// TestCrossProcess: a second process (the CLI) changes the same database;
// the app's Watch notices and swaps the rules.
func TestCrossProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "airlock.db")
	app := newRules(t, openDB(t, path), hitl.RulesOptions{PollInterval: 10 * time.Millisecond})
	changed := make(chan int64, 10)
	app.OnChange(func(v int64) { changed <- v })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- app.Watch(ctx) }()

	cli := newRules(t, openDB(t, path), hitl.RulesOptions{})
	rule := mustCreate(t, cli, hitl.RuleInput{ServerID: sp("fs"), AutoApprove: true})
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("the app did not notice the rule the CLI added")
	}
	if d := app.Decide(hitl.Call{Server: "fs", Tool: "x"}.Request()); d.RuleID != rule.ID || !(d.Outcome == core.Allow) {
		t.Errorf("app decision after the CLI's change: %+v", d)
	}
	// Update of a rule the app has not seen yet reloads first.
	rule2 := mustCreate(t, cli, hitl.RuleInput{ServerID: sp("other")})
	if _, err := app.Update(rule2.ID, hitl.RuleInput{ServerID: sp("other"), Priority: 3}); err != nil {
		t.Errorf("app.Update of a rule the CLI just created: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Watch: %v", err)
	}
}

func TestRulesFile(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, filepath.Join(dir, "airlock.db"))
	file := filepath.Join(dir, hitl.RulesFileName)
	var mu sync.Mutex
	var fileErrs []error
	r := newRules(t, db, hitl.RulesOptions{FilePath: file, PollInterval: 20 * time.Millisecond, Debounce: 30 * time.Millisecond})
	changed := make(chan int64, 10)
	r.OnChange(func(v int64) { changed <- v })
	r.OnFileError(func(err error) { mu.Lock(); fileErrs = append(fileErrs, err); mu.Unlock() })
	mustCreate(t, r, hitl.RuleInput{ServerID: sp("fs"), Priority: 1})
	<-changed

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Watch(ctx)

	// Watch mirrors the rules into the file.
	waitFor(t, "the rules file to be written", func() bool {
		data, err := os.ReadFile(file)
		return err == nil && strings.Contains(string(data), `"serverId": "fs"`)
	})
	// Airlock's own writes do not count as edits.
	mustCreate(t, r, hitl.RuleInput{ServerID: sp("second")})
	<-changed
	waitFor(t, "the second rule in the file", func() bool {
		data, _ := os.ReadFile(file)
		return strings.Contains(string(data), `"second"`)
	})
	// Reading the file now (as the watcher does after the write's
	// events) must find Airlock's own content and change nothing.
	r.ApplyFile()
	select {
	case v := <-changed:
		t.Fatalf("Airlock's own write to the rules file was applied as an edit (version %d)", v)
	default:
	}

	// A person's edit is applied.
	if err := os.WriteFile(file, []byte(`{"version":1,"rules":[{"serverId":"edited","autoApprove":true,"priority":9}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("an edit of the rules file was not applied")
	}
	if d := r.Decide(hitl.Call{Server: "edited", Tool: "x"}.Request()); !(d.Outcome == core.Allow) || len(r.List()) != 1 {
		t.Errorf("after the edit: decision %+v, %d rules", d, len(r.List()))
	}

	// An invalid edit keeps the last good rules and reports the error.
	good := r.List()
	if err := os.WriteFile(file, []byte(`{"version":1,"rules":[{"toolPattern":"bad?"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// FileError is set before OnFileError is called: wait for both.
	waitFor(t, "the file error, reported through OnFileError", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return r.FileError() != nil && len(fileErrs) > 0 && fileErrs[len(fileErrs)-1] != nil
	})
	if diff := cmp.Diff(good, r.List()); diff != "" {
		t.Errorf("an invalid file changed the rules (-before +after):\n%s", diff)
	}
	// While it is invalid, a change made elsewhere (the UI here, the CLI
	// through GuardFile) is refused: writing the rules would overwrite the
	// person's edit.
	broken, _ := os.ReadFile(file)
	if _, err := r.Create(hitl.RuleInput{ServerID: sp("third")}); core.ErrorCode(err) != core.EInvalid || !strings.Contains(err.Error(), "would overwrite your edit") {
		t.Errorf("Create while the file is invalid: %v, want %s", err, core.EInvalid)
	}
	cli := newRules(t, db, hitl.RulesOptions{GuardFile: file})
	if _, err := cli.Create(hitl.RuleInput{ServerID: sp("third")}); core.ErrorCode(err) != core.EInvalid {
		t.Errorf("Create from another process while the file is invalid: %v, want %s", err, core.EInvalid)
	}
	if now, _ := os.ReadFile(file); string(now) != string(broken) {
		t.Errorf("the invalid file was rewritten:\n%s", now)
	}
	if diff := cmp.Diff(good, r.List()); diff != "" {
		t.Errorf("a refused change changed the rules (-before +after):\n%s", diff)
	}
	// Fixing it clears the error.
	if err := os.WriteFile(file, []byte(`{"version":1,"rules":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the file error to clear", func() bool { return r.FileError() == nil && len(r.List()) == 0 })
}

// TestRulesFileEditedWhileStopped: an edit made while Airlock was not
// running is applied at the next start; a stale file never overrides the
// database.
func TestRulesFileEditedWhileStopped(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "airlock.db")
	file := filepath.Join(dir, hitl.RulesFileName)
	db := withoutDefaults(t, openDB(t, path))
	start := func() (*hitl.Rules, context.CancelFunc) {
		r := newRules(t, db, hitl.RulesOptions{FilePath: file, Debounce: 10 * time.Millisecond})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { r.Watch(ctx); close(done) }()
		return r, func() { cancel(); <-done }
	}
	r, stop := start()
	mustCreate(t, r, hitl.RuleInput{ServerID: sp("a")})
	waitFor(t, "the file", func() bool { d, _ := os.ReadFile(file); return strings.Contains(string(d), `"a"`) })
	stop()

	// The CLI changes the database while the app is stopped: the file is stale.
	cli := newRules(t, db, hitl.RulesOptions{})
	mustCreate(t, cli, hitl.RuleInput{ServerID: sp("from-cli")})
	r, stop = start()
	waitFor(t, "the stale file to be rewritten", func() bool { d, _ := os.ReadFile(file); return strings.Contains(string(d), "from-cli") })
	if len(r.List()) != 2 {
		t.Errorf("a stale rules file overrode the database: %d rules", len(r.List()))
	}
	stop()

	// A person edits the file while the app is stopped.
	if err := os.WriteFile(file, []byte(`{"version":1,"rules":[{"serverId":"hand"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r, stop = start()
	defer stop()
	waitFor(t, "the edit to be applied at start", func() bool {
		l := r.List()
		return len(l) == 1 && *l[0].ServerID == "hand"
	})
}

// A rules file already there when Airlock first starts on a data
// directory (no file written yet, so no hash stored) is the person's: a
// broken one is kept and reported, never overwritten (found by a new-user
// test: the edit was lost without a word).
func TestBrokenRulesFileBeforeFirstStart(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, hitl.RulesFileName)
	db := openDB(t, filepath.Join(dir, "airlock.db"))
	broken := []byte("{broken")
	if err := os.WriteFile(file, broken, 0o600); err != nil {
		t.Fatal(err)
	}
	r := newRules(t, db, hitl.RulesOptions{FilePath: file, Debounce: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Watch(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "the broken file to be reported", func() bool { return r.FileError() != nil })
	if got, _ := os.ReadFile(file); string(got) != string(broken) {
		t.Errorf("the broken rules file was overwritten: %q", got)
	}
	if len(r.List()) == 0 {
		t.Error("the stored rules are gone; they should stay in force")
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRuleJSONShape(t *testing.T) {
	r := hitl.Rule{ID: "x", Conditions: []hitl.Condition{}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	want := []string{"agentId", "autoApprove", "conditions", "createdAt", "expiresAt", "id", "kind", "priority", "serverId", "sessionId", "toolName", "toolPattern", "updatedAt"}
	if diff := cmp.Diff(want, keys, cmpSorted); diff != "" {
		t.Errorf("Rule JSON keys (-want +got):\n%s", diff)
	}
}

var cmpSorted = cmp.Transformer("sort", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
})

func TestImportBareList(t *testing.T) {
	r := newRules(t, withoutDefaults(t, openDB(t, filepath.Join(t.TempDir(), store.FileName))), hitl.RulesOptions{})
	n, err := r.Import([]byte(`[{"serverId":"fs","toolPattern":"read_*","autoApprove":true,"priority":3}]`), false)
	if err != nil || n != 1 {
		t.Fatalf("import of a bare list: %d, %v", n, err)
	}
	if got := r.List(); len(got) != 1 || *got[0].ToolPattern != "read_*" {
		t.Fatalf("rules after import = %+v", got)
	}
}

// The Rules screen's import box shows `{ "rules": [ … ] }` as the file to
// paste; pasting exactly that was refused with `rules file must have
// "version": 1` (found by a new-user test). A file without "version" is
// taken as version 1, as a bare list is; another version is still refused.
func TestImportWithoutVersionAsTheImportBoxShows(t *testing.T) {
	r := newRules(t, withoutDefaults(t, openDB(t, filepath.Join(t.TempDir(), store.FileName))), hitl.RulesOptions{})
	n, err := r.Import([]byte(`{"rules": [{"serverId": "everything", "toolName": "echo", "autoApprove": true}]}`), false)
	if err != nil || n != 1 {
		t.Fatalf(`import of {"rules": [...]} (the import box's example) = %d, %v; want 1 rule imported`, n, err)
	}
}

// A rules file edited by hand that is not valid JSON says where: the
// servers file's error gives "line 2, column 27", the rules file's only
// "invalid character ',' looking for beginning of object key string" in a
// file of hundreds of lines (found by a new-user test).
func TestImportSyntaxErrorSaysWhere(t *testing.T) {
	r := newRules(t, withoutDefaults(t, openDB(t, filepath.Join(t.TempDir(), store.FileName))), hitl.RulesOptions{})
	file := "{\n  \"version\": 1,\n  \"rules\": [\n    {\n      \"serverId\": \"fs\",,\n      \"autoApprove\": true\n    }\n  ]\n}\n"
	_, err := r.Import([]byte(file), false)
	if core.ErrorCode(err) != core.EInvalid {
		t.Fatalf("Import of a file with a syntax error: %v, want %s", err, core.EInvalid)
	}
	if !strings.Contains(err.Error(), "line 5") {
		t.Errorf("syntax error = %q; want it to name line 5, where the stray comma is", err)
	}
}

// A new database starts with two visible rules that let prompts and
// resource reads run unasked (they were never gated before), while a tool
// call still asks when no rule matches.
func TestDefaultRules(t *testing.T) {
	r := newRules(t, openDB(t, filepath.Join(t.TempDir(), store.FileName)), hitl.RulesOptions{})
	tests := []struct {
		kind, name string
		want       string
	}{
		{core.KindPromptGet, "simple_prompt", core.Allow},
		{core.KindResourceRead, "test://static/resource/1", core.Allow},
		{core.KindToolCall, "echo", core.Ask},
	}
	for _, tt := range tests {
		d := r.Decide(&core.Request{Kind: tt.kind, Server: "everything", Name: tt.name})
		if d.Outcome != tt.want {
			t.Errorf("%s %s: %s (%s), want %s", tt.kind, tt.name, d.Outcome, d.Reason, tt.want)
		}
	}
	// A prompt rule never decides a tool of the same name, and the other way round.
	mustCreate(t, r, hitl.RuleInput{Kind: hitl.KindPrompt, ToolName: sp("echo"), Priority: 10})
	if d := r.Decide(&core.Request{Kind: core.KindToolCall, Server: "everything", Name: "echo"}); d.RuleID != "" {
		t.Errorf("a prompt rule decided a tool call: %+v", d)
	}
	if d := r.Decide(&core.Request{Kind: core.KindPromptGet, Server: "everything", Name: "echo"}); d.Outcome != core.Ask || d.RuleID == "" {
		t.Errorf("the prompt rule did not decide its prompt: %+v", d)
	}
	// Resource patterns match URIs.
	mustCreate(t, r, hitl.RuleInput{Kind: hitl.KindResource, ToolPattern: sp("file:///etc/*"), Priority: 10})
	if d := r.Decide(&core.Request{Kind: core.KindResourceRead, Server: "fs", Name: "file:///etc/passwd"}); d.Outcome != core.Ask {
		t.Errorf("a resource under /etc was not asked: %+v", d)
	}
	if _, err := r.Create(hitl.RuleInput{Kind: "telepathy"}); core.ErrorCode(err) != core.EInvalid {
		t.Errorf("unknown kind: %v, want %s", err, core.EInvalid)
	}
}

// A rule written with the name agents see is understood; one naming an
// unknown server is accepted with a warning the form shows.
func TestLintAndExposedNames(t *testing.T) {
	r, err := hitl.NewRules(store.NewRules(withoutDefaults(t, openDB(t, filepath.Join(t.TempDir(), store.FileName)))),
		hitl.RulesOptions{KnownServers: func() []string { return []string{"everything", "fs"} }})
	if err != nil {
		t.Fatal(err)
	}
	rule := mustCreate(t, r, hitl.RuleInput{ToolName: sp("everything__echo"), AutoApprove: true})
	if rule.ServerID == nil || *rule.ServerID != "everything" || *rule.ToolName != "echo" {
		t.Fatalf("rule = %+v, want server everything and tool echo", rule)
	}
	if d := r.Decide(hitl.Call{Server: "everything", Tool: "echo"}.Request()); d.RuleID != rule.ID {
		t.Errorf("the rule written with the exposed name does not decide everything__echo: %+v", d)
	}
	// A tool of another server that happens to contain "__" is left alone.
	other := mustCreate(t, r, hitl.RuleInput{ServerID: sp("fs"), ToolName: sp("everything__echo")})
	if *other.ServerID != "fs" || *other.ToolName != "everything__echo" {
		t.Errorf("a name with __ on another server was rewritten: %+v", other)
	}
	tests := []struct {
		in   hitl.RuleInput
		want string
	}{
		{hitl.RuleInput{ServerID: sp("nope")}, `no server named "nope" is configured (known: everything, fs)`},
		{hitl.RuleInput{ToolPattern: sp("everything__read_*")}, `is the name agents see: saved as server everything, pattern read_*`},
		{hitl.RuleInput{ToolName: sp("x__y")}, `looks like a name agents see`},
		{hitl.RuleInput{ServerID: sp("fs"), ToolName: sp("everything__echo")}, `"everything__echo" looks like the name agents see for tool "echo" of server "everything"; this rule is for server "fs"`},
		{hitl.RuleInput{AutoApprove: true}, `this global rule auto-approves every tool request`},
		// A path compared as text lets ".." out (found by a red-team review).
		{hitl.RuleInput{ServerID: sp("fs"), AutoApprove: true, Conditions: []hitl.Condition{{Path: "$.path", Op: hitl.OpPrefix, Value: "/home/me/project/"}}},
			`condition $.path prefix "/home/me/project/" compares text, not folders (links are not followed, and a path with ".." in it asks); for a folder use $.path inside /home/me/project`},
		{hitl.RuleInput{ServerID: sp("fs"), AutoApprove: true, Conditions: []hitl.Condition{{Path: "$.path", Op: hitl.OpGlob, Value: "/srv/**"}}},
			`for a folder use $.path inside /srv`},
	}
	for _, tt := range tests {
		_, warnings, err := r.Lint(tt.in)
		if err != nil || !slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, tt.want) }) {
			t.Errorf("Lint(%+v) = %q, %v; want a warning containing %q", tt.in, warnings, err, tt.want)
		}
	}
	// Not on a rule that asks, nor on a value that is no path.
	for _, in := range []hitl.RuleInput{
		{ServerID: sp("fs"), Conditions: []hitl.Condition{{Path: "$.path", Op: hitl.OpPrefix, Value: "/home/me/project/"}}},
		{ServerID: sp("fs"), AutoApprove: true, Conditions: []hitl.Condition{{Path: "$.message", Op: hitl.OpPrefix, Value: "hello"}}},
	} {
		if _, warnings, _ := r.Lint(in); slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, "compares text") }) {
			t.Errorf("Lint(%+v) = %q; want no warning about text comparison", in, warnings)
		}
	}
	if _, _, err := r.Lint(hitl.RuleInput{ToolPattern: sp("a?")}); core.ErrorCode(err) != core.EInvalid {
		t.Errorf("Lint of an invalid rule: %v, want %s", err, core.EInvalid)
	}
}

// An exact tool name with a "*" (get-*, read_*) never matches a tool: tool
// names have no "*". A user used to wildcards (Claude Code's mcp__srv__*)
// writes it in the exact-name field, and the rule was saved without a word
// and never fired (found by a new-user test). Lint must say to use the
// pattern field.
func TestLintWarnsOfWildcardInExactToolName(t *testing.T) {
	r, err := hitl.NewRules(store.NewRules(withoutDefaults(t, openDB(t, filepath.Join(t.TempDir(), store.FileName)))),
		hitl.RulesOptions{KnownServers: func() []string { return []string{"everything"} }})
	if err != nil {
		t.Fatal(err)
	}
	_, warnings, err := r.Lint(hitl.RuleInput{ServerID: sp("everything"), ToolName: sp("get-*"), AutoApprove: true})
	if err != nil {
		t.Fatalf("Lint: %v", err)
	}
	if !slices.ContainsFunc(warnings, func(w string) bool {
		return strings.Contains(w, "get-*") && strings.Contains(strings.ToLower(w), "pattern")
	}) {
		t.Errorf("Lint(server everything, tool name get-*) warnings = %q; want one naming \"get-*\" and pointing at the pattern field", warnings)
	}
}

// A change the rules file cannot take is refused, in the running Airlock
// (FilePath) and in the CLI (GuardFile): the file is applied at the next
// start and after an edit, so a rule only in the database was lost then
// without a word (found by a bad-input test: "rules add" printed an id and
// exited 0 with a read-only data directory).
func TestChangeRefusedWhenTheRulesFileCannotBeWritten(t *testing.T) {
	for _, mode := range []string{"FilePath", "GuardFile"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, hitl.RulesFileName)
			db := openDB(t, filepath.Join(dir, "airlock.db"))
			opts := hitl.RulesOptions{FilePath: file}
			if mode == "GuardFile" {
				opts = hitl.RulesOptions{GuardFile: file}
			}
			r := newRules(t, db, opts)
			kept := mustCreate(t, r, hitl.RuleInput{ServerID: sp("everything"), ToolName: sp("echo"), AutoApprove: true})
			before := len(r.List())
			// Something that cannot be replaced by a file stands where the
			// rules file goes (as root, permission bits would not stop the write).
			os.Remove(file)
			if err := os.Mkdir(file, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(file, "x"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := r.Create(hitl.RuleInput{ServerID: sp("everything"), ToolName: sp("get-sum"), AutoApprove: true})
			if core.ErrorCode(err) != core.EUnavailable || !strings.Contains(err.Error(), "the rules were not changed") {
				t.Fatalf("Create = %v, want unavailable: the rules were not changed", err)
			}
			if err := r.Delete(kept.ID); core.ErrorCode(err) != core.EUnavailable {
				t.Fatalf("Delete = %v, want unavailable", err)
			}
			if _, ok := r.Engine().Rule(kept.ID); !ok || len(r.List()) != before {
				t.Errorf("after the refused changes: %d rules (want %d), %s kept: %v", len(r.List()), before, kept.ID, ok)
			}
			if v, _ := store.NewRules(db).ListRules(); len(v) != before {
				t.Errorf("the database holds %d rules, want %d", len(v), before)
			}
		})
	}
}

// A rules file naming a tool as agents see it (server__tool) is understood
// as the CLI and the UI understand it; kept whole, the rule never matched
// and nothing said so (found by a bad-input test).
func TestRulesFileTakesTheNameAgentsSee(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, hitl.RulesFileName)
	db := withoutDefaults(t, openDB(t, filepath.Join(dir, "airlock.db")))
	if err := os.WriteFile(file, []byte(`{"version":1,"rules":[{"toolName":"everything__echo","autoApprove":true},{"toolPattern":"fs__read_*","autoApprove":true}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := newRules(t, db, hitl.RulesOptions{FilePath: file, Debounce: 10 * time.Millisecond,
		KnownServers: func() []string { return []string{"everything", "fs"} }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Watch(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "the file to be applied", func() bool { return len(r.List()) == 2 })
	echo := core.Request{Kind: core.KindToolCall, Server: "everything", Name: "echo"}
	if d := r.Engine().Decide(&echo); d.Outcome != core.Allow {
		t.Errorf("everything/echo = %s (%s), want allow by the file's rule", d.Outcome, d.Reason)
	}
	read := core.Request{Kind: core.KindToolCall, Server: "fs", Name: "read_file"}
	if d := r.Engine().Decide(&read); d.Outcome != core.Allow {
		t.Errorf("fs/read_file = %s (%s), want allow by the file's pattern rule", d.Outcome, d.Reason)
	}
}

// Putting Airlock's own version of the rules file back (an undo, a git
// checkout) after a broken edit clears the error: it stayed reported, and
// the Rules screen kept saying the file was not applied (found by a
// regression test).
func TestRestoredRulesFileClearsItsError(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, hitl.RulesFileName)
	db := openDB(t, filepath.Join(dir, "airlock.db"))
	r := newRules(t, db, hitl.RulesOptions{FilePath: file, Debounce: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Watch(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	mustCreate(t, r, hitl.RuleInput{ServerID: sp("everything"), ToolName: sp("echo"), AutoApprove: true})
	var good []byte
	waitFor(t, "the file to be written", func() bool {
		good, _ = os.ReadFile(file)
		return strings.Contains(string(good), `"echo"`)
	})
	if err := os.WriteFile(file, []byte("{broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the broken edit to be reported", func() bool { return r.FileError() != nil })
	if err := os.WriteFile(file, good, 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the error to clear once the file is Airlock's own again", func() bool { return r.FileError() == nil })
}

// The rules file keeps what people write: a regex with & or < is not
// rewritten as \u0026 or \u003c when Airlock mirrors the rules into it.
func TestRulesFileIsWrittenAsTyped(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, hitl.RulesFileName)
	r := newRules(t, openDB(t, filepath.Join(dir, "airlock.db")), hitl.RulesOptions{FilePath: file})
	mustCreate(t, r, hitl.RuleInput{ServerID: sp("shell"), ToolName: sp("run"),
		Conditions: []hitl.Condition{{Path: "$.command", Op: "regex", Value: `^make( -j[0-9]+)? && echo <done>$`}}})
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"^make( -j[0-9]+)? && echo <done>$"`) {
		t.Errorf("rules file holds the regex escaped:\n%s", data)
	}
}
