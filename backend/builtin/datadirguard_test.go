package builtin_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/core"
)

func TestDataDirGuard(t *testing.T) {
	home, data, g := guardInHome(t)
	check := func(server, name string, args any) core.Verdict {
		b, _ := json.Marshal(args)
		return g.Check(context.Background(), &core.Request{Kind: core.KindToolCall, Server: server, Name: name, Args: b})
	}
	for _, args := range []any{
		map[string]any{"path": data + "/agent-token"},
		map[string]any{"path": "~/.config/airlock/rules.json"},
		map[string]any{"command": "cat $HOME/.config/airlock/airlock.lock"},
		map[string]any{"command": "ls ${HOME}/.config/airlock"},
		map[string]any{"paths": []string{"/tmp/x", data}},
		json.RawMessage(`{"path":"` + filepath.ToSlash(home) + `\/.config\/airlock\/rules.json"}`),
		map[string]any{"path": "~/.config/"}, // moving it moves the data directory
	} {
		if v := check("fs", "read_file", args); v.Outcome != core.Deny || v.Code != builtin.EPathProtected {
			t.Errorf("%v: %+v; want a path_protected refusal", args, v)
		}
	}
	for _, args := range []any{
		map[string]any{"path": "~/.config/airlock-notes/x"},
		map[string]any{"path": "~/.config/other/settings.json"},
		map[string]any{"path": "~"},
		map[string]any{"message": "hello"},
		map[string]any{"path": home + "/src/app"},
		nil,
	} {
		if v := check("fs", "read_file", args); v.Outcome != core.Allow {
			t.Errorf("%v: %+v; want allow", args, v)
		}
	}
	if v := g.Check(context.Background(), &core.Request{Kind: core.KindResourceRead, Server: "fs", Name: "file://" + data + "/rules.json"}); v.Outcome != core.Deny {
		t.Errorf("a resource read by URI: %+v; want a refusal", v)
	}
	if v := check("airlock", "send_message", map[string]any{"text": "my settings are in ~/.config/airlock"}); v.Outcome != core.Allow {
		t.Errorf("Airlock's own tools carry text: %+v; want allow", v)
	}
}

// @modelcontextprotocol/server-filesystem given the home folder (the case
// the guard is for) reads the data directory's files by any of these
// spellings: its validatePath resolves a relative path against the allowed
// folder, expands ~/ with path.join, and normalises with path.resolve and a
// collapse of repeated slashes; the JSON arguments reach it decoded, so any
// character may be sent as \uXXXX. Each of them reads the agents' token (or
// writes rules.json) through a server you added, and the guard lets each
// through: it looks for the data directory's path spelled one way as text.
func TestDataDirGuardRefusesEquivalentSpellings(t *testing.T) {
	home, _, g := guardInHome(t)
	h := filepath.ToSlash(home)
	for name, args := range map[string]string{
		"relative to the served home folder": `{"path":".config/airlock/agent-token"}`,
		"relative, ./":                       `{"path":"./.config/airlock/agent-token"}`,
		"relative, with ..":                  `{"path":"src/../.config/airlock/agent-token"}`,
		"absolute, double slash":             `{"path":"` + h + `//.config/airlock/agent-token"}`,
		"absolute, /./":                      `{"path":"` + h + `/.config/./airlock/agent-token"}`,
		"absolute, ..":                       `{"path":"` + h + `/src/../.config/airlock/agent-token"}`,
		"~ and a double slash":               `{"path":"~//.config/airlock/agent-token"}`,
		"~ and /./":                          `{"path":"~/./.config/airlock/agent-token"}`,
		"JSON escape of a slash":             `{"path":"~\u002f.config\u002fairlock\u002fagent-token"}`,
		"JSON escape of a letter":            `{"path":"~/.config/\u0061irlock/agent-token"}`,
		"write rules, relative":              `{"path":".config/airlock/rules.json","content":"{}"}`,
		"read_multiple_files, relative":      `{"paths":["notes.txt",".config/airlock/agent-token"]}`,
	} {
		t.Run(name, func(t *testing.T) {
			v := g.Check(context.Background(), &core.Request{Kind: core.KindToolCall, Server: "fs", Name: "read_file", Args: json.RawMessage(args)})
			if v.Outcome != core.Deny || v.Code != builtin.EPathProtected {
				t.Errorf("%s: %+v; want a path_protected refusal (server-filesystem given %s reads the data directory's file)", args, v, home)
			}
		})
	}
}

// Two more ways around the guard. server-filesystem's move_file renames a
// folder above the data directory (both paths are in the served home
// folder), after which the data directory's files are read at their new
// path, and moved back. And a resource read names a file:// URI, where a
// server decodes percent-encoding before it opens the path (server-
// filesystem serves no resources; other file servers do).
func TestDataDirGuardRefusesMovingAFolderAboveAndEncodedURIs(t *testing.T) {
	home, _, g := guardInHome(t)
	if v := g.Check(context.Background(), &core.Request{Kind: core.KindToolCall, Server: "fs", Name: "move_file",
		Args: json.RawMessage(`{"source":"~/.config","destination":"~/cfg"}`)}); v.Outcome != core.Deny {
		t.Errorf("move_file of the folder holding the data directory: %+v; want a refusal (then read_file ~/cfg/airlock/agent-token)", v)
	}
	uri := "file://" + filepath.ToSlash(home) + "/.config/%61irlock/agent-token"
	if v := g.Check(context.Background(), &core.Request{Kind: core.KindResourceRead, Server: "fs", Name: uri}); v.Outcome != core.Deny {
		t.Errorf("a resource read of %s: %+v; want a refusal", uri, v)
	}
}

// guardInHome is the guard of a data directory at ~/.config/airlock in a
// home folder of the test's, holding the agents' token; Airlock's own
// server is "airlock".
func guardInHome(t *testing.T) (home, data string, g *builtin.DataDirGuard) {
	t.Helper()
	home = t.TempDir()
	t.Setenv("HOME", home)
	data = filepath.Join(home, ".config", "airlock")
	mustWrite(t, filepath.Join(data, "agent-token"), "secret")
	return home, data, builtin.NewDataDirGuard(data, func(s string) bool { return s == "airlock" })
}

// BenchmarkDataDirGuard is what the guard adds to a proxied call: an echo
// whose arguments cannot name the data directory (the cheap test), and a
// read_file whose path might (decoded and read as a path).
func BenchmarkDataDirGuard(b *testing.B) {
	home := b.TempDir()
	b.Setenv("HOME", home)
	g := builtin.NewDataDirGuard(filepath.Join(home, ".config", "airlock"), func(string) bool { return false })
	for _, bc := range []struct{ name, args string }{
		{"echo", `{"message":"hello from the benchmark"}`},
		{"path", `{"path":"` + filepath.ToSlash(home) + `/src/airlock/README.md"}`},
	} {
		r := &core.Request{Kind: core.KindToolCall, Server: "fs", Name: "call", Args: json.RawMessage(bc.args)}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if v := g.Check(context.Background(), r); v.Outcome != core.Allow {
					b.Fatal(v)
				}
			}
		})
	}
}
