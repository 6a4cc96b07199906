package builtin_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/proc"
)

// pngBytes is the start of a PNG image: binary by content, whatever its
// file name.
var pngBytes = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 64)...)

// TestToolDefinitions: each server lists its one tool with seed 004's name,
// schemas and annotations.
func TestToolDefinitions(t *testing.T) {
	f := newFixture(t)
	type prop struct {
		Type    string `json:"type"`
		Default any    `json:"default,omitempty"`
	}
	type schema struct {
		Type       string          `json:"type"`
		Properties map[string]prop `json:"properties"`
		Required   []string        `json:"required"`
	}
	tests := []struct {
		server, tool  string
		in, out       schema
		readOnly      bool
		destructive   *bool
		openWorld     bool
		descriptionOf string
	}{
		{builtin.ServerFileRead, "file_read",
			schema{"object", map[string]prop{"path": {Type: "string"}}, []string{"path"}},
			schema{"object", map[string]prop{"content": {Type: "string"}, "mimeType": {Type: "string"}, "encoding": {Type: "string"}}, []string{"content"}},
			true, nil, false, "Reads the file"},
		{builtin.ServerFileWrite, "file_write",
			schema{"object", map[string]prop{"path": {Type: "string"}, "content": {Type: "string"}, "overwrite": {Type: "boolean", Default: false}}, []string{"path", "content"}},
			schema{"object", map[string]prop{"success": {Type: "boolean"}}, []string{"success"}},
			false, ptr(true), false, "Creates or overwrites"},
		{builtin.ServerShellExec, "shell_exec",
			schema{"object", map[string]prop{"command": {Type: "string"}, "args": {Type: "array", Default: []any{}}, "cwd": {Type: "string"}}, []string{"command"}},
			schema{"object", map[string]prop{"stdout": {Type: "string"}, "stderr": {Type: "string"}, "exitCode": {Type: "number"}}, []string{"stdout", "stderr", "exitCode"}},
			false, ptr(true), true, "Runs the given shell command"},
	}
	servers := f.b.Servers()
	for _, tc := range tests {
		t.Run(tc.server, func(t *testing.T) {
			cs := connect(t, servers[tc.server])
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Tools) != 1 {
				t.Fatalf("%s lists %d tools, want 1", tc.server, len(res.Tools))
			}
			tool := res.Tools[0]
			if tool.Name != tc.tool || !strings.HasPrefix(tool.Description, tc.descriptionOf) {
				t.Errorf("tool %q %q, want %q starting %q", tool.Name, tool.Description, tc.tool, tc.descriptionOf)
			}
			for _, s := range []struct {
				name string
				got  any
				want schema
			}{{"input", tool.InputSchema, tc.in}, {"output", tool.OutputSchema, tc.out}} {
				var got schema
				b, _ := json.Marshal(s.got)
				if err := json.Unmarshal(b, &got); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(s.want, got); diff != "" {
					t.Errorf("%s schema (-want +got):\n%s", s.name, diff)
				}
			}
			a := tool.Annotations
			if a == nil || a.ReadOnlyHint != tc.readOnly || !cmp.Equal(a.DestructiveHint, tc.destructive) || a.OpenWorldHint == nil || *a.OpenWorldHint != tc.openWorld {
				t.Errorf("annotations %+v, want readOnly=%v destructive=%v openWorld=%v", a, tc.readOnly, tc.destructive, tc.openWorld)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestReadWriteThroughMCP(t *testing.T) {
	f := newFixture(t)
	servers := f.b.Servers()
	read, write := connect(t, servers[builtin.ServerFileRead]), connect(t, servers[builtin.ServerFileWrite])

	var w builtin.WriteResult
	if _, c := call(t, write, "file_write", map[string]any{"path": "notes/hello.txt", "content": "héllo\n"}, &w); c != "" || !w.Success {
		t.Fatalf("file_write: code %q, result %+v", c, w)
	}
	var r builtin.ReadResult
	res, c := call(t, read, "file_read", map[string]any{"path": filepath.Join(f.root, "notes", "hello.txt")}, &r)
	if c != "" {
		t.Fatalf("file_read: %s", firstText(res))
	}
	if diff := cmp.Diff(builtin.ReadResult{Content: "héllo\n", MIMEType: "text/plain; charset=utf-8", Encoding: "utf-8"}, r); diff != "" {
		t.Errorf("file_read result (-want +got):\n%s", diff)
	}
	if firstText(res) != "héllo\n" {
		t.Errorf("file_read text content %q, want the file's text", firstText(res))
	}
	fi, err := os.Stat(filepath.Join(f.root, "notes", "hello.txt"))
	if err != nil || fi.Mode().Perm()&0o111 != 0 {
		t.Errorf("written file: %v, mode %v; want a non-executable file", err, fi.Mode())
	}
}

func TestWriteRefusals(t *testing.T) {
	f := newFixture(t)
	write := connect(t, f.b.Servers()[builtin.ServerFileWrite])
	mustWrite(t, filepath.Join(f.root, "exists.txt"), "old")
	mustSymlink(t, "exists.txt", filepath.Join(f.root, "link.txt"))
	mustSymlink(t, filepath.Join(f.outside, "secret.txt"), filepath.Join(f.root, "link_out"))
	big := strings.Repeat("x", int(builtin.Defaults().WriteCapBytes)+1)
	tests := []struct {
		name string
		args map[string]any
		code string
	}{
		{"outside", map[string]any{"path": filepath.Join(f.outside, "new.txt"), "content": "x"}, builtin.EPathOutsideRoots},
		{"traversal", map[string]any{"path": "../outside/new.txt", "content": "x"}, builtin.EPathOutsideRoots},
		{"existing without overwrite", map[string]any{"path": "exists.txt", "content": "new"}, builtin.EFileExists},
		{"existing, overwrite false", map[string]any{"path": "exists.txt", "content": "new", "overwrite": false}, builtin.EFileExists},
		{"symlink target", map[string]any{"path": "link.txt", "content": "new", "overwrite": true}, builtin.ESymlinkTarget},
		{"symlink out", map[string]any{"path": "link_out", "content": "new", "overwrite": true}, builtin.ESymlinkTarget},
		{"executable extension", map[string]any{"path": "run.sh", "content": "echo hi"}, builtin.EExecutableRefused},
		{"executable extension, upper case", map[string]any{"path": "RUN.EXE", "content": "x"}, builtin.EExecutableRefused},
		{"executable extension, trailing dot", map[string]any{"path": "run.bat.", "content": "x"}, builtin.EExecutableRefused},
		{"shebang", map[string]any{"path": "script.txt", "content": "#!/bin/sh\nrm -rf /\n"}, builtin.EExecutableRefused},
		{"ELF", map[string]any{"path": "prog.dat", "content": "\x7fELF\x02\x01\x01"}, builtin.EExecutableRefused},
		{"PE", map[string]any{"path": "prog.dat", "content": "MZ\x90\x00\x03\x00\x00\x00"}, builtin.EExecutableRefused},
		{"a folder", map[string]any{"path": ".", "content": "x", "overwrite": true}, builtin.ENotAFile},
		{"too large", map[string]any{"path": "big.txt", "content": big}, "too_large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(t, f.base)
			res, c := call(t, write, "file_write", tc.args, nil)
			if c != tc.code {
				t.Errorf("file_write %v: code %q (%s), want %q", tc.args["path"], c, firstText(res), tc.code)
			}
			after := snapshot(t, f.base)
			for k := range after {
				if strings.Contains(k, "airlock.db") {
					delete(after, k)
					delete(before, k)
				}
			}
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("a refused write changed files (-before +after):\n%s", diff)
			}
		})
	}
	// Mach-O magic is not valid UTF-8, so it cannot arrive in a JSON string;
	// the handler refuses it all the same.
	for _, magic := range []string{"\xcf\xfa\xed\xfe", "\xfe\xed\xfa\xce", "\xca\xfe\xba\xbe"} {
		if _, err := f.b.WriteFile(context.Background(), builtin.WriteArgs{Path: "macho.dat", Content: magic + "\x07\x00"}); code(err) != builtin.EExecutableRefused {
			t.Errorf("writing Mach-O %q: %v, want %s", magic, err, builtin.EExecutableRefused)
		}
	}
	// Text that merely starts with MZ is not an executable.
	if res, c := call(t, write, "file_write", map[string]any{"path": "mz.txt", "content": "MZ is a postcode area"}, nil); c != "" {
		t.Errorf("writing text starting with MZ: %s", firstText(res))
	}
	// overwrite: true replaces, and keeps no temporary file.
	if res, c := call(t, write, "file_write", map[string]any{"path": "exists.txt", "content": "new", "overwrite": true}, nil); c != "" {
		t.Fatalf("overwrite: %s", firstText(res))
	}
	if b, _ := os.ReadFile(filepath.Join(f.root, "exists.txt")); string(b) != "new" {
		t.Errorf("after overwrite the file holds %q, want new", b)
	}
	ents, _ := os.ReadDir(f.root)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".airlock-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestBinaryRead(t *testing.T) {
	f := newFixture(t)
	read := connect(t, f.b.Servers()[builtin.ServerFileRead])
	// The extension says text; the content says PNG.
	if err := os.WriteFile(filepath.Join(f.root, "image.txt"), pngBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.root, "latin1.txt"), []byte("caf\xe9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, c := call(t, read, "file_read", map[string]any{"path": "image.txt"}, nil)
	if c != builtin.EBinaryRefused || !strings.Contains(firstText(res), "image/png") {
		t.Errorf("reading a PNG: code %q, %q; want %s naming image/png", c, firstText(res), builtin.EBinaryRefused)
	}
	res, c = call(t, read, "file_read", map[string]any{"path": "latin1.txt"}, nil)
	if c != builtin.EInvalidUTF8 || !strings.Contains(firstText(res), "offset 3") {
		t.Errorf("reading Latin-1: code %q, %q; want %s at offset 3", c, firstText(res), builtin.EInvalidUTF8)
	}

	// Allow-listing image/png applies to the very next call.
	s := f.b.Settings()
	s.BinaryMIMEAllow = []string{"image/png"}
	if _, err := f.b.Update(s); err != nil {
		t.Fatal(err)
	}
	var r builtin.ReadResult
	res, c = call(t, read, "file_read", map[string]any{"path": "image.txt"}, &r)
	if c != "" {
		t.Fatalf("reading an allowed PNG: %s", firstText(res))
	}
	if r.Encoding != "base64" || r.MIMEType != "image/png" || r.Content != base64.StdEncoding.EncodeToString(pngBytes) {
		t.Errorf("result %+v, want the PNG in base64", r)
	}
	img, ok := res.Content[0].(*mcp.ImageContent)
	if !ok || img.MIMEType != "image/png" || string(img.Data) != string(pngBytes) {
		t.Errorf("content %#v, want the image", res.Content[0])
	}
}

func TestReadSizeCap(t *testing.T) {
	f := newFixture(t, func(s *builtin.Settings) { s.ReadCapBytes = 2048 })
	read := connect(t, f.b.Servers()[builtin.ServerFileRead])
	mustWrite(t, filepath.Join(f.root, "big.txt"), strings.Repeat("a", 2049))
	mustWrite(t, filepath.Join(f.root, "fits.txt"), strings.Repeat("a", 2048))
	if res, c := call(t, read, "file_read", map[string]any{"path": "big.txt"}, nil); c != "too_large" || !strings.Contains(firstText(res), "2049 bytes") {
		t.Errorf("over the cap: code %q, %q", c, firstText(res))
	}
	if res, c := call(t, read, "file_read", map[string]any{"path": "fits.txt"}, nil); c != "" {
		t.Errorf("at the cap: %s", firstText(res))
	}
}

func TestShellExecThroughMCP(t *testing.T) {
	f := newFixture(t)
	mustWrite(t, filepath.Join(f.root, "sub", "x.txt"), "x")
	shell := connect(t, f.b.Servers()[builtin.ServerShellExec])
	tests := []struct {
		name string
		args map[string]any
		want builtin.ExecResult
	}{
		{"stdout", map[string]any{"command": "echo hi | wc -c"}, builtin.ExecResult{Stdout: "3\n"}},
		{"stderr and exit code", map[string]any{"command": "echo oops >&2; exit 3"}, builtin.ExecResult{Stderr: "oops\n", ExitCode: 3}},
		{"args are quoted", map[string]any{"command": "printf '%s|'", "args": []string{"a b", "; rm -rf /", "$HOME"}}, builtin.ExecResult{Stdout: "a b|; rm -rf /|$HOME|"}},
		{"default cwd is the first root", map[string]any{"command": "pwd"}, builtin.ExecResult{Stdout: f.root + "\n"}},
		{"relative cwd", map[string]any{"command": "pwd; ls", "cwd": "sub"}, builtin.ExecResult{Stdout: filepath.Join(f.root, "sub") + "\nx.txt\n"}},
		{"PWD matches", map[string]any{"command": "echo $PWD", "cwd": filepath.Join(f.root, "sub")}, builtin.ExecResult{Stdout: filepath.Join(f.root, "sub") + "\n"}},
		{"no start-up files", map[string]any{"command": "type ls | head -c 5"}, builtin.ExecResult{Stdout: "ls is"}},
		{"signal", map[string]any{"command": "kill -TERM $$"}, builtin.ExecResult{ExitCode: 143}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got builtin.ExecResult
			res, c := call(t, shell, "shell_exec", tc.args, &got)
			if c != "" {
				t.Fatalf("shell_exec: %s", firstText(res))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestShellRefusals(t *testing.T) {
	f := newFixture(t)
	mustWrite(t, filepath.Join(f.root, "file.txt"), "x")
	mustSymlink(t, f.outside, filepath.Join(f.root, "out"))
	shell := connect(t, f.b.Servers()[builtin.ServerShellExec])
	for _, tc := range []struct {
		name     string
		args     map[string]any
		code     string
		mentions string
	}{
		{"denied command", map[string]any{"command": "rm -rf /"}, builtin.ECommandDenied, "deny rule `rm {-r,-R,--recursive} {-f,--force}`"},
		{"denied through args", map[string]any{"command": "sh", "args": []string{"-c", "rm -rf /"}}, builtin.ECommandDenied, "rm -rf /"},
		{"denied inside a substitution", map[string]any{"command": "echo $(shutdown now)"}, builtin.ECommandDenied, "shutdown"},
		{"cwd outside", map[string]any{"command": "ls", "cwd": f.outside}, builtin.EPathOutsideRoots, "outside the allowed folders"},
		{"cwd through a link out", map[string]any{"command": "ls", "cwd": "out"}, builtin.EPathOutsideRoots, "absolute path"},
		{"cwd is a file", map[string]any{"command": "ls", "cwd": "file.txt"}, builtin.ENotADirectory, "not a folder"},
		{"empty command", map[string]any{"command": "   "}, builtin.EInvalidArguments, "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, c := call(t, shell, "shell_exec", tc.args, nil)
			if c != tc.code || !strings.Contains(firstText(res), tc.mentions) {
				t.Errorf("code %q, text %q; want %s mentioning %q", c, firstText(res), tc.code, tc.mentions)
			}
		})
	}
}

// TestShellTimeoutKillsProcessGroup: at the timeout the command, its
// children and their children are killed.
func TestShellTimeoutKillsProcessGroup(t *testing.T) {
	f := newFixture(t, func(s *builtin.Settings) { s.ShellTimeoutSeconds = 1 })
	shell := connect(t, f.b.Servers()[builtin.ServerShellExec])
	var got builtin.ExecResult
	res, c := call(t, shell, "shell_exec", map[string]any{
		"command": "sleep 100 & echo $!; sh -c 'sleep 100 & echo $!; trap \"\" TERM; wait' & echo $!; wait",
	}, &got)
	// A tool error (Activity shows it as one), with the output so far.
	if c != builtin.ECommandTimeout {
		t.Fatalf("shell_exec killed at the timeout: code %q (%s), want %s", c, firstText(res), builtin.ECommandTimeout)
	}
	data, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.ExitCode != builtin.TimeoutExitCode || !strings.Contains(got.Stderr, "ran longer than 1 s") {
		t.Errorf("exit code %d, stderr %q; want %d and the timeout note", got.ExitCode, got.Stderr, builtin.TimeoutExitCode)
	}
	var pids []int
	for _, line := range strings.Fields(got.Stdout) {
		pid, err := strconv.Atoi(line)
		if err != nil {
			t.Fatalf("stdout %q: %v", got.Stdout, err)
		}
		pids = append(pids, pid)
	}
	if len(pids) != 3 {
		t.Fatalf("stdout %q, want three pids", got.Stdout)
	}
	waitDead(t, pids...)
}

func TestShellOutputCap(t *testing.T) {
	f := newFixture(t, func(s *builtin.Settings) { s.OutputCapBytes = 1024 })
	shell := connect(t, f.b.Servers()[builtin.ServerShellExec])
	var got builtin.ExecResult
	if res, c := call(t, shell, "shell_exec", map[string]any{"command": "head -c 5000 /dev/zero | tr '\\0' a; head -c 3000 /dev/zero | tr '\\0' b >&2"}, &got); c != "" {
		t.Fatalf("shell_exec: %s", firstText(res))
	}
	if want := strings.Repeat("a", 1024) + proc.TruncationMarker(5000-1024); got.Stdout != want {
		t.Errorf("stdout is %d bytes ending %q, want 1024 a's and the marker", len(got.Stdout), got.Stdout[max(0, len(got.Stdout)-60):])
	}
	if want := strings.Repeat("b", 1024) + proc.TruncationMarker(3000-1024); got.Stderr != want {
		t.Errorf("stderr is %d bytes ending %q, want 1024 b's and the marker", len(got.Stderr), got.Stderr[max(0, len(got.Stderr)-60):])
	}
}

// TestShellEnvironment: a command sees the allow-listed variables and PWD,
// never Airlock's secrets or loader variables.
func TestShellEnvironment(t *testing.T) {
	f := newFixture(t)
	shell := connect(t, f.b.Servers()[builtin.ServerShellExec])
	var got builtin.ExecResult
	if res, c := call(t, shell, "shell_exec", map[string]any{"command": "env | cut -d= -f1 | sort"}, &got); c != "" {
		t.Fatalf("shell_exec: %s", firstText(res))
	}
	names := strings.Fields(got.Stdout)
	for _, secret := range []string{"AIRLOCK_TOKEN", "GITHUB_TOKEN", "LD_PRELOAD", "BASH_ENV", "BASH_FUNC_ls%%"} {
		for _, n := range names {
			if n == secret {
				t.Errorf("the command sees %s", secret)
			}
		}
	}
	for _, want := range []string{"PATH", "HOME", "LANG", "PWD"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("the command does not see %s; it sees %v", want, names)
		}
	}

	// The allow list applies to the very next call.
	s := f.b.Settings()
	s.EnvAllow = []string{"PATH", "GITHUB_TOKEN"}
	if _, err := f.b.Update(s); err != nil {
		t.Fatal(err)
	}
	if res, c := call(t, shell, "shell_exec", map[string]any{"command": "echo \"$GITHUB_TOKEN|$HOME\""}, &got); c != "" {
		t.Fatalf("shell_exec: %s", firstText(res))
	}
	if got.Stdout != "ghp_not_for_commands|\n" {
		t.Errorf("with GITHUB_TOKEN allowed and HOME not: %q", got.Stdout)
	}
}

// TestSettingsApplyToNextCall: removing the last folder turns the tools off
// at once; allowing one turns them on.
func TestSettingsApplyToNextCall(t *testing.T) {
	f := newFixture(t)
	read := connect(t, f.b.Servers()[builtin.ServerFileRead])
	if res, c := call(t, read, "file_read", map[string]any{"path": "inside.txt"}, nil); c != "" {
		t.Fatalf("file_read: %s", firstText(res))
	}
	if _, err := f.b.RemovePath(f.root); err != nil {
		t.Fatal(err)
	}
	if f.b.Enabled() {
		t.Error("Enabled() with no folder")
	}
	if res, c := call(t, read, "file_read", map[string]any{"path": "inside.txt"}, nil); c != builtin.EBuiltinDisabled || !strings.Contains(firstText(res), "allow-path") {
		t.Errorf("with no folder: code %q, %q; want %s with a hint", c, firstText(res), builtin.EBuiltinDisabled)
	}
	if _, err := f.b.AllowPath(f.outside); err != nil {
		t.Fatal(err)
	}
	var r builtin.ReadResult
	if res, c := call(t, read, "file_read", map[string]any{"path": "secret.txt"}, &r); c != "" || r.Content != secretMarker {
		t.Errorf("after allowing the folder: code %q %s, content %q", c, firstText(res), r.Content)
	}
}

// TestWriteCreatesFolders: missing folders are created (deep ones too), and
// links that stay inside the root are followed as file_read follows them.
func TestWriteCreatesFolders(t *testing.T) {
	f := newFixture(t)
	if err := os.Mkdir(filepath.Join(f.root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, "..", filepath.Join(f.root, "sub", "up"))
	deep := strings.Repeat("d/", 200) + "f.txt"
	ctx := context.Background()
	for _, p := range []string{"x/y/z/f.txt", deep, "sub/up/via-link.txt", filepath.Join(f.root, "abs", "f.txt")} {
		if _, err := f.b.WriteFile(ctx, builtin.WriteArgs{Path: p, Content: "ok"}); err != nil {
			t.Errorf("WriteFile(%.40q): %v", p, err)
			continue
		}
		if res, err := f.b.ReadFile(ctx, builtin.ReadArgs{Path: p}); err != nil || res.Content != "ok" {
			t.Errorf("ReadFile(%.40q) after writing = %q, %v", p, res.Content, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(f.root, "via-link.txt")); err != nil || string(b) != "ok" {
		t.Errorf("the write through sub/up landed elsewhere: %q, %v", b, err)
	}
}
