package pipeline_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/google/go-cmp/cmp"
)

func TestRedactArguments(t *testing.T) {
	long := strings.Repeat("x", 20<<10)
	tests := []struct {
		name, in, want string
	}{
		{"empty", ``, `{}`},
		{"nothing secret: kept in order, compacted", `{ "message": "hi",  "b": [1, 2.50, 1e3], "a": null }`, `{"message":"hi","b":[1,2.50,1e3],"a":null}`},
		{"big numbers kept digit for digit", `{"n":12345678901234567890}`, `{"n":12345678901234567890}`},
		{"secret key", `{"message":"hi","api_key":"abc"}`, `{"message":"hi","api_key":"[redacted]"}`},
		{"secret key, any case and inside a longer name", `{"X-Auth-Header":"abc","myPassword":1}`, `{"X-Auth-Header":"[redacted]","myPassword":"[redacted]"}`},
		{"secret key with an array value", `{"tokens":["a","b"]}`, `{"tokens":"[redacted]"}`},
		// A count of tokens is no token (found by a new-user test); a
		// string under the same name still is.
		{"token counts", `{"maxTokens":100,"usage":{"prompt_tokens":12,"total_tokens":30},"token":7}`, `{"maxTokens":100,"usage":{"prompt_tokens":12,"total_tokens":30},"token":"[redacted]"}`},
		{"a string under a count-like name", `{"maxTokens":"abc"}`, `{"maxTokens":"[redacted]"}`},
		{"secret key over a credential-shaped value: redacted once", `{"pAssword":[{"x":"sk-0000000000000000"}]}`, `{"pAssword":"[redacted]"}`},
		{"secret key with an object value: its members are checked", `{"auth":{"user":"bob","password":"pw"}}`, `{"auth":{"user":"bob","password":"[redacted]"}}`},
		{"credential-shaped value under an innocent key", `{"note":"sk-abcdefghijklmnopqrstuvwx"}`, `{"note":"[redacted]"}`},
		{"credential-shaped value in an array", `{"list":["ok"," Bearer abc.def "]}`, `{"list":["ok","[redacted]"]}`},
		{"escaped key still recognised", `{"pass\u0077ord":"pw"}`, `{"pass\u0077ord":"[redacted]"}`},
		{"escaped credential still recognised", `{"x":"sk\u002dabcdefghijklmnopqrstuvwx"}`, `{"x":"[redacted]"}`},
		{"top-level string", `"ghp_abcdefghijklmnopqrstuvwxyz"`, `"[redacted]"`},
		// Airlock's own session tokens and passkeys, under any key (found
		// by a code review: only agent tokens were).
		{"Airlock's secrets under an innocent key", `{"a":"als_abcdefghijklmnopqrstuvwx","b":"alp_abcdefghijklmnopqrstuvwx","c":"alk_abcdefghijklmnopqrstuvwx"}`, `{"a":"[redacted]","b":"[redacted]","c":"[redacted]"}`},
		{"not JSON: kept as it is", `{"a":`, `{"a":`},
		{"trailing garbage: not JSON", `{"a":1} x`, `{"a":1} x`},
		{"long: cut", `{"m":"` + long + `"}`, (`{"m":"` + long)[:16<<10] + "…(truncated)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, pipeline.RedactArguments(json.RawMessage(tt.in))); diff != "" {
				t.Errorf("RedactArguments(%.60q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// oldRedact is the decode-redact-encode version RedactArguments replaced:
// the fuzz test holds the new one to the same meaning.
func oldRedact(args []byte) (any, bool) {
	secretKey := regexp.MustCompile(`(?i)(passw(or)?d|passphrase|passkey|secret|token|api[-_]?key|apikey|authorization|auth|credential|private[-_]?key|cookie|session[-_]?id|access[-_]?key)`)
	secretValue := regexp.MustCompile(`^(?:Bearer\s+\S+|sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|al[ksp]_[A-Za-z0-9_-]{20,}|-----BEGIN [A-Z ]*PRIVATE KEY-----.*)$`)
	var v any
	if json.Unmarshal(args, &v) != nil {
		return nil, false
	}
	var redact func(v any) any
	redact = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			for k, val := range t {
				if secretKey.MatchString(k) {
					if _, isObj := val.(map[string]any); !isObj {
						t[k] = "[redacted]"
						continue
					}
				}
				t[k] = redact(val)
			}
		case []any:
			for i := range t {
				t[i] = redact(t[i])
			}
		case string:
			if secretValue.MatchString(strings.TrimSpace(t)) {
				return "[redacted]"
			}
		}
		return v
	}
	return redact(v), true
}

func FuzzRedactArguments(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"password":"x","b":[{"token":{"c":"sk-abcdefghijklmnopqrstu"}}]}`,
		`[1,"Bearer x",{"auth":null}]`, `"\u0041"`, `{"a":"\ud800"}`, `{"a":1e+5,"b":-0.5}`, ` {} `, `{"a" "b"}`, `[01]`, "{\"a\":\"\x01\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 4<<10 {
			return // the cut would make the comparison meaningless
		}
		got := pipeline.RedactArguments(in)
		want, ok := oldRedact(in)
		if !ok {
			// Not JSON, or JSON with a number beyond float64 (which the
			// old version could not decode; the new one keeps it).
			if json.Valid(in) {
				if !json.Valid([]byte(got)) {
					t.Fatalf("RedactArguments(%q) = %q, not JSON", in, got)
				}
			} else if len(in) > 0 && got != string(in) {
				t.Fatalf("RedactArguments(%q) = %q, want the input as it is (not JSON)", in, got)
			}
			return
		}
		var v any
		if err := json.Unmarshal([]byte(got), &v); err != nil {
			t.Fatalf("RedactArguments(%q) = %q, not JSON: %v", in, got, err)
		}
		if diff := cmp.Diff(want, v); diff != "" {
			t.Fatalf("RedactArguments(%q) = %q, means something else than the decode-redact-encode version (-old +new):\n%s", in, got, diff)
		}
	})
}

func BenchmarkRedactArguments(b *testing.B) {
	args := json.RawMessage(`{"message":"bench-r0-airlock-seq-s0-c1234"}`)
	b.ReportAllocs()
	for b.Loop() {
		pipeline.RedactArguments(args)
	}
}
