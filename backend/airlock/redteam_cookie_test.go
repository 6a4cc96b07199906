package airlock_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// Red team: the UI signs a browser in with a cookie whose value is the UI
// token itself, and that cookie alone opens the whole UI API (approve
// calls, add auto-approve rules, rotate tokens). Cookies are not isolated
// by port (RFC 6265 §8.5): the browser also sends it to every other
// server on 127.0.0.1, for instance a dev server an agent started with
// shell_exec and asked the user to preview. That server's process then
// holds the UI token and, with curl (no Origin header), approves its own
// agent's waiting calls. What a browser sends to another port of the same
// host must not be a credential for Airlock's API.
func TestRedTeamUICookieLeaksToOtherPortsOfTheHost(t *testing.T) {
	in := start(t, t.TempDir())
	base := "http://" + in.Addr

	// The person signs in with the printed link, in a browser (a cookie
	// jar that follows RFC 6265 as browsers do).
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, err := browser.Get(base + "/?token=" + url.QueryEscape(in.UIToken))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	// The same browser then opens a page an agent serves on another port
	// of the same host; that server records the Cookie header it gets.
	got := make(chan string, 1)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Header.Get("Cookie"):
		default:
		}
	}))
	defer other.Close()
	resp, err = browser.Get(other.URL + "/preview")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	stolen := <-got
	if stolen == "" {
		return // the browser sent the other port no cookie: nothing leaked
	}

	// The agent's process replays it without a browser (no Origin).
	req, _ := http.NewRequest("POST", base+"/api/rpc/Approvals.Pending", strings.NewReader("[]"))
	req.Header.Set("Cookie", stolen)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the cookie another port of 127.0.0.1 received (%q) opens the UI API: status %d, want 401", stolen, resp.StatusCode)
	}
}
