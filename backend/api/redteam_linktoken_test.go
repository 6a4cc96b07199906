package api_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/airlock-dev/airlock/backend/api"
)

// The page keeps whatever token its link carries (URLSearchParams) in its
// origin's storage, replacing the one it had. The server answers a link
// with a wrong token with the sign-in page, so the page never runs for it.
// But Go's query parser drops a pair it cannot decode (a bad escape, a
// semicolon) while the browser's keeps it: any web page can open
// http://127.0.0.1:PORT/?token=%ZZ, the UI is served, and the page
// overwrites the working token with garbage — the user is signed out and
// approvals wait until they find `airlock serve`'s link again.
func TestRedTeamLinkTokenTheServerCannotParseIsStillKeptByThePage(t *testing.T) {
	sec := api.NewSecurity("the-real-ui-token", "127.0.0.1:7777")
	h := sec.UIHandler(fstest.MapFS{"index.html": {Data: []byte("<!doctype html><script src=app.js></script>")}})
	for _, raw := range []string{"token=%ZZ", "token=a%", "token=x;y", "token=%zz&other=1"} {
		// What the page's uiToken() would read from this address.
		pageSees := ""
		if q, err := url.ParseQuery(raw); err == nil {
			pageSees = q.Get("token")
		}
		if pageSees == "" {
			// URLSearchParams is lenient: the raw value after "token=".
			v := strings.SplitN(strings.TrimPrefix(raw, "token="), "&", 2)[0]
			pageSees = v
		}
		req := httptest.NewRequest("GET", "http://127.0.0.1:7777/?"+raw, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code == http.StatusOK {
			t.Errorf("GET /?%s: status 200, the UI is served and its page keeps %q as the UI token in place of the right one; want 401 (a link whose token is not this run's)", raw, pageSees)
		}
	}
}
