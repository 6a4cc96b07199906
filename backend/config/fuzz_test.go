package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Whatever a servers file holds, reading it does not panic, and a file
// Airlock accepts reads back the same from what Airlock would write for it:
// an edit never changes meaning when Airlock rewrites the file.
func FuzzServersFile(f *testing.F) {
	for _, seed := range []string{
		`{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "server-filesystem", "/home/me"], "env": {"A": "1"}}}}`,
		`{"mcpServers": {"web": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer x"}, "type": "http"}}, "other": [1, 2]}`,
		`{"mcpServers": {"figma": {"serverUrl": "https://mcp.figma.com/sse"}, "gh": {"httpUrl": "https://h/mcp", "url": "https://u"}}}`,
		`{"mcpServers": {"a": {"command": "x", "comment": "c", "noPrefix": true, "trustNewTools": false, "disabled": true, "dev": {"watch": "src/**"}}}}`,
		`{"mcpServers": {"a": {"command": "x", "arg": ["y"]}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := parseStrict(data)
		if err != nil {
			return
		}
		out, err := encode(doc.servers, doc.other)
		if err != nil {
			t.Fatalf("encode what was read: %v", err)
		}
		again, err := parseStrict(out)
		if err != nil {
			t.Fatalf("Airlock cannot read back the file it would write: %v\nread:  %s\nwrote: %s", err, data, out)
		}
		if diff := cmp.Diff(doc.servers, again.servers, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("servers changed by a rewrite (-read +reread):\n%s\nread:  %s\nwrote: %s", diff, data, out)
		}
	})
}
