package gateway_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// One subscription per URI, whichever server the fallback chose for it
// (found in a review of the single-server fallback for subscriptions).

// newMadeNotes is a notes server that also has a template matching
// mem://made/{id}: once it runs, the URIs the fallback sent to the sole
// resource server resolve to it instead.
func newMadeNotes() *notes {
	n := newNotes()
	n.AddResourceTemplate(&mcp.ResourceTemplate{Name: "made", URITemplate: "mem://made/{id}"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "made"}}}, nil
		})
	return n
}

// withSoleNotes is a gateway whose one server of resources is hid, a notes
// server over HTTP; hidCfg configures it, to apply with another beside it.
func withSoleNotes(t *testing.T) (*env, *notes, core.ServerConfig) {
	e := newEnv(t, catalog.Options{})
	hid := newNotes()
	hidCfg := httpDownstream(t, "hid", hid.Server)
	e.cat.Apply([]core.ServerConfig{hidCfg})
	e.waitRunning(t, "hid")
	return e, hid, hidCfg
}

func countPrefix(list []string, prefix string) int {
	n := 0
	for _, s := range list {
		if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
			n++
		}
	}
	return n
}

// 2026-07-28: two listen streams of one credential subscribe to the same
// URIs, the first through the sole-server fallback (hid), the second after
// a server whose template matches them started (other). The credential
// keeps one subscription per URI, hid's, which the second stream shares:
// when the first stream ends nothing is released upstream, and when the
// second ends, hid is (a release by URI took other's key in map order, so
// other, still wanted, was unsubscribed and hid stayed subscribed for good:
// with 8 URIs the test failed with probability 1-2^-8).
func TestStatelessReleaseMatchesTheSubscribedServer(t *testing.T) {
	e, hid, hidCfg := withSoleNotes(t)
	ctx := context.Background()

	acked1, acked2 := make(chan string, 32), make(chan string, 32)
	c1 := e.connectNew(t, testToken, nil, ackTo(acked1))
	const n = 8
	uri := func(i int) string { return fmt.Sprintf("mem://made/%d", i) }
	for i := range n {
		if err := c1.Subscribe(ctx, &mcp.SubscribeParams{URI: uri(i)}); err != nil {
			t.Fatal(err)
		}
		receive(t, acked1, "c1's subscription acknowledged")
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return countPrefix(hid.seen(), "subscribe mem://made/") == n },
		"hid not subscribed to all: %v", hid.seen())

	other := newMadeNotes()
	e.cat.Apply([]core.ServerConfig{hidCfg, httpDownstream(t, "other", other.Server)})
	e.waitRunning(t, "other")
	testutil.Eventually(t, 10*time.Second, func() bool {
		s, _ := e.cat.Snapshot().ResourceServer(uri(0))
		return s == "other"
	}, "the template of other never placed %s", uri(0))

	c2 := e.connectNew(t, testToken, nil, ackTo(acked2))
	for i := range n {
		if err := c2.Subscribe(ctx, &mcp.SubscribeParams{URI: uri(i)}); err != nil {
			t.Fatal(err)
		}
		receive(t, acked2, "c2's subscription acknowledged")
	}
	for i := range n {
		c1.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri(i)})
	}
	for i := range n {
		c2.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri(i)})
	}
	// Every subscription made upstream is released once, and only once
	// both streams have ended: hid's n.
	testutil.Eventually(t, 10*time.Second, func() bool { return countPrefix(hid.seen(), "unsubscribe ") == n },
		"hid was not released from all: hid %v, other %v", hid.seen(), other.seen())
	if len(other.seen()) != 0 {
		t.Errorf("other was subscribed or released while the credential held hid's subscriptions: %v", other.seen())
	}
	if evs := hid.seen(); countPrefix(evs, "subscribe ") != n || countPrefix(evs[:n], "subscribe ") != n {
		t.Errorf("hid's subscriptions: %v, want %d, all before the releases", evs, n)
	}
}

// 2025-11-25 session: a session subscribed to an unlisted URI through the
// fallback (hid) subscribes to it again once a server whose template
// matches it runs (a client re-subscribing on reconnect or after a
// restart). It keeps its one subscription, hid's, and its unsubscribe
// releases it: every subscription made upstream is released. (It held two,
// one at each server, and the one unsubscribe left the other subscribed
// until the session ended.)
func TestSessionResubscribeKeepsOneSubscription(t *testing.T) {
	e, hid, hidCfg := withSoleNotes(t)
	ctx := context.Background()
	sess := e.connect(t, nil)
	const u = "mem://made/1"
	if err := sess.Subscribe(ctx, &mcp.SubscribeParams{URI: u}); err != nil {
		t.Fatal(err)
	}
	other := newMadeNotes()
	e.cat.Apply([]core.ServerConfig{hidCfg, httpDownstream(t, "other", other.Server)})
	e.waitRunning(t, "other")
	testutil.Eventually(t, 10*time.Second, func() bool {
		s, _ := e.cat.Snapshot().ResourceServer(u)
		return s == "other"
	}, "the template of other never placed %s", u)
	if err := sess.Subscribe(ctx, &mcp.SubscribeParams{URI: u}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: u}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		return countPrefix(hid.seen(), "unsubscribe ")+countPrefix(other.seen(), "unsubscribe ") >= 1
	}, "no release arrived")
	subs := countPrefix(hid.seen(), "subscribe ") + countPrefix(other.seen(), "subscribe ")
	unsubs := countPrefix(hid.seen(), "unsubscribe ") + countPrefix(other.seen(), "unsubscribe ")
	if subs != unsubs {
		t.Errorf("the session is unsubscribed from %s, but %d upstream subscriptions were made and %d released: hid %v, other %v",
			u, subs, unsubs, hid.seen(), other.seen())
	}
}
