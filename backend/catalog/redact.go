package catalog

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// urlInText finds the URLs in an error's text: Go's HTTP client quotes the
// URL it failed on (`Post "https://host/mcp?apiKey=…": dial tcp …`), and
// the SDK passes that on.
var urlInText = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+`)

// minSecret is the length under which a value of a server's URL is not
// taken out of text where it stands alone: a short value ("1", "en") would
// take ordinary words with it, and it is taken out of the URL anyway.
const minSecret = 6

// redactor takes a server's secrets out of the text of its errors, which
// reach every agent (tool errors, the server's state when it is down) and
// the audit. Remote servers commonly take their key in the URL: in the
// query (?apiKey=), in the userinfo, or as a path segment (Zapier's
// /mcp/sk-…/sse, Pipedream's /<uuid>/app). So a URL keeps only its scheme
// and host ("https://host/…"), which is enough to tell which server could
// not be reached; and the values of the server's own URL (userinfo, query
// values, fragment) are taken out wherever else they appear, decoded or
// not.
type redactor struct {
	literals []string
}

// newRedactor is the redactor of a server reached at rawURL ("" for a
// process or an in-process server, whose errors still have URLs cut).
func newRedactor(rawURL string) redactor {
	var r redactor
	u, err := url.Parse(rawURL)
	if err != nil || rawURL == "" {
		return r
	}
	add := func(s string) {
		if len(s) >= minSecret {
			r.literals = append(r.literals, s)
		}
	}
	if u.User != nil {
		add(u.User.Username())
		p, _ := u.User.Password()
		add(p)
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			add(v)
			add(url.QueryEscape(v))
		}
	}
	add(u.Fragment)
	// Path segments that look like keys (Zapier's /mcp/sk-…/sse, a UUID),
	// not words: "messages" or "server" cut out of every error would leave
	// nothing readable (found by a review: only the URL's own path was cut).
	for _, seg := range strings.Split(u.Path, "/") {
		if looksLikeKey(seg) {
			add(seg)
		}
	}
	// The longest first: a value that holds another is taken out whole.
	slices.SortFunc(r.literals, func(a, b string) int { return len(b) - len(a) })
	return r
}

// redact returns text without the secrets.
func (r redactor) redact(text string) string {
	text = urlInText.ReplaceAllStringFunc(text, hostOnly)
	for _, s := range r.literals {
		text = strings.ReplaceAll(text, s, "…")
	}
	return text
}

// hostOnly is a URL found in text as "scheme://host", followed by "/…"
// when it had more. A URL without a host (file:///srv/index.js in a stack
// trace) names a local file, not a server: it keeps its path.
func hostOnly(s string) string {
	// Punctuation that ends a sentence is not part of the URL.
	trimmed := strings.TrimRight(s, ".,;:)]}")
	end := s[len(trimmed):]
	u, err := url.Parse(trimmed)
	if err != nil {
		return "…" + end
	}
	if u.Host == "" {
		return u.Scheme + "://" + u.EscapedPath() + end
	}
	short := u.Scheme + "://" + u.Host
	if trimmed == short || trimmed == short+"/" {
		return s
	}
	return short + "/…" + end
}

// looksLikeKey reports whether a URL path segment may be a secret: long,
// and not a plain word (it mixes letters with digits, or is very long).
func looksLikeKey(seg string) bool {
	if len(seg) < 12 {
		return false
	}
	letters, digits := false, false
	for _, c := range seg {
		switch {
		case c >= '0' && c <= '9':
			digits = true
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters = true
		}
	}
	return letters && digits || len(seg) >= 24
}
