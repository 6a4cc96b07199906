package pipeline

import (
	"bytes"
	"encoding/json"
	"regexp"
)

// maxStoredArgs caps the arguments kept in the audit log; the digest still
// covers all of them.
const maxStoredArgs = 16 << 10

var secretKey = regexp.MustCompile(`(?i)(passw(or)?d|passphrase|passkey|secret|token|api[-_]?key|apikey|authorization|auth|credential|private[-_]?key|cookie|session[-_]?id|access[-_]?key)`)

// secretValue catches well-known credential shapes under innocent keys.
var secretValue = regexp.MustCompile(`^(?:Bearer\s+\S+|sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|al[ksp]_[A-Za-z0-9_-]{20,}|-----BEGIN [A-Z ]*PRIVATE KEY-----.*)$`)

const redacted = "[redacted]"

// secretKeyWords are what secretKey matches, for ASCII keys in lower case.
var secretKeyWords = []string{"passwd", "password", "passphrase", "passkey", "secret", "token",
	"apikey", "api-key", "api_key", "auth", "credential", "privatekey", "private-key", "private_key",
	"cookie", "sessionid", "session-id", "session_id", "accesskey", "access-key", "access_key"}

// isSecretKey is secretKey.Match, without the regular expression for the
// ASCII keys almost every key is (it is the slowest part of a request's
// record otherwise). Other keys go to the expression, whose case folding
// knows Unicode (a Kelvin sign is a k).
// countKey reports whether a key names a count of tokens rather than a
// token (maxTokens, max_tokens, tokenCount, prompt_tokens): with a number
// as its value it is kept (found by a new-user test: a sampling request's
// maxTokens was hidden). A string or a list under such a key is still
// redacted.
func countKey(key []byte) bool {
	lower := bytes.ToLower(key)
	for _, w := range []string{"tokens", "count", "max", "min", "num", "total", "limit"} {
		if bytes.Contains(lower, []byte(w)) {
			return true
		}
	}
	return false
}

