package catalog

import "testing"

// A template matches URIs as the servers' own matchers do, beyond what RFC
// 6570 allows in a value, and no more than its shape.
func TestLooseTemplate(t *testing.T) {
	for _, tc := range []struct {
		tmpl, uri string
		want      bool
	}{
		{"notes://{name}", "notes://Café notes.md", true},
		{"notes://{name}", "notes://a:b", true},
		{"notes://{name}", "notes://", false},
		{"notes://{name}", "notes://a/b", false},
		{"notes://{name}", "other://a", false},
		{"demo://x/{id}/y", "demo://x/é/y", true},
		{"demo://x/{id}/y", "demo://x/é/z", false},
		{"file:///{+path}", "file:///home/a b/c.txt", true},
		{"file:///{+path}", "file:///", false},
		{"db://{table}{?limit}", "db://users", true},
		{"db://{table}{?limit}", "db://users?limit=5", true},
		{"api://v1{/segments*}", "api://v1/a/b", true},
		{"api://v1{/segments*}", "api://v1", false},
		{"img://{name}{.ext}", "img://cat.png", true},
		{"a.b://{x}", "aXb://y", false}, // literals are literal
	} {
		re, err := looseTemplate(tc.tmpl)
		if err != nil {
			t.Fatalf("looseTemplate(%q): %v", tc.tmpl, err)
		}
		if got := re.MatchString(tc.uri); got != tc.want {
			t.Errorf("%q matches %q = %v, want %v (regexp %s)", tc.tmpl, tc.uri, got, tc.want, re)
		}
	}
}
