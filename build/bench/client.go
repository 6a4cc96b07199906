package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The client role: the orchestrator runs this program again with
// roleEnv=client, hands it a clientSpec on stdin and reads a clientResult
// from stdout. The client is its own process, as agents are: it shares no
// runtime, scheduler or connection pool with the gateway it measures.

// roleEnv selects the client role when set to "client".
const roleEnv = "AIRLOCK_BENCH_ROLE"

// Scenario kinds a client runs.
const (
	kindSeq    = "seq"    // one session, calls one after another
	kindConc   = "conc"   // N sessions sharing a fixed number of calls
	kindLoad   = "load"   // N sessions, each making M calls, all at once
	kindBridge = "bridge" // `airlock bridge` as a stdio child: start-up, RSS, p50
)

// endpoint is where a client's sessions connect: a command it spawns for
// every session (direct stdio, `airlock bridge`) or a Streamable HTTP URL.
type endpoint struct {
	Command []string `json:"command,omitempty"`
	URL     string   `json:"url,omitempty"`
	Token   string   `json:"token,omitempty"`
}

// clientSpec is one scenario for one client process.
type clientSpec struct {
	Kind     string   `json:"kind"`
	Target   endpoint `json:"target"`
	Tool     string   `json:"tool"`
	Sessions int      `json:"sessions"`
	// Calls is the total for kindSeq, kindConc and kindBridge, and the
	// number per session for kindLoad.
	Calls int `json:"calls"`
	// Warmup calls per session before timing starts (node's JIT, TCP
	// connections, the gateway's first-call work).
	Warmup   int    `json:"warmup"`
	Protocol string `json:"protocol"`
	// Nonce makes every message of this run unique, so a reply carrying
	// another request's message is recognised as misrouted.
	Nonce string `json:"nonce"`
	// Duration, when set, makes kindSeq and kindConc call until it has
	// passed instead of counting Calls (the profiling phase).
	Duration time.Duration `json:"duration,omitempty"`
}

// clientResult is what a client reports. Latencies are in microseconds.
type clientResult struct {
	OK        int     `json:"ok"`
	Errors    int     `json:"errors"`
	Misrouted int     `json:"misrouted"`
	Seconds   float64 `json:"seconds"` // wall time of the timed calls
	P50       float64 `json:"p50_us"`
	P99       float64 `json:"p99_us"`
	// FirstError and FirstMisroute describe the first of each, for the report.
	FirstError    string `json:"first_error,omitempty"`
	FirstMisroute string `json:"first_misroute,omitempty"`
	// CPUSeconds is the client process's user and system CPU time, set by
	// the orchestrator when the process has ended (not by the client).
	CPUSeconds float64 `json:"-"`
	// Bridge only: start to ready (the initialize answered through the
	// bridge), and the bridge process's memory after the calls.
	ReadyMs      float64 `json:"ready_ms,omitempty"`
	BridgeRSSKB  int     `json:"bridge_rss_kb,omitempty"`
	BridgePeakKB int     `json:"bridge_peak_kb,omitempty"`
}

// CallsPerSec is the rate of answered calls over the timed wall time.
func (r clientResult) CallsPerSec() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.OK) / r.Seconds
}

// runClient is the client role: spec on stdin, result on stdout.
func runClient(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	var spec clientSpec
	if err := json.NewDecoder(stdin).Decode(&spec); err != nil {
		return fmt.Errorf("read client spec: %w", err)
	}
	res, err := runScenario(ctx, spec)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(res)
}

func runScenario(ctx context.Context, spec clientSpec) (clientResult, error) {
	switch spec.Kind {
	case kindSeq:
		spec.Sessions = 1
		return runShared(ctx, spec)
	case kindConc:
		return runShared(ctx, spec)
	case kindLoad:
		return runLoad(ctx, spec)
	case kindBridge:
		return runBridge(ctx, spec)
	}
	return clientResult{}, fmt.Errorf("unknown scenario kind %q", spec.Kind)
}

// bearer adds the agent token to every request of one session's client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token == "" {
		return b.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// session is one agent session with what its transport started.
type session struct {
	*mcp.ClientSession
	cmd *exec.Cmd // the spawned process for stdio endpoints
	tr  *http.Transport
}

func (s *session) close() {
	s.ClientSession.Close()
	if s.tr != nil {
		s.tr.CloseIdleConnections()
	}
}

// connect opens one session. Every HTTP session gets its own http.Transport
// and so its own connection pool, as separate agent processes would; every
// stdio session spawns its own process.
func connect(ctx context.Context, ep endpoint, protocol string) (*session, error) {
	// Capabilities set deliberately: the SDK's default advertises roots,
	// which makes servers send roots/list requests no agent here answers.
	c := mcp.NewClient(&mcp.Implementation{Name: "airlock-bench", Version: "1"},
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	s := &session{}
	var t mcp.Transport
	if len(ep.Command) > 0 {
		s.cmd = exec.Command(ep.Command[0], ep.Command[1:]...)
		// server-everything does not exit when stdin closes; do not wait
		// the SDK's default 5 s for it.
		t = &mcp.CommandTransport{Command: s.cmd, TerminateDuration: 200 * time.Millisecond}
	} else {
		s.tr = http.DefaultTransport.(*http.Transport).Clone()
		t = &mcp.StreamableClientTransport{Endpoint: ep.URL, HTTPClient: &http.Client{Transport: bearer{ep.Token, s.tr}}}
	}
	cs, err := c.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		return nil, err
	}
	s.ClientSession = cs
	return s, nil
}

