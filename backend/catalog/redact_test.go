package catalog

import "testing"

// An error's text keeps which server it is about (scheme and host) and
// loses whatever of its URL may be a key: userinfo, path, query, fragment,
// and the URL's values wherever else they stand.
func TestRedactURLSecrets(t *testing.T) {
	r := newRedactor("https://user:pa55word@mcp.example.com:8443/mcp/sk-ak-0123456789/sse?apiKey=k3y-v4lue&lang=en#t0ken-frag")
	for _, tc := range []struct{ in, want string }{
		{`Post "https://mcp.example.com:8443/mcp/sk-ak-0123456789/sse?apiKey=k3y-v4lue": dial tcp: connection refused`,
			`Post "https://mcp.example.com:8443/…": dial tcp: connection refused`},
		{`Get "https://user:***@mcp.example.com:8443/mcp?x=1": EOF`, `Get "https://mcp.example.com:8443/…": EOF`},
		{"see https://mcp.example.com. Or http://other.example/", "see https://mcp.example.com. Or http://other.example/"},
		{"(at http://h/p?q=1), then", "(at http://h/…), then"},
		// Values of the server's URL, outside a URL: decoded, or not.
		{"key k3y-v4lue refused; user pa55word; t0ken-frag", "key … refused; user …; …"},
		// A short value is left where it stands alone.
		{"lang en", "lang en"},
		// A local file in a stack trace is no server's: its path stays.
		{"at file:///srv/index.js:12:11", "at file:///srv/index.js:12:11"},
		{"nothing to hide", "nothing to hide"},
	} {
		if got := r.redact(tc.in); got != tc.want {
			t.Errorf("redact(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
	// A server without a URL still has the URLs in its errors cut.
	if got, want := (redactor{}).redact(`Post "http://127.0.0.1:1/x?token=abc"`), `Post "http://127.0.0.1:1/…"`; got != want {
		t.Errorf("redact without a URL = %q, want %q", got, want)
	}
}