func isSecretKey(key []byte) bool {
	var buf [64]byte
	if len(key) > len(buf) {
		return secretKey.Match(key)
	}
	lower := buf[:len(key)]
	for i, c := range key {
		if c >= 0x80 {
			return secretKey.Match(key)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	for _, w := range secretKeyWords {
		if bytes.Contains(lower, []byte(w)) {
			return true
		}
	}
	return false
}

// secretValuePrefixes start every string secretValue matches.
var secretValuePrefixes = []string{"Bearer", "sk-", "gh", "xox", "AKIA", "alk_", "als_", "alp_", "-----BEGIN "}

// isSecretValue is secretValue.Match of the trimmed value, run only on the
// values that start like a credential.
func isSecretValue(v []byte) bool {
	v = bytes.TrimSpace(v)
	for _, p := range secretValuePrefixes {
		if bytes.HasPrefix(v, []byte(p)) {
			return secretValue.Match(v)
		}
	}
	return false
}

// RedactArguments returns args as compact JSON with the values of
// secret-looking keys (unless they are objects, whose members are checked
// in turn) and credential-shaped strings replaced, cut to a bounded size.
// Everything else is kept as the agent sent it, in its order, numbers
// digit for digit. Arguments that are not JSON are stored as they are
// (cut); nothing in them is parsed.
//
// It runs on every request, so it works on the bytes in one pass rather
// than decoding them into maps and encoding them again.
func RedactArguments(args json.RawMessage) string {
	if len(args) == 0 {
		return "{}"
	}
	spans, ok := secretSpans(args)
	if !ok {
		return truncate(string(args))
	}
	src := []byte(args)
	if len(spans) > 0 {
		var b bytes.Buffer
		b.Grow(len(args))
		last := 0
		for _, s := range spans {
			b.Write(args[last:s[0]])
			b.WriteString(`"` + redacted + `"`)
			last = s[1]
		}
		b.Write(args[last:])
		src = b.Bytes()
	}
	var out bytes.Buffer
	out.Grow(len(src))
	if err := json.Compact(&out, src); err != nil {
		return truncate(string(args)) // not reached: secretSpans checked the syntax
	}
	return truncate(out.String())
}

// secretSpans returns the byte ranges of the values in data to redact, in
// order, and whether data is one well-formed JSON value.
func secretSpans(data []byte) (spans [][2]int, ok bool) {
	s := scanner{data: data}
	s.space()
	if !s.value(false) {
		return nil, false
	}
	s.space()
	return s.spans, s.pos == len(data)
}

// scanner walks one JSON document, noting the values to redact. It checks
// the syntax as strictly as encoding/json does, so that what it accepts
// json.Compact accepts too.
type scanner struct {
	data  []byte
	pos   int
	depth int
	spans [][2]int
}

// maxDepth bounds nesting as encoding/json does.
const maxDepth = 10000

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value scans one value at s.pos. secret says it is the value of a
// secret-looking key: unless it is an object, it is redacted whole.
func (s *scanner) value(secret bool) bool {
	if s.pos >= len(s.data) {
		return false
	}
	start, inner := s.pos, len(s.spans)
	switch c := s.data[s.pos]; {
	case c == '{':
		return s.object()
	case c == '[':
		if !s.array() {
			return false
		}
	case c == '"':
		str, ok := s.str()
		if !ok {
			return false
		}
		if !secret && isSecretValue(str) {
			secret = true
		}
	case c == 't':
		if !s.literal("true") {
			return false
		}
	case c == 'f':
		if !s.literal("false") {
			return false
		}
	case c == 'n':
		if !s.literal("null") {
			return false
		}
	default:
		if !s.number() {
			return false
		}
	}
	if secret {
		// Redacted whole: what was found inside it goes too.
		s.spans = append(s.spans[:inner], [2]int{start, s.pos})
	}
	return true
}

func (s *scanner) object() bool {
	if s.depth++; s.depth > maxDepth {
		return false
	}
	s.pos++ // {
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		s.depth--
		return true
	}
	for {
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return false
		}
		key, ok := s.str()
		if !ok {
			return false
		}
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return false
		}
		s.pos++
		s.space()
		secret := isSecretKey(key)
		if secret && s.pos < len(s.data) && (s.data[s.pos] == '-' || s.data[s.pos] >= '0' && s.data[s.pos] <= '9') && countKey(key) {
			secret = false // a count: {"maxTokens": 100}
		}
		if !s.value(secret) {
			return false
		}
		s.space()
		if s.pos >= len(s.data) {
			return false
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			s.depth--
			return true
		default:
			return false
		}
	}
}

func (s *scanner) array() bool {
	if s.depth++; s.depth > maxDepth {
		return false
	}
	s.pos++ // [
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		s.depth--
		return true
	}
	for {
		s.space()
		if !s.value(false) {
			return false
		}
		s.space()
		if s.pos >= len(s.data) {
			return false
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			s.depth--
			return true
		default:
			return false
		}
	}
}

// str scans a string at s.pos and returns its value. Only a string with
// escapes is decoded (by encoding/json, which knows every escape); the
// others are returned as they are, without copying.
func (s *scanner) str() ([]byte, bool) {
	start := s.pos
	s.pos++ // "
	escaped := false
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; {
		case c == '"':
			s.pos++
			raw := s.data[start:s.pos]
			if !escaped {
				return raw[1 : len(raw)-1], true
			}
			var v string
			if json.Unmarshal(raw, &v) != nil {
				return nil, false
			}
			return []byte(v), true
		case c == '\\':
			escaped = true
			s.pos += 2
		case c < 0x20:
			return nil, false // control characters must be escaped
		default:
			s.pos++
		}
	}
	return nil, false
}

func (s *scanner) literal(word string) bool {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(word)) {
		return false
	}
	s.pos += len(word)
	return true
}

// number scans a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	d := s.data
	i := s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return false
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return false
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	s.pos = i
	return true
}

func truncate(s string) string {
	if len(s) <= maxStoredArgs {
		return s
	}
	return s[:maxStoredArgs] + "…(truncated)"
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
