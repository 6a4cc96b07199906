package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// recorder is an EventSink and a subscriber that remembers what it got.
type recorder struct {
	mu     sync.Mutex
	events []State
	lists  [][]core.ServerConfig
}

func (r *recorder) Emit(name string, payload any) {
	if name != core.EventServersChanged {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, payload.(State))
}

func (r *recorder) subscriber(list []core.ServerConfig) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lists = append(r.lists, list)
}

func (r *recorder) counts() (events, lists int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events), len(r.lists)
}

func (r *recorder) lastEvent() State {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.events) == 0 {
		return State{}
	}
	return r.events[len(r.events)-1]
}

// mustNew opens a store on path with a recorder subscribed.
func mustNew(t *testing.T, path string) (*Store, *recorder) {
	t.Helper()
	rec := &recorder{}
	s, err := New(path, rec)
	if err != nil {
		t.Fatalf("New(%s): %v", path, err)
	}
	s.Subscribe(rec.subscriber)
	return s, rec
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// jsonValue decodes data for semantic comparison.
func jsonValue(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	return v
}

func stdio(id, cmd string, args ...string) core.ServerConfig {
	return core.ServerConfig{ID: id, Command: cmd, Args: args}
}

func TestValidate(t *testing.T) {
	long := strings.Repeat("a", 48)
	tests := []struct {
		name string
		cfg  core.ServerConfig
		ok   bool
	}{
		{"stdio", stdio("fs", "npx", "-y", "x"), true},
		{"http", core.ServerConfig{ID: "web", URL: "https://example.com/mcp"}, true},
		{"sse", core.ServerConfig{ID: "web", URL: "http://127.0.0.1:3000/sse", Type: "sse"}, true},
		{"streamable-http", core.ServerConfig{ID: "web", URL: "http://h/mcp", Type: "streamable-http"}, true},
		{"explicit stdio", core.ServerConfig{ID: "a", Command: "x", Type: "stdio"}, true},
		{"sandboxed command", core.ServerConfig{ID: "a", Command: "x", Sandbox: true}, true},
		{"sandboxed url", core.ServerConfig{ID: "web", URL: "https://example.com/mcp", Sandbox: true}, false},
		{"id with dots and dashes", stdio("my.server-1_x", "x"), true},
		{"id 48 chars", stdio(long, "x"), true},
		{"id 49 chars", stdio(long+"a", "x"), false},
		{"empty id", stdio("", "x"), false},
		{"id starts with dash", stdio("-a", "x"), false},
		{"id with space", stdio("a b", "x"), false},
		{"id with slash", stdio("a/b", "x"), false},
		{"id with namespace separator", stdio("a__b", "x"), false},
		{"neither command nor url", core.ServerConfig{ID: "a"}, false},
		{"both command and url", core.ServerConfig{ID: "a", Command: "x", URL: "http://h"}, false},
		{"ftp url", core.ServerConfig{ID: "a", URL: "ftp://h/x"}, false},
		{"url without host", core.ServerConfig{ID: "a", URL: "http://"}, false},
		{"relative url", core.ServerConfig{ID: "a", URL: "/mcp"}, false},
		{"unknown type", core.ServerConfig{ID: "a", Command: "x", Type: "grpc"}, false},
		{"command with http type", core.ServerConfig{ID: "a", Command: "x", Type: "http"}, false},
		{"url with stdio type", core.ServerConfig{ID: "a", URL: "http://h", Type: "stdio"}, false},
		{"env name with =", core.ServerConfig{ID: "a", Command: "x", Env: map[string]string{"A=B": "c"}}, false},
		{"header on stdio", core.ServerConfig{ID: "a", Command: "x", Headers: map[string]string{"X": "y"}}, false},
		{"extra clashing with known field", core.ServerConfig{ID: "a", Command: "x", Extra: map[string]json.RawMessage{"url": json.RawMessage(`"u"`)}}, false},
		{"extra not JSON", core.ServerConfig{ID: "a", Command: "x", Extra: map[string]json.RawMessage{"k": json.RawMessage(`{`)}}, false},
		{"timeouts", core.ServerConfig{ID: "a", Command: "x", StartTimeout: 1, CallTimeout: MaxTimeout}, true},
		{"call timeout over a day", core.ServerConfig{ID: "a", Command: "x", CallTimeout: MaxTimeout + 1}, false},
		{"negative start timeout", core.ServerConfig{ID: "a", Command: "x", StartTimeout: -1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.cfg)
			if tt.ok && err != nil {
				t.Fatalf("Validate: unexpected error %v", err)
			}
			if !tt.ok && core.ErrorCode(err) != core.EInvalid {
				t.Fatalf("Validate: got error %v, want code %s", err, core.EInvalid)
			}
		})
	}
}