// connectAll opens n sessions, at most 16 at a time (connection set-up is not
// what is measured, and 200 simultaneous handshakes only measure the
// listen backlog).
func connectAll(ctx context.Context, ep endpoint, protocol string, n int) ([]*session, error) {
	out := make([]*session, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			defer cancel()
			out[i], errs[i] = connect(cctx, ep, protocol)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		closeAll(out)
		return nil, fmt.Errorf("connect %d sessions: %w", n, err)
	}
	return out, nil
}

func closeAll(sessions []*session) {
	var wg sync.WaitGroup
	for _, s := range sessions {
		if s != nil {
			wg.Add(1)
			go func() { defer wg.Done(); s.close() }()
		}
	}
	wg.Wait()
}

// outcome of one call.
type outcome int

const (
	callOK outcome = iota
	callError
	callMisrouted
)

// echo calls the echo tool with msg and checks that the reply is this
// request's own: a gateway that mixes up sessions or requests answers with
// another message.
func echo(ctx context.Context, s *session, tool, msg string) (outcome, string) {
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	res, err := s.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"message": msg}})
	if err != nil {
		return callError, err.Error()
	}
	text := textOf(res)
	if res.IsError {
		return callError, "tool error: " + text
	}
	if text != "Echo: "+msg {
		return callMisrouted, fmt.Sprintf("sent %q, got %q", msg, text)
	}
	return callOK, ""
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// tally collects outcomes and latencies from many goroutines.
type tally struct {
	mu  sync.Mutex
	res clientResult
	lat []time.Duration
}

func (t *tally) add(o outcome, detail string, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch o {
	case callOK:
		t.res.OK++
		t.lat = append(t.lat, d)
	case callError:
		t.res.Errors++
		if t.res.FirstError == "" {
			t.res.FirstError = detail
		}
	case callMisrouted:
		t.res.Misrouted++
		if t.res.FirstMisroute == "" {
			t.res.FirstMisroute = detail
		}
	}
}

func (t *tally) result(elapsed time.Duration) clientResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.res
	r.Seconds = elapsed.Seconds()
	r.P50, r.P99 = percentiles(t.lat)
	return r
}

// percentiles returns p50 and p99 in microseconds (nearest rank).
func percentiles(lat []time.Duration) (p50, p99 float64) {
	if len(lat) == 0 {
		return 0, 0
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	return us(s[(len(s)-1)*50/100]), us(s[(len(s)-1)*99/100])
}

func warm(ctx context.Context, sessions []*session, spec clientSpec) {
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range spec.Warmup {
				echo(ctx, s, spec.Tool, fmt.Sprintf("%s-warm-s%d-%d", spec.Nonce, i, j))
			}
		}()
	}
	wg.Wait()
}

// runShared runs spec.Calls calls over spec.Sessions sessions, each session
// taking the next call as soon as its previous one is answered.
func runShared(ctx context.Context, spec clientSpec) (clientResult, error) {
	sessions, err := connectAll(ctx, spec.Target, spec.Protocol, spec.Sessions)
	if err != nil {
		return clientResult{}, err
	}
	defer closeAll(sessions)
	warm(ctx, sessions, spec)

	var t tally
	t.lat = make([]time.Duration, 0, spec.Calls)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	more := func(n int64) bool {
		if spec.Duration > 0 {
			return time.Since(start) < spec.Duration
		}
		return n <= int64(spec.Calls)
	}
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := next.Add(1)
				if !more(n) || ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				o, detail := echo(ctx, s, spec.Tool, fmt.Sprintf("%s-s%d-c%d", spec.Nonce, i, n))
				t.add(o, detail, time.Since(t0))
			}
		}()
	}
	wg.Wait()
	return t.result(time.Since(start)), ctx.Err()
}

// runLoad opens spec.Sessions sessions, then releases them together; each
// makes spec.Calls calls in sequence.
func runLoad(ctx context.Context, spec clientSpec) (clientResult, error) {
	sessions, err := connectAll(ctx, spec.Target, spec.Protocol, spec.Sessions)
	if err != nil {
		return clientResult{}, err
	}
	defer closeAll(sessions)
	warm(ctx, sessions, spec)

	var t tally
	t.lat = make([]time.Duration, 0, spec.Sessions*spec.Calls)
	release := make(chan struct{})
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			for c := range spec.Calls {
				if ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				o, detail := echo(ctx, s, spec.Tool, fmt.Sprintf("%s-s%d-c%d", spec.Nonce, i, c))
				t.add(o, detail, time.Since(t0))
			}
		}()
	}
	start := time.Now()
	close(release)
	wg.Wait()
	return t.result(time.Since(start)), ctx.Err()
}

// runBridge starts `airlock bridge` as an MCP client would (a stdio child),
// times start to ready (the first initialize answered through it), makes
// spec.Calls calls and reads the bridge's memory.
func runBridge(ctx context.Context, spec clientSpec) (clientResult, error) {
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	t0 := time.Now()
	s, err := connect(cctx, spec.Target, spec.Protocol)
	cancel()
	if err != nil {
		return clientResult{}, fmt.Errorf("connect through airlock bridge: %w", err)
	}
	ready := time.Since(t0)
	defer s.close()
	warm(ctx, []*session{s}, spec)

	var t tally
	start := time.Now()
	for n := range spec.Calls {
		c0 := time.Now()
		o, detail := echo(ctx, s, spec.Tool, fmt.Sprintf("%s-bridge-c%d", spec.Nonce, n))
		t.add(o, detail, time.Since(c0))
	}
	res := t.result(time.Since(start))
	res.ReadyMs = float64(ready.Microseconds()) / 1e3
	mem, err := readMem(s.cmd.Process.Pid)
	if err != nil {
		return clientResult{}, fmt.Errorf("bridge memory: %w", err)
	}
	res.BridgeRSSKB, res.BridgePeakKB = mem.RSS, mem.Peak
	return res, ctx.Err()
}
