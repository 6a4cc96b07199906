package bridge

import "testing"

// The flags set the session's parameters on the URL, replacing the URL's
// own, keeping its others, and encoding a project's name.
func TestSessionURL(t *testing.T) {
	for _, tc := range []struct{ url, purpose, project, want string }{
		{"http://127.0.0.1:4750/mcp", "", "", "http://127.0.0.1:4750/mcp"},
		{"http://127.0.0.1:4750/mcp", "chat", "", "http://127.0.0.1:4750/mcp?purpose=chat"},
		{"http://127.0.0.1:4750/mcp", "", "Q3 launch & more", "http://127.0.0.1:4750/mcp?project=Q3+launch+%26+more"},
		{"http://127.0.0.1:4750/mcp?purpose=task&x=1", "chat", "web", "http://127.0.0.1:4750/mcp?project=web&purpose=chat&x=1"},
	} {
		got, err := sessionURL(tc.url, tc.purpose, tc.project)
		if err != nil || got != tc.want {
			t.Errorf("sessionURL(%q, %q, %q) = %q, %v; want %q", tc.url, tc.purpose, tc.project, got, err, tc.want)
		}
	}
}
