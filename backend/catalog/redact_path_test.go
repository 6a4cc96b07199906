package catalog

import (
	"strings"
	"testing"
)

// The redactor's own doc names path segments as where remote servers take
// their key (Zapier's /mcp/sk-…/sse, Pipedream's /<uuid>/app), yet only
// userinfo, query values and the fragment are cut where they stand outside
// a URL. The SDK passes on the JSON-RPC error a remote server answers a
// refused request with (checkResponse: `sending "tools/call": <error>:
// Unauthorized`); a server that echoes the key it refused, or the path it
// was asked for, hands the key to every agent whose call fails.
func TestRedactURLPathSecretsOutsideAURL(t *testing.T) {
	const key = "sk-ak-0123456789"
	r := newRedactor("https://mcp.example.com/api/mcp/" + key + "/sse")
	for _, in := range []string{
		`sending "tools/call": invalid API key ` + key + `: rejected: Unauthorized`,
		`sending "tools/call": no such route POST /api/mcp/` + key + `/sse: rejected: Not Found`,
	} {
		if got := r.redact(in); strings.Contains(got, key) {
			t.Errorf("redact(%q)\n = %q: the key in the server's URL path reaches the agent", in, got)
		}
	}
}