// A Claude Desktop config with fields Airlock does not know, nested values
// included, must come out of an import followed by an export unchanged.
const claudeDesktop = `{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
      "env": {"DEBUG": "1"},
      "autoApprove": ["read_file"],
      "timeout": 60,
      "cwd": "/home/me",
      "sandbox": true,
      "x-unknown": {"nested": [1, 2.5, null, true, {"deep": "yes"}]}
    },
    "remote": {
      "url": "https://example.com/mcp",
      "type": "streamable-http",
      "headers": {"Authorization": "Bearer x"},
      "disabled": true,
      "alwaysAllow": []
    },
    "legacy": {"url": "http://127.0.0.1:8080/sse", "type": "sse"}
  }
}`

func TestImportExportRoundTrip(t *testing.T) {
	s, _ := mustNew(t, filepath.Join(t.TempDir(), FileName))
	res, err := s.Import([]byte(claudeDesktop))
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	wantRes := ImportResult{Added: []string{"filesystem", "legacy", "remote"}, Skipped: []Skipped{}}
	if diff := cmp.Diff(wantRes, res); diff != "" {
		t.Errorf("Import result (-want +got):\n%s", diff)
	}
	got, err := s.Export()
	if err != nil {
		t.Fatalf("Export: %v", err)
	}
	want := jsonValue(t, []byte(claudeDesktop)).(map[string]any)
	delete(want, "globalShortcut") // an export holds servers only
	if diff := cmp.Diff(want, jsonValue(t, got)); diff != "" {
		t.Errorf("export differs from the imported file (-imported +exported):\n%s", diff)
	}

	// The store file itself holds the same servers, and a fresh store reads
	// back exactly what was written.
	s2, _ := mustNew(t, s.State().Path)
	if diff := cmp.Diff(s.List(), s2.List()); diff != "" {
		t.Errorf("reloaded servers (-written +read):\n%s", diff)
	}
	fs, err := s2.Get("filesystem")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"autoApprove", "cwd", "timeout", "x-unknown"}, sortedKeys(fs.Extra)); diff != "" {
		t.Errorf("Extra keys (-want +got):\n%s", diff)
	}
}

func TestUnknownTopLevelKeysSurviveWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	writeFile(t, path, `{"$schema": "https://example.com/s.json", "mcpServers": {"a": {"command": "x"}}, "zz": {"keep": [1, {"me": true}]}}`)
	s, _ := mustNew(t, path)
	if err := s.Add(stdio("b", "y")); err != nil {
		t.Fatalf("Add: %v", err)
	}
	if err := s.Remove("a"); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := jsonValue(t, []byte(`{"$schema": "https://example.com/s.json", "mcpServers": {"b": {"command": "y"}}, "zz": {"keep": [1, {"me": true}]}}`))
	if diff := cmp.Diff(want, jsonValue(t, data)); diff != "" {
		t.Errorf("file after writes (-want +got):\n%s", diff)
	}
}

func TestWrittenFileFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", FileName) // the directory is created too
	s, _ := mustNew(t, path)
	cfg := core.ServerConfig{
		ID: "fs", Command: "npx", Args: []string{"-y", "pkg"}, Env: map[string]string{"B": "2", "A": "1"},
		Extra: map[string]json.RawMessage{"zeta": json.RawMessage(`1`), "alpha": json.RawMessage(`{"b":1,"a":2}`)},
	}
	if err := s.Add(cfg); err != nil {
		t.Fatalf("Add: %v", err)
	}
	if err := s.Add(core.ServerConfig{ID: "api", URL: "https://h/mcp", Type: "http", Disabled: true, StartTimeout: 90, CallTimeout: 1800}); err != nil {
		t.Fatalf("Add: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Known fields in a fixed order, then extras sorted; servers sorted;
	// extra values kept as written (only re-indented).
	want := `{
  "mcpServers": {
    "api": {
      "type": "http",
      "url": "https://h/mcp",
      "disabled": true,
      "startTimeout": 90,
      "callTimeout": 1800
    },
    "fs": {
      "command": "npx",
      "args": [
        "-y",
        "pkg"
      ],
      "env": {
        "A": "1",
        "B": "2"
      },
      "alpha": {
        "b": 1,
        "a": 2
      },
      "zeta": 1
    }
  }
}
`
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("servers.json (-want +got):\n%s", diff)
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("file mode = %v, want 0600", fi.Mode().Perm())
		}
	}
	// No temp files are left behind.
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("data dir holds %d entries, want only %s", len(entries), FileName)
	}
}

