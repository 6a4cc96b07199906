package pipeline

import (
	"encoding/json"
	"regexp"
	"strings"
)

// maxStoredArgs caps the arguments kept in the audit log; the digest still
// covers all of them.
const maxStoredArgs = 16 << 10

var secretKey = regexp.MustCompile(`(?i)(passw(or)?d|passphrase|passkey|secret|token|api[-_]?key|apikey|authorization|auth|credential|private[-_]?key|cookie|session[-_]?id|access[-_]?key)`)

// secretValue catches well-known credential shapes under innocent keys.
var secretValue = regexp.MustCompile(`^(?:Bearer\s+\S+|sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|alk_[A-Za-z0-9_-]{20,}|-----BEGIN [A-Z ]*PRIVATE KEY-----.*)$`)

const redacted = "[redacted]"

// RedactArguments returns args as JSON with the values of secret-looking keys
// and credential-shaped strings replaced, cut to a bounded size.
func RedactArguments(args json.RawMessage) string {
	if len(args) == 0 {
		return "{}"
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return truncate(string(args))
	}
	out, err := json.Marshal(redact(v))
	if err != nil {
		return "{}"
	}
	return truncate(string(out))
}

func redact(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if secretKey.MatchString(k) {
				if _, isObj := val.(map[string]any); !isObj {
					t[k] = redacted
					continue
				}
			}
			t[k] = redact(val)
		}
		return t
	case []any:
		for i := range t {
			t[i] = redact(t[i])
		}
		return t
	case string:
		if secretValue.MatchString(strings.TrimSpace(t)) {
			return redacted
		}
	}
	return v
}

func truncate(s string) string {
	if len(s) <= maxStoredArgs {
		return s
	}
	return s[:maxStoredArgs] + "…(truncated)"
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
