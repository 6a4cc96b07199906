package config

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDiscoverImportSources(t *testing.T) {
	home := t.TempDir()
	if got := DiscoverImportSources(home); len(got) != 0 {
		t.Fatalf("empty home: found %v", got)
	}
	var want []Source
	for _, s := range KnownImportSources(home, runtime.GOOS) {
		if s.ID == "claude" {
			continue // leave one missing
		}
		if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
			t.Fatal(err)
		}
		writeFile(t, s.Path, `{"mcpServers": {}}`)
		want = append(want, s)
	}
	if diff := cmp.Diff(want, DiscoverImportSources(home)); diff != "" {
		t.Errorf("DiscoverImportSources (-want +got):\n%s", diff)
	}
}

func TestKnownImportSources(t *testing.T) {
	tests := []struct {
		goos, claude, vscode string
	}{
		{"linux", "/h/.config/Claude/claude_desktop_config.json", "/h/.config/Code/User/mcp.json"},
		{"darwin", "/h/Library/Application Support/Claude/claude_desktop_config.json", "/h/Library/Application Support/Code/User/mcp.json"},
		{"windows", "/h/AppData/Roaming/Claude/claude_desktop_config.json", "/h/AppData/Roaming/Code/User/mcp.json"},
	}
	for _, tt := range tests {
		t.Run(tt.goos, func(t *testing.T) {
			want := []Source{
				{ID: "claude", Name: "Claude Desktop", Path: filepath.FromSlash(tt.claude)},
				{ID: "cursor", Name: "Cursor", Path: filepath.FromSlash("/h/.cursor/mcp.json")},
				{ID: "claude-code", Name: "Claude Code", Path: filepath.FromSlash("/h/.claude.json")},
				{ID: "vscode", Name: "VS Code", Path: filepath.FromSlash(tt.vscode)},
			}
			if diff := cmp.Diff(want, KnownImportSources(filepath.FromSlash("/h"), tt.goos)); diff != "" {
				t.Errorf("KnownImportSources (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultDataDir(t *testing.T) {
	tests := []struct {
		name, goos string
		env        map[string]string
		want       string
		wantErr    bool
	}{
		{"override", "linux", map[string]string{"AIRLOCK_DATA_DIR": "/data", "HOME": "/h"}, "/data", false},
		{"xdg", "linux", map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/airlock", false},
		{"relative xdg ignored", "linux", map[string]string{"XDG_CONFIG_HOME": "x", "HOME": "/h"}, "/h/.config/airlock", false},
		{"home", "linux", map[string]string{"HOME": "/h"}, "/h/.config/airlock", false},
		{"mac", "darwin", map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "/x"}, "/h/Library/Application Support/airlock", false},
		{"windows", "windows", map[string]string{"AppData": "/ad"}, "/ad/airlock", false},
		{"nothing set", "linux", map[string]string{}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := defaultDataDir(tt.goos, func(k string) string { return tt.env[k] })
			if tt.wantErr {
				if err == nil {
					t.Fatalf("got %q, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.FromSlash(tt.want); got != want {
				t.Errorf("defaultDataDir = %q, want %q", got, want)
			}
		})
	}
}