func TestCRUD(t *testing.T) {
	s, rec := mustNew(t, filepath.Join(t.TempDir(), FileName))
	if st := s.State(); st.Error != "" || st.LoadedAt.IsZero() {
		t.Fatalf("State of a missing file = %+v, want no error and a load time", st)
	}
	if _, err := os.Stat(s.State().Path); !os.IsNotExist(err) {
		t.Fatalf("the file exists before the first write: %v", err)
	}
	steps := []struct {
		name string
		do   func() error
		code string
	}{
		{"add", func() error { return s.Add(stdio("b", "x")) }, ""},
		{"add second", func() error { return s.Add(core.ServerConfig{ID: "a", URL: "http://h"}) }, ""},
		{"add duplicate", func() error { return s.Add(stdio("a", "y")) }, core.EConflict},
		{"add invalid", func() error { return s.Add(stdio("a__b", "y")) }, core.EInvalid},
		{"update", func() error { return s.Update(stdio("b", "z", "1")) }, ""},
		{"update missing", func() error { return s.Update(stdio("nope", "z")) }, core.ENotFound},
		{"update invalid", func() error { return s.Update(core.ServerConfig{ID: "b"}) }, core.EInvalid},
		{"remove missing", func() error { return s.Remove("nope") }, core.ENotFound},
	}
	for _, st := range steps {
		if got := core.ErrorCode(st.do()); got != st.code {
			t.Errorf("%s: error code %q, want %q", st.name, got, st.code)
		}
	}
	want := []core.ServerConfig{{ID: "a", URL: "http://h"}, stdio("b", "z", "1")}
	if diff := cmp.Diff(want, s.List()); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if _, err := s.Get("nope"); core.ErrorCode(err) != core.ENotFound {
		t.Errorf("Get(nope) = %v, want not_found", err)
	}
	if err := s.Remove("a"); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	// Four successful changes, each told to subscribers and the sink.
	events, lists := rec.counts()
	if events != 4 || lists != 4 {
		t.Errorf("got %d events and %d subscriber calls, want 4 each", events, lists)
	}
	if diff := cmp.Diff([]core.ServerConfig{stdio("b", "z", "1")}, rec.lists[3]); diff != "" {
		t.Errorf("last subscriber call (-want +got):\n%s", diff)
	}

	// Extra values are kept compact, as they read back from the file.
	if err := s.Update(core.ServerConfig{ID: "b", Command: "z", Extra: map[string]json.RawMessage{"k": json.RawMessage("{ \"a\" : [1, 2] }")}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get("b"); string(got.Extra["k"]) != `{"a":[1,2]}` {
		t.Errorf("Extra[k] = %s, want it compacted", got.Extra["k"])
	}
	if err := s.Update(stdio("b", "z", "1")); err != nil {
		t.Fatal(err)
	}

	// Changing what List or Get returned does not change the store.
	got, _ := s.Get("b")
	got.Args[0] = "changed"
	if again, _ := s.Get("b"); again.Args[0] != "1" {
		t.Errorf("the store shares its slices with callers")
	}
}

func TestBrokenFileAtStartup(t *testing.T) {
	tests := []struct {
		name, content, wantErr string
	}{
		{"syntax error", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}", "line 3, column 26"},
		{"duplicate id", "{\"mcpServers\": {\n\"a\": {\"command\": \"x\"},\n\"a\": {\"command\": \"y\"}}}", `server "a": the id appears more than once`},
		{"duplicate field", `{"mcpServers": {"a": {"command": "x", "command": "y"}}}`, `duplicate key "command" at line 1, column 39`},
		{"duplicate top-level key", `{"mcpServers": {}, "mcpServers": {}}`, `duplicate key "mcpServers"`},
		{"invalid entry", `{"mcpServers": {"a": {"args": ["x"]}}}`, "neither a command nor a url"},
		{"wrong field type", `{"mcpServers": {"a": {"command": ["x"]}}}`, `field "command" must be a string`},
		{"not an object", `[1]`, "must hold a JSON object"},
		{"trailing comma at the end", `{"mcpServers": {},}`, "line 1, column 19"},
		{"truncated", "{\"mcpServers\": {\n", "line 2, column 1: unexpected end"},
		{"servers not an object", `{"mcpServers": []}`, "must be an object"},
		{"empty file", "  \n", "the file is empty"},
		// Found by a bad-input test: a typo dropped the arguments without a word.
		{"misspelt field", `{"mcpServers": {"a": {"command": "x", "arg": ["y"]}}}`, `server "a": unknown field "arg": did you mean "args"?`},
		{"field in another case", `{"mcpServers": {"a": {"command": "x", "Env": {}}}}`, `unknown field "Env": did you mean "env"?`},
		{"swapped letters", `{"mcpServers": {"a": {"command": "x", "evn": {}}}}`, `did you mean "env"?`},
		{"no timeout", `{"mcpServers": {"a": {"command": "x", "callTimeout": 0}}}`, `field "callTimeout" must be a whole number of seconds from 1 to 86400; leave it out for Airlock's default`},
		{"timeout in milliseconds", `{"mcpServers": {"a": {"command": "x", "callTimeout": 600000}}}`, `server "a" has callTimeout 600000; it must be a whole number of seconds from 1 to 86400`},
		{"timeout as a duration", `{"mcpServers": {"a": {"command": "x", "startTimeout": "2m"}}}`, `field "startTimeout" must be a whole number of seconds`},
		{"timeout with a fraction", `{"mcpServers": {"a": {"command": "x", "startTimeout": 1.5}}}`, `field "startTimeout" must be a whole number of seconds`},
	}
	// Fields of other tools near a known name stay, as before (found by a
	// regression test: a servers.json with "comment" beside "command" no
	// longer loaded at all).
	for _, content := range []string{
		`{"mcpServers": {"a": {"command": "x", "comment": "the reference server"}}}`,
		`{"mcpServers": {"a": {"command": "x", "args": ["y"], "argv": ["z"]}}}`,
		`{"mcpServers": {"a": {"url": "http://h/mcp", "uri": "http://h/mcp", "prefix": "a"}}}`,
	} {
		path := filepath.Join(t.TempDir(), FileName)
		writeFile(t, path, content)
		s, _ := mustNew(t, path)
		if st := s.State(); st.Error != "" || len(s.List()) != 1 {
			t.Errorf("%s: error %q, %d servers; want it loaded", content, st.Error, len(s.List()))
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			writeFile(t, path, tt.content)
			s, _ := mustNew(t, path)
			if st := s.State(); !strings.Contains(st.Error, tt.wantErr) {
				t.Errorf("State().Error = %q, want it to contain %q", st.Error, tt.wantErr)
			}
			if n := len(s.List()); n != 0 {
				t.Errorf("List has %d servers, want none", n)
			}
			// A change would overwrite what the user is editing: refused.
			if err := s.Add(stdio("b", "x")); core.ErrorCode(err) != core.EInvalid {
				t.Errorf("Add on a broken file: %v, want code invalid", err)
			}
			if data, _ := os.ReadFile(path); string(data) != tt.content {
				t.Errorf("the broken file was changed to %q", data)
			}
		})
	}
}

func TestChangeAdoptsUnappliedExternalEdit(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s, _ := mustNew(t, path)
	if err := s.Add(stdio("a", "x")); err != nil {
		t.Fatal(err)
	}
	// Edited behind the store's back, with no watcher running.
	writeFile(t, path, `{"mcpServers": {"a": {"command": "x"}, "ext": {"command": "e"}}}`)
	if err := s.Add(stdio("b", "y")); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range s.List() {
		ids = append(ids, c.ID)
	}
	if diff := cmp.Diff([]string{"a", "b", "ext"}, ids); diff != "" {
		t.Errorf("ids after the change (-want +got):\n%s", diff)
	}
}

func TestImport(t *testing.T) {
	tests := []struct {
		name     string
		existing []core.ServerConfig
		input    string
		want     ImportResult
		wantCode string
		wantMsg  string
	}{
		{
			name:  "cursor mcp.json",
			input: `{"mcpServers": {"gh": {"url": "https://api.example.com/mcp", "headers": {"A": "b"}}}}`,
			want:  ImportResult{Added: []string{"gh"}, Skipped: []Skipped{}},
		},
		{
			name:  "vs code servers",
			input: `{"inputs": [{"id": "k"}], "servers": {"fs": {"type": "stdio", "command": "npx", "envFile": "${workspaceFolder}/.env"}}}`,
			want:  ImportResult{Added: []string{"fs"}, Skipped: []Skipped{}},
		},
		{
			name: "claude code with other data",
			input: `{"numStartups": 3, "projects": {"/p": {"mcpServers": {"proj": {"command": "p"}}, "x": 1, "x": 2}},
			        "mcpServers": {"top": {"type": "stdio", "command": "t", "args": [], "env": {}}}}`,
			want: ImportResult{Added: []string{"top"}, Skipped: []Skipped{}},
		},
		{
			name:     "existing ids, duplicates and invalid entries skipped",
			existing: []core.ServerConfig{stdio("have", "x")},
			input: `{"mcpServers": {
				"have": {"command": "y"},
				"twice": {"command": "1"}, "twice": {"command": "2"},
				"bad__id": {"command": "z"},
				"nothing": {},
				"ok": {"command": "ok"},
				"dupfield": {"command": "a", "command": "b"}
			}}`,
			want: ImportResult{Added: []string{"ok"}, Skipped: []Skipped{
				{ID: "bad__id", Reason: `server id "bad__id" contains "__", the namespace separator`},
				{ID: "dupfield", Reason: `duplicate key "command" at line 7, column 34`},
				{ID: "have", Reason: "a server with this id already exists"},
				{ID: "nothing", Reason: `server "nothing" has neither a command nor a url; give exactly one`},
				{ID: "twice", Reason: "the id appears more than once in the file"},
			}},
		},
		{
			name:  "the same id under mcpServers and servers",
			input: `{"mcpServers": {"a": {"command": "x"}}, "servers": {"a": {"command": "y"}}}`,
			want:  ImportResult{Added: []string{"a"}, Skipped: []Skipped{{ID: "a", Reason: `the id appears under both "mcpServers" and "servers"`}}},
		},
		{
			name:     "invalid JSON names line and column",
			input:    "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n    \"b\": {}\n  }\n}",
			wantCode: core.EInvalid,
			wantMsg:  "line 4, column 5",
		},
		{
			name:     "truncated JSON points past the end",
			input:    "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n  }\n",
			wantCode: core.EInvalid,
			wantMsg:  "line 5, column 1",
		},
		{
			name:     "no servers object",
			input:    `{"foo": {}}`,
			wantCode: core.EInvalid,
			wantMsg:  "no \"mcpServers\" or \"servers\" object",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := mustNew(t, filepath.Join(t.TempDir(), FileName))
			for _, c := range tt.existing {
				if err := s.Add(c); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.Import([]byte(tt.input))
			if tt.wantCode != "" {
				if core.ErrorCode(err) != tt.wantCode || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("Import error = %v, want code %s containing %q", err, tt.wantCode, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Import: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ImportResult (-want +got):\n%s", diff)
			}
			for _, id := range tt.want.Added {
				if _, err := s.Get(id); err != nil {
					t.Errorf("imported server %s: %v", id, err)
				}
			}
		})
	}
}

// A ${…} placeholder the writing client would fill in is imported as it
// is, with a warning naming it (found by a new-user test: a VS Code entry
// failed on a folder literally named ${workspaceFolder}, unexplained).
func TestImportWarnsOfPlaceholders(t *testing.T) {
	s, _ := mustNew(t, filepath.Join(t.TempDir(), FileName))
	res, err := s.Import([]byte(`{"servers": {"fs": {"command": "npx", "args": ["-y", "server-filesystem", "${workspaceFolder}"], "env": {"TOKEN": "${input:token}"}}, "plain": {"command": "echo"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"fs: ${input:token}, ${workspaceFolder} are not filled in by Airlock (the client that wrote the file would have); edit the server to give the value"}
	if diff := cmp.Diff(want, res.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// Windsurf's serverUrl and Gemini CLI's httpUrl are the url (found by a
// regression test: such entries were skipped as having neither a command
// nor a url).
func TestImportTakesOtherNamesOfTheURL(t *testing.T) {
	s, _ := mustNew(t, filepath.Join(t.TempDir(), FileName))
	res, err := s.Import([]byte(`{"mcpServers": {"figma": {"serverUrl": "https://mcp.figma.com/sse"}, "gh": {"httpUrl": "https://api.example.com/mcp", "headers": {"X": "1"}}}}`))
	if err != nil || len(res.Added) != 2 {
		t.Fatalf("import = %+v, %v; want both added", res, err)
	}
	for id, url := range map[string]string{"figma": "https://mcp.figma.com/sse", "gh": "https://api.example.com/mcp"} {
		got, err := s.Get(id)
		if err != nil || got.URL != url || len(got.Extra) != 0 {
			t.Errorf("%s = %+v, %v; want url %s and no other field", id, got, err, url)
		}
	}
}

func TestImportKeepsVSCodeExtras(t *testing.T) {
	s, _ := mustNew(t, filepath.Join(t.TempDir(), FileName))
	if _, err := s.Import([]byte(`{"servers": {"fs": {"type": "stdio", "command": "npx", "envFile": ".env", "dev": {"watch": "src/**"}}}}`)); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get("fs")
	if err != nil {
		t.Fatal(err)
	}
	want := core.ServerConfig{ID: "fs", Type: "stdio", Command: "npx", Extra: map[string]json.RawMessage{
		"envFile": json.RawMessage(`".env"`), "dev": json.RawMessage(`{"watch":"src/**"}`),
	}}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("imported server (-want +got):\n%s", diff)
	}
}

// A timeout is a whole number however JSON writes it (found by a
// regression test: 1e2 and 100.0 were refused).
func TestTimeoutsAreWholeNumbersHoweverWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	writeFile(t, path, `{"mcpServers": {"a": {"command": "x", "startTimeout": 1.2e2, "callTimeout": 100.0}}}`)
	s, _ := mustNew(t, path)
	list := s.List()
	if st := s.State(); st.Error != "" || len(list) != 1 || list[0].StartTimeout != 120 || list[0].CallTimeout != 100 {
		t.Errorf("error %q, servers %+v; want startTimeout 120 and callTimeout 100", st.Error, list)
	}
}
