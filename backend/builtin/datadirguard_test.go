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
	home := t.TempDir()
	t.Setenv("HOME", home)
	data := filepath.Join(home, ".config", "airlock")
	mustWrite(t, filepath.Join(data, "rules.json"), "{}")
	g := builtin.NewDataDirGuard(data, func(s string) bool { return s == "airlock" })
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
	} {
		if v := check("fs", "read_file", args); v.Outcome != core.Deny || v.Code != builtin.EPathProtected {
			t.Errorf("%v: %+v; want a path_protected refusal", args, v)
		}
	}
	for _, args := range []any{
		map[string]any{"path": "~/.config/airlock-notes/x"},
		map[string]any{"path": "~/.config/"},
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
