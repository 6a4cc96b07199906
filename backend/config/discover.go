package config

import (
	"os"
	"path/filepath"
	"runtime"
)

// Source is an MCP client config file that Airlock can import from.
type Source struct {
	// ID is the short name the CLI takes: claude, cursor or claude-code.
	ID string `json:"id"`
	// Name is what a person calls the client.
	Name string `json:"name"`
	Path string `json:"path"`
}

// KnownImportSources returns where the MCP clients Airlock can import from
// keep their config on an OS (a runtime.GOOS value), whether the files exist
// or not. home is the user's home directory.
func KnownImportSources(home, goos string) []Source {
	var claude string
	switch goos {
	case "darwin":
		claude = filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json")
	case "windows":
		// %APPDATA%, which is AppData\Roaming in the profile unless redirected.
		claude = filepath.Join(home, "AppData", "Roaming", "Claude", "claude_desktop_config.json")
	default:
		claude = filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	}
	return []Source{
		{ID: "claude", Name: "Claude Desktop", Path: claude},
		{ID: "cursor", Name: "Cursor", Path: filepath.Join(home, ".cursor", "mcp.json")},
		// Claude Code keeps user-scope servers in the top-level mcpServers of
		// ~/.claude.json; per-project ones are not imported.
		{ID: "claude-code", Name: "Claude Code", Path: filepath.Join(home, ".claude.json")},
	}
}

// DiscoverImportSources returns the known config files that exist on this
// machine for the user whose home directory is home.
func DiscoverImportSources(home string) []Source {
	var found []Source
	for _, s := range KnownImportSources(home, runtime.GOOS) {
		if fi, err := os.Stat(s.Path); err == nil && fi.Mode().IsRegular() {
			found = append(found, s)
		}
	}
	return found
}
