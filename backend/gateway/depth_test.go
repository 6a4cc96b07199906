package gateway_test

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// upstreamTooDeep is the SDK's max-depth check as v1.8.0 wrote it, byte by
// byte (third_party/go-sdk patches it to pass over strings with IndexByte; see
// PATCHES.md there): true when objects and arrays nest deeper than max.
func upstreamTooDeep(data []byte, max int) bool {
	var depth int
	var inString, escaped bool
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > max {
				return true
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return false
}

// sdkMaxDepth is the SDK's limit (internal/json.defaultMaxDepth).
const sdkMaxDepth = 1000

// decodeTooDeep reports whether the SDK refuses data for its nesting.
func decodeTooDeep(data []byte) bool {
	_, err := jsonrpc.DecodeMessage(data)
	return err != nil && strings.Contains(err.Error(), "exceeded maximum nesting depth")
}

// nested wraps inner in n arrays, inside a request's params.
func nested(prefix string, n int, inner string) string {
	return prefix + strings.Repeat("[", n) + inner + strings.Repeat("]", n) + "}}"
}

// The patched depth check decides as upstream's did: brackets inside
// strings (after any run of backslashes) do not count, brackets outside do.
func TestDecodeDepthCheck(t *testing.T) {
	const req = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":`
	deep := strings.Repeat("[", sdkMaxDepth+1)
	for _, tc := range []struct {
		name string
		data string
		deep bool
	}{
		{"shallow", nested(req, 3, `"x"`), false},
		{"at the limit", nested(req, sdkMaxDepth-2, `1`), false},
		{"past the limit", nested(req, sdkMaxDepth, `1`), true},
		{"brackets in a string", req + `"` + deep + `"}}`, false},
		{"escaped quote, then brackets still in the string", req + `"\"` + deep + `"}}`, false},
		{"escaped backslash ends the string before the brackets", req + `"\\"` + `,` + deep + `}}`, true},
		{"three backslashes escape the quote", req + `"\\\"` + deep + `"}}`, false},
		{"unterminated string", req + `"` + deep, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := upstreamTooDeep([]byte(tc.data), sdkMaxDepth); got != tc.deep {
				t.Fatalf("upstream check says %v, the case says %v", got, tc.deep)
			}
			if got := decodeTooDeep([]byte(tc.data)); got != tc.deep {
				t.Errorf("DecodeMessage refused for depth: %v, want %v", got, tc.deep)
			}
		})
	}
}

// FuzzDecodeDepthCheck compares the patched check with upstream's on any
// input, at a small depth so that random inputs reach it: the SDK's check
// runs before anything else in DecodeMessage, so a message is refused for
// its depth exactly when upstream's check says so.
func FuzzDecodeDepthCheck(f *testing.F) {
	for _, s := range []string{`"\\"[[`, `"\"[["`, `["a\\\\"]`, `{"a":"[","b":[[["\u0022"]]]}`, `"`, `\"[`} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, body string, n uint8) {
		// n arrays around the body, padded to just under the limit, so
		// that the body's own brackets (or brackets the check wrongly
		// thinks are outside a string) decide.
		pad := sdkMaxDepth - 2 - int(n%8)
		data := []byte(nested(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":`, pad, body))
		if got, want := decodeTooDeep(data), upstreamTooDeep(data, sdkMaxDepth); got != want {
			t.Fatalf("refused for depth: %v, upstream's check: %v (body %q)", got, want, body)
		}
	})
}
