package api_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/api"
	"github.com/airlock-dev/airlock/backend/core"
)

// refusals is an RPC area whose method fails with the error it is told.
type refusals struct{}

func (refusals) Fail(code string) error {
	if code == "plain" {
		return errors.New("disk on fire")
	}
	return core.Errorf(code, "refused: %s", code)
}

// TestMethodErrorStatus: a method's refusal gets a 4xx from its code; only
// a failure is 500. A team rule's "unauthorized" is 403: a 401 tells the UI
// its token is gone, and it signs out. Found by a new-user test: a board
// move the state machine refused answered 500.
func TestMethodErrorStatus(t *testing.T) {
	h := api.RPCHandler([]api.Area{{Name: "T", Value: refusals{}}})
	for _, c := range []struct {
		code string
		want int
	}{
		{"invalid_status_transition", http.StatusConflict},
		{"task_blocked", http.StatusConflict},
		{"task_not_found", http.StatusNotFound},
		{core.ENotFound, http.StatusNotFound},
		{core.EInvalid, http.StatusBadRequest},
		{core.EUnauthorized, http.StatusForbidden},
		{core.EForbidden, http.StatusForbidden},
		{core.EInternal, http.StatusInternalServerError},
		{"plain", http.StatusInternalServerError},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api/rpc/T.Fail", strings.NewReader(`["`+c.code+`"]`)))
		if rec.Code != c.want {
			t.Errorf("%s: HTTP %d, want %d (%s)", c.code, rec.Code, c.want, rec.Body)
		}
	}
}
