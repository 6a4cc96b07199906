package authz_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
)

// Arguments that do not fit are refused in words an agent can act on,
// never with the decoder's Go types (found by a new-user test).
func TestDecodeArgsSaysWhatToFix(t *testing.T) {
	var in struct {
		Tasks []struct {
			Title    string `json:"title"`
			Priority int    `json:"priority"`
		} `json:"tasks"`
		Force bool `json:"force"`
	}
	for _, tc := range []struct{ raw, want string }{
		{`{"tasks":"notalist"}`, `argument "tasks" must be an array, not a string`},
		{`{"tasks":[{"title":5}]}`, `argument "tasks.title" must be a string, not a number`},
		{`{"tasks":[{"priority":1.5}]}`, `argument "tasks.priority" must be a whole number, not a number 1.5`},
		{`{"force":"yes"}`, `argument "force" must be true or false, not a string`},
		{`["x"]`, `the arguments must be a JSON object, not an array`},
		{`{"tasks":`, `the arguments are not`},
	} {
		err := authz.DecodeArgs(json.RawMessage(tc.raw), &in)
		if core.ErrorCode(err) != core.EInvalid || !strings.HasPrefix(core.ErrorMessage(err), tc.want) {
			t.Errorf("DecodeArgs(%s) = %v, want %q", tc.raw, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "struct") {
			t.Errorf("DecodeArgs(%s) speaks Go: %v", tc.raw, err)
		}
	}
}
