package airlock_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The gateway benchmarks compare an echo call to server-everything made
// directly over stdio with the same call made through Airlock over
// Streamable HTTP, in the same run. Every reply is checked against its
// request, so a reply delivered to the wrong session fails the benchmark.
//
//	go test ./backend/airlock -run '^$' -bench Echo -benchtime 3000x

func directSession(b *testing.B) *mcp.ClientSession {
	cfg := testutil.EverythingServer(b, "everything")
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(cfg.Command, cfg.Args...)},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sess.Close() })
	return sess
}

func gatewaySessions(b *testing.B, n int) []*mcp.ClientSession {
	dir := b.TempDir()
	writeServers(b, dir, testutil.EverythingServer(b, "everything"))
	in := start(b, dir)
	allowAll(b, in)
	out := make([]*mcp.ClientSession, n)
	for i := range out {
		out[i] = connect(b, in)
	}
	waitTool(b, out[0], "everything__echo")
	return out
}

// callEcho makes one echo call and checks that the reply is its own.
func callEcho(b *testing.B, sess *mcp.ClientSession, tool, msg string) {
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"message": msg}})
	if err != nil {
		b.Fatal(err)
	}
	if got := textOf(res); got != "Echo: "+msg {
		b.Fatalf("reply %q to request %q: delivered to the wrong caller or mangled", got, msg)
	}
}

func reportLatencies(b *testing.B, lat []time.Duration) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) == 0 {
		return
	}
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

func runSequential(b *testing.B, sess *mcp.ClientSession, tool string) {
	for i := range 50 { // warm up JIT in node and connections
		callEcho(b, sess, tool, "warm"+strconv.Itoa(i))
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		callEcho(b, sess, tool, "m"+strconv.Itoa(i))
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	reportLatencies(b, lat)
}

func BenchmarkEchoDirectStdio(b *testing.B) {
	runSequential(b, directSession(b), "echo")
}

func BenchmarkEchoViaAirlock(b *testing.B) {
	runSequential(b, gatewaySessions(b, 1)[0], "everything__echo")
}

func runConcurrent(b *testing.B, sessions []*mcp.ClientSession, tool string) {
	var next atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	b.ResetTimer()
	t0 := time.Now()
	var wg sync.WaitGroup
	for w, sess := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := []time.Duration{}
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					break
				}
				s := time.Now()
				callEcho(b, sess, tool, fmt.Sprintf("w%d-%d", w, i))
				local = append(local, time.Since(s))
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(t0)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	reportLatencies(b, lat)
}

func BenchmarkEchoDirectStdio8Sessions(b *testing.B) {
	// Eight direct clients means eight server processes: the best a client
	// could do without a gateway.
	sessions := make([]*mcp.ClientSession, 8)
	for i := range sessions {
		sessions[i] = directSession(b)
	}
	runConcurrent(b, sessions, "echo")
}

func BenchmarkEchoViaAirlock8Sessions(b *testing.B) {
	runConcurrent(b, gatewaySessions(b, 8), "everything__echo")
}

// BenchmarkServeStartupAndRSS starts the real `airlock serve` binaries —
// the desktop build ($AIRLOCK_BIN) and the cgo-free headless build
// ($AIRLOCK_HEADLESS_BIN), both built by `go tool task bench` — with one
// downstream server, and measures the time until each answers on /mcp and its
// resident memory after 200 calls: all of it (RSS) and the process's own
// memory without mapped files such as shared libraries (anon). The desktop
// build hands `serve` to the headless build beside it (handoff.go);
// desktop-build-alone is the desktop build serving itself
// (AIRLOCK_HANDOFF=0), with GTK and WebKitGTK mapped.
func BenchmarkServeStartupAndRSS(b *testing.B) {
	for _, c := range []struct{ name, bin, env string }{
		{"desktop-build", "AIRLOCK_BIN", ""},
		{"desktop-build-alone", "AIRLOCK_BIN", "AIRLOCK_HANDOFF=0"},
		{"headless-build", "AIRLOCK_HEADLESS_BIN", ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			bin := os.Getenv(c.bin)
			if bin == "" {
				b.Skipf("set %s to the binary (go tool task bench does)", c.bin)
			}
			benchServe(b, bin, c.env)
		})
	}
}

func benchServe(b *testing.B, bin, env string) {
	var ready, rss, anon []float64
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		writeServers(b, dir, testutil.EverythingServer(b, "everything"))
		token := "alk_" + strings.Repeat("b", 43)
		os.WriteFile(filepath.Join(dir, "agent-token"), []byte(token+"\n"), 0o600)
		// A rule that allows the calls, added through the CLI as a user
		// would, before the start (so nothing waits for a live reload).
		if out, err := exec.Command(bin, "rules", "add", "--data-dir", dir, "--auto-approve").CombinedOutput(); err != nil {
			b.Fatalf("rules add: %v: %s", err, out)
		}
		addr := freeAddr(b)
		t0 := time.Now()
		cmd := exec.Command(bin, "serve", "--data-dir", dir, "--addr", addr)
		if env != "" {
			cmd.Env = append(os.Environ(), env)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		// Never leave a server behind, whatever fails below.
		b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		for {
			req, _ := http.NewRequest("POST", "http://"+addr+"/mcp", strings.NewReader("{}"))
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
				break
			}
			if time.Since(t0) > 20*time.Second {
				b.Fatal("airlock serve never answered")
			}
			time.Sleep(2 * time.Millisecond)
		}
		ready = append(ready, float64(time.Since(t0).Milliseconds()))
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp",
			HTTPClient: &http.Client{Transport: bearer{token}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		waitTool(b, sess, "everything__echo")
		for j := range 200 {
			callEcho(b, sess, "everything__echo", "rss"+strconv.Itoa(j))
		}
		total, private := rssKB(b, cmd.Process.Pid)
		rss = append(rss, float64(total)/1024)
		anon = append(anon, float64(private)/1024)
		sess.Close()
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}
	for _, v := range [][]float64{ready, rss, anon} {
		sort.Float64s(v)
	}
	b.ReportMetric(ready[len(ready)/2], "ready-ms")
	b.ReportMetric(rss[len(rss)/2], "RSS-MB")
	b.ReportMetric(anon[len(anon)/2], "anon-MB")
}

func freeAddr(b *testing.B) string {
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// rssKB returns the process's VmRSS and RssAnon in KiB.
func rssKB(b *testing.B, pid int) (total, anon int) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.Atoi(f[1])
		switch f[0] {
		case "VmRSS:":
			total = n
		case "RssAnon:":
			anon = n
		}
	}
	if total == 0 {
		b.Fatal("no VmRSS in /proc/PID/status")
	}
	return total, anon
}
