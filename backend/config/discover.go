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
	// The per-user configuration folder: Claude Desktop's and VS Code's
	// files are in it.
	var appData string
	switch goos {
	case "darwin":
		appData = filepath.Join(home, "Library", "Application Support")
	case "windows":
		// %APPDATA%, which is AppData\Roaming in the profile unless redirected.
		appData = filepath.Join(home, "AppData", "Roaming")
	default:
		appData = filepath.Join(home, ".config")
	}
	return []Source{
		{ID: "claude", Name: "Claude Desktop", Path: filepath.Join(appData, "Claude", "claude_desktop_config.json")},
		{ID: "cursor", Name: "Cursor", Path: filepath.Join(home, ".cursor", "mcp.json")},
		// Claude Code keeps user-scope servers in the top-level mcpServers of
		// ~/.claude.json; per-project ones are not imported.
		{ID: "claude-code", Name: "Claude Code", Path: filepath.Join(home, ".claude.json")},
		// VS Code's user-level MCP servers ("servers"); a workspace's
		// .vscode/mcp.json is imported by naming the file.
		{ID: "vscode", Name: "VS Code", Path: filepath.Join(appData, "Code", "User", "mcp.json")},
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
