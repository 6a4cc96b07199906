package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/activity"
	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/gateway"
	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The proxied-call benchmarks measure what the gateway itself costs: a
// client calls test__echo through the real HTTP handler, the pipeline with
// its SQLite audit log, and the catalog, to the in-process test server — no
// process, no node, so that changes to the hot path show in allocations and
// time without the noise of a downstream server. `go tool task bench`
// measures the whole path as agents see it.
//
//	go test ./backend/gateway -run '^$' -bench ProxiedCall -benchmem

func benchSessions(b *testing.B, n int) []*mcp.ClientSession {
	b.Helper()
	db := testutil.MustOpenDB(b)
	audit, err := store.OpenAuditLog(db, filepath.Join(b.TempDir(), store.JournalFileName), nil)
	if err != nil {
		b.Fatal(err)
	}
	recorder := activity.New(audit, core.Discard, nil)
	cat := catalog.New("bench", catalog.Options{})
	acc := &access{}
	pipe, err := pipeline.New(pipeline.Stages{Route: cat, Gate: acc, Decider: allowAll{}, Dispatch: cat, Audit: recorder})
	if err != nil {
		b.Fatal(err)
	}
	gw := gateway.New(cat, pipe, &identities{}, acc, gateway.Options{Version: "bench", Audit: recorder})
	srv := httptest.NewServer(gw.StreamableHandler())
	b.Cleanup(func() { srv.Close(); cat.Close(); recorder.Close(); audit.Close() })
	cat.AddInProcess("test", testutil.NewTestServer().Server, false)
	testutil.Eventually(b, 60*time.Second, func() bool {
		st, ok := cat.ServerStatus("test")
		return ok && st.State == core.StateRunning
	}, "the test server never became running")
	out := make([]*mcp.ClientSession, n)
	for i := range out {
		// Each session its own connection pool, as separate agents have.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
		sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
			Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearer{testToken, tr}},
		}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { sess.Close() })
		out[i] = sess
	}
	return out
}

func benchEcho(b *testing.B, sess *mcp.ClientSession, msg string) {
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "test__echo", Arguments: map[string]any{"message": msg}})
	if err != nil {
		b.Fatal(err)
	}
	if res.IsError || len(res.Content) == 0 {
		b.Fatalf("echo of %q answered %+v", msg, res)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "Echo: "+msg {
		b.Fatalf("echo of %q answered %+v: another call's reply?", msg, res.Content[0])
	}
}

func BenchmarkProxiedCall(b *testing.B) {
	sess := benchSessions(b, 1)[0]
	for i := range 50 {
		benchEcho(b, sess, "warm"+strconv.Itoa(i))
	}
	b.ReportAllocs()
	g0 := goroutinesCreated()
	i := 0
	for b.Loop() {
		benchEcho(b, sess, "m"+strconv.Itoa(i))
		i++
	}
	b.ReportMetric(float64(goroutinesCreated()-g0)/float64(b.N), "goroutines/op")
}

// goroutinesCreated is how many goroutines the process has started: each
// is a hand-off and, when a processor is idle, a thread woken up, which on
// a busy machine costs more than the work it hands off.
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func BenchmarkProxiedCall8Sessions(b *testing.B) {
	sessions := benchSessions(b, 8)
	b.ReportAllocs()
	var next atomic.Int64
	g0 := goroutinesCreated()
	b.ResetTimer()
	var wg sync.WaitGroup
	for w, sess := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				benchEcho(b, sess, fmt.Sprintf("w%d-%d", w, i))
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(goroutinesCreated()-g0)/float64(b.N), "goroutines/op")
}
