package gateway

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SupervisorOptions tune how downstream servers are kept alive. Zero values
// take the defaults in parentheses.
type SupervisorOptions struct {
	ConnectTimeout time.Duration // start + MCP handshake + first tools/list (30 s)
	CallTimeout    time.Duration // one tools/call when the server never answers (2 min)
	BackoffMin     time.Duration // first restart delay (200 ms)
	BackoffMax     time.Duration // longest restart delay (10 s)
	// MaxCrashes in a row (each within StableAfter of its start) mark a server
	// failed; it then waits for a manual restart (5).
	MaxCrashes  int
	StableAfter time.Duration // a run this long resets the crash count (30 s)
	StopGrace   time.Duration // SIGTERM → SIGKILL (3 s)
	StderrLines int           // kept for the UI (50)
	Logger      *slog.Logger
}

func (o *SupervisorOptions) defaults() {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&o.ConnectTimeout, 30*time.Second)
	set(&o.CallTimeout, 2*time.Minute)
	set(&o.BackoffMin, 200*time.Millisecond)
	set(&o.BackoffMax, 10*time.Second)
	set(&o.StableAfter, 30*time.Second)
	set(&o.StopGrace, 3*time.Second)
	if o.MaxCrashes <= 0 {
		o.MaxCrashes = 5
	}
	if o.StderrLines <= 0 {
		o.StderrLines = 50
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Supervisor owns the downstream servers: it starts them, restarts them with
// backoff after a crash, keeps their tool lists, and forwards calls.
type Supervisor struct {
	opts    SupervisorOptions
	version string

	mu      sync.RWMutex
	servers map[string]*downstream

	// progress routes downstream progress notifications (keyed by the token
	// Airlock put on the forwarded call) back to the caller.
	progressSeq atomic.Int64
	progress    sync.Map // progressKey → func(*mcp.ProgressNotificationParams)

	listeners    []func(SupervisorEvent)
	logListeners []func(server string, p *mcp.LoggingMessageParams)
}

// SupervisorEvent tells listeners that a server's status or tools changed.
type SupervisorEvent struct {
	Status       core.ServerStatus
	ToolsChanged bool
}

// NewSupervisor returns a supervisor with no servers.
func NewSupervisor(version string, opts SupervisorOptions) *Supervisor {
	opts.defaults()
	return &Supervisor{opts: opts, version: version, servers: map[string]*downstream{}}
}

// OnEvent registers fn to be called (synchronously, from the server's own
// goroutine) on every status or tool change. Register before Apply.
func (s *Supervisor) OnEvent(fn func(SupervisorEvent)) { s.listeners = append(s.listeners, fn) }

func (s *Supervisor) emit(ev SupervisorEvent) {
	for _, fn := range s.listeners {
		fn(ev)
	}
}

// Apply reconciles the running servers with cfgs: new ones start, removed or
// disabled ones stop, changed ones restart, unchanged ones are left alone.
func (s *Supervisor) Apply(cfgs []core.ServerConfig) {
	want := map[string]core.ServerConfig{}
	for _, c := range cfgs {
		want[c.ID] = c
	}
	s.mu.Lock()
	var stop []*downstream
	var start []*downstream
	for id, d := range s.servers {
		c, ok := want[id]
		if !ok || c.Disabled || !sameConfig(c, d.cfg) {
			stop = append(stop, d)
			delete(s.servers, id)
		}
	}
	for id, c := range want {
		if c.Disabled {
			continue
		}
		if _, ok := s.servers[id]; ok {
			continue
		}
		d := newDownstream(s, c)
		s.servers[id] = d
		start = append(start, d)
	}
	s.mu.Unlock()
	for _, d := range stop {
		d.stop()
		st := d.status()
		st.State = core.StateStopped
		st.Tools = nil
		s.emit(SupervisorEvent{Status: st, ToolsChanged: true})
	}
	for _, d := range start {
		go d.run()
	}
}

func sameConfig(a, b core.ServerConfig) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// Close stops every server.
func (s *Supervisor) Close() {
	s.mu.Lock()
	all := make([]*downstream, 0, len(s.servers))
	for id, d := range s.servers {
		all = append(all, d)
		delete(s.servers, id)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, d := range all {
		wg.Add(1)
		go func() { defer wg.Done(); d.stop() }()
	}
	wg.Wait()
}

// Status returns every server's status, sorted by id.
func (s *Supervisor) Status() []core.ServerStatus {
	s.mu.RLock()
	out := make([]core.ServerStatus, 0, len(s.servers))
	for _, d := range s.servers {
		out = append(out, d.status())
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// ServerStatus returns one server's status.
func (s *Supervisor) ServerStatus(id string) (core.ServerStatus, bool) {
	d := s.get(id)
	if d == nil {
		return core.ServerStatus{}, false
	}
	return d.status(), true
}

// Tools returns the tools of every running server.
func (s *Supervisor) Tools() []core.ToolInfo {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []core.ToolInfo
	for _, d := range s.servers {
		d.mu.Lock()
		out = append(out, d.tools...)
		d.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ExposedName < out[j].ExposedName })
	return out
}

// Restart stops and starts a server now, clearing a failed state.
func (s *Supervisor) Restart(id string) error {
	s.mu.Lock()
	d, ok := s.servers[id]
	if !ok {
		s.mu.Unlock()
		return core.Errorf(core.ENotFound, "server %q is not configured or is disabled", id)
	}
	nd := newDownstream(s, d.cfg)
	s.servers[id] = nd
	s.mu.Unlock()
	d.stop()
	go nd.run()
	return nil
}

// PID returns the process id of a stdio server (0 when not running).
func (s *Supervisor) PID(id string) int {
	if d := s.get(id); d != nil {
		return d.status().PID
	}
	return 0
}

func (s *Supervisor) get(id string) *downstream {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.servers[id]
}

// CallTool forwards a call to server. Arguments are passed through as raw
// JSON; onProgress, when not nil, receives the downstream's progress.
func (s *Supervisor) CallTool(ctx context.Context, server, tool string, args json.RawMessage, onProgress func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, error) {
	d := s.get(server)
	if d == nil {
		return nil, core.Errorf(core.ENotFound, "server %q is not configured", server)
	}
	sess := d.session()
	if sess == nil {
		st := d.status()
		msg := fmt.Sprintf("server %q is %s", server, st.State)
		if st.LastError != "" {
			msg += ": " + st.LastError
		}
		return nil, (&core.Error{Code: core.EUnavailable, Message: msg}).WithHint("see the Servers screen; a failed server restarts from there")
	}
	params := &mcp.CallToolParams{Name: tool}
	if len(args) > 0 {
		params.Arguments = args
	}
	if onProgress != nil {
		// Random, and bound to the server: one downstream server cannot
		// guess its way into another's calls.
		tok := fmt.Sprintf("airlock-%d-%s", s.progressSeq.Add(1), rand.Text())
		params.SetProgressToken(tok)
		s.progress.Store(progressKey{server, tok}, onProgress)
		defer s.progress.Delete(progressKey{server, tok})
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
	defer cancel()
	res, err := sess.CallTool(ctx, params)
	if err != nil {
		return nil, s.callError(ctx, server, tool, err)
	}
	return res, nil
}

type progressKey struct{ server, token string }

// codeRejectedByTransport is the SDK's code for a message its transport
// could not send: the connection, not the server, failed.
const codeRejectedByTransport = -32005

// callError says why a forwarded call failed, with a code: the server's own
// JSON-RPC error, a timeout, a cancellation, or a server that cannot be
// reached (its connection broke; the supervisor reconnects).
func (s *Supervisor) callError(ctx context.Context, server, tool string, err error) error {
	var wire *jsonrpc.Error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return core.Errorf(core.ETimeout, "server %q did not answer %s within %s", server, tool, s.opts.CallTimeout)
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &wire) && wire.Code != codeRejectedByTransport:
		return (&core.Error{Code: "downstream_error", Message: fmt.Sprintf("server %q answered %s with an error: %s", server, tool, wire.Message)})
	}
	return (&core.Error{Code: core.EUnavailable, Message: fmt.Sprintf("server %q cannot be reached: %v", server, err)}).
		WithHint("Airlock reconnects by itself; see the Servers screen")
}

func (s *Supervisor) routeProgress(server string, p *mcp.ProgressNotificationParams) {
	tok, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	if fn, ok := s.progress.Load(progressKey{server, tok}); ok {
		fn.(func(*mcp.ProgressNotificationParams))(p)
	}
}

// downstream is one supervised server. A Restart replaces it with a fresh one,
// so its fields never need resetting.
type downstream struct {
	sup *Supervisor
	cfg core.ServerConfig

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	state    string
	since    time.Time
	pid      int
	restarts int
	lastErr  string
	stderr   []string
	tools    []core.ToolInfo
	extras   lists // prompts and resources
	sess     *mcp.ClientSession
	proc     *exec.Cmd
}

func newDownstream(s *Supervisor, cfg core.ServerConfig) *downstream {
	ctx, cancel := context.WithCancel(context.Background())
	return &downstream{sup: s, cfg: cfg, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		state: core.StateStarting, since: time.Now()}
}

func (d *downstream) status() core.ServerStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	return core.ServerStatus{
		ID: d.cfg.ID, Transport: d.cfg.Transport(), State: d.state, PID: d.pid,
		Restarts: d.restarts, LastError: d.lastErr,
		StderrTail: append([]string{}, d.stderr...),
		Tools:      append([]core.ToolInfo{}, d.tools...),
		Since:      d.since,
	}
}

func (d *downstream) session() *mcp.ClientSession {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sess
}

func (d *downstream) setState(state, lastErr string, toolsChanged bool) {
	d.mu.Lock()
	d.state = state
	d.since = time.Now()
	if lastErr != "" {
		d.lastErr = lastErr
	}
	d.mu.Unlock()
	d.sup.emit(SupervisorEvent{Status: d.status(), ToolsChanged: toolsChanged})
}

// run keeps the server alive until stop: connect, wait for the connection to
// end, back off, again. Crashes in quick succession mark it failed.
func (d *downstream) run() {
	defer close(d.done)
	crashes := 0
	backoff := d.sup.opts.BackoffMin
	for {
		started := time.Now()
		err := d.connectAndServe()
		if d.ctx.Err() != nil {
			return
		}
		hadTools := d.clearSession()
		if time.Since(started) >= d.sup.opts.StableAfter {
			crashes, backoff = 0, d.sup.opts.BackoffMin
		}
		crashes++
		d.mu.Lock()
		d.restarts++
		d.mu.Unlock()
		msg := "connection ended"
		if err != nil {
			msg = err.Error()
		}
		if crashes >= d.sup.opts.MaxCrashes {
			what := "crashes"
			if d.cfg.Transport() != "stdio" {
				what = "failed connections"
			}
			d.setState(core.StateFailed, fmt.Sprintf("%s (gave up after %d %s in a row)", msg, crashes, what), hadTools)
			return
		}
		d.setState(core.StateRestarting, msg, hadTools)
		select {
		case <-d.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, d.sup.opts.BackoffMax)
	}
}

func (d *downstream) clearSession() (hadTools bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	hadTools = len(d.tools) > 0 || !d.extras.empty()
	d.sess, d.tools, d.extras, d.pid, d.proc = nil, nil, lists{}, 0, nil
	return hadTools
}

// connectAndServe starts the server, completes the MCP handshake, lists its
// tools and blocks until the connection ends.
func (d *downstream) connectAndServe() error {
	d.setState(core.StateStarting, "", false)
	transport, wait, err := d.transport()
	if err != nil {
		return err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "airlock", Version: d.sup.version}, &mcp.ClientOptions{
		// Deliberately no roots or sampling: Airlock does not offer them.
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(ctx context.Context, _ *mcp.ToolListChangedRequest) {
			go d.refreshTools()
		},
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { go d.refreshTools() },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { go d.refreshTools() },
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			d.sup.routeProgress(d.cfg.ID, req.Params)
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			d.sup.routeLog(d.cfg.ID, req.Params)
		},
	})
	connectCtx, cancel := context.WithTimeout(d.ctx, d.sup.opts.ConnectTimeout)
	defer cancel()
	// The SSE client keeps using the Connect context for its stream, so it
	// must live as long as the server does.
	sessCtx := connectCtx
	if d.cfg.Transport() == "sse" {
		sessCtx = d.ctx
	}
	sess, err := client.Connect(sessCtx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		wait()
		return fmt.Errorf("connect: %w", err)
	}
	tools, err := listTools(connectCtx, d.cfg.ID, sess)
	if err != nil {
		sess.Close()
		wait()
		return fmt.Errorf("list tools: %w", err)
	}
	extras, err := listExtras(connectCtx, sess)
	if err != nil {
		sess.Close()
		wait()
		return fmt.Errorf("list prompts and resources: %w", err)
	}
	d.mu.Lock()
	d.sess = sess
	d.tools = tools
	d.extras = extras
	d.state = core.StateRunning
	d.since = time.Now()
	d.mu.Unlock()
	d.sup.emit(SupervisorEvent{Status: d.status(), ToolsChanged: true})

	ended := make(chan error, 1)
	go func() { ended <- sess.Wait() }()
	select {
	case <-d.ctx.Done():
		sess.Close()
		wait()
		return nil
	case err := <-ended:
		werr := wait()
		if werr != nil {
			return werr
		}
		return err
	}
}

func (d *downstream) refreshTools() {
	sess := d.session()
	if sess == nil {
		return
	}
	ctx, cancel := context.WithTimeout(d.ctx, d.sup.opts.ConnectTimeout)
	defer cancel()
	tools, err := listTools(ctx, d.cfg.ID, sess)
	if err != nil {
		d.sup.opts.Logger.Warn("refresh tools", "server", d.cfg.ID, "err", err)
		return
	}
	extras, err := listExtras(ctx, sess)
	if err != nil {
		d.sup.opts.Logger.Warn("refresh prompts and resources", "server", d.cfg.ID, "err", err)
		return
	}
	d.mu.Lock()
	if d.sess != sess {
		d.mu.Unlock()
		return
	}
	d.tools = tools
	d.extras = extras
	d.mu.Unlock()
	d.sup.emit(SupervisorEvent{Status: d.status(), ToolsChanged: true})
}

func listTools(ctx context.Context, server string, sess *mcp.ClientSession) ([]core.ToolInfo, error) {
	var out []core.ToolInfo
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, toolInfo(server, t))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func toolInfo(server string, t *mcp.Tool) core.ToolInfo {
	ti := core.ToolInfo{ServerID: server, Name: t.Name, ExposedName: ExposedName(server, t.Name),
		Title: t.Title, Description: t.Description}
	if t.InputSchema != nil {
		ti.InputSchema, _ = json.Marshal(t.InputSchema)
	}
	if t.OutputSchema != nil {
		ti.OutputSchema, _ = json.Marshal(t.OutputSchema)
	}
	if a := t.Annotations; a != nil {
		ro, idem := a.ReadOnlyHint, a.IdempotentHint
		ti.Annotations = &core.ToolAnnotations{ReadOnly: &ro, Destructive: a.DestructiveHint, Idempotent: &idem, OpenWorld: a.OpenWorldHint}
	}
	return ti
}

// transport builds the MCP transport for the server. For stdio it starts
// the process; wait reaps it and reports how it ended.
func (d *downstream) transport() (mcp.Transport, func() error, error) {
	switch d.cfg.Transport() {
	case "http":
		return &mcp.StreamableClientTransport{Endpoint: d.cfg.URL, HTTPClient: headerClient(d.cfg.Headers), DisableStandaloneSSE: false},
			func() error { return nil }, nil
	case "sse":
		return &mcp.SSEClientTransport{Endpoint: d.cfg.URL, HTTPClient: headerClient(d.cfg.Headers)},
			func() error { return nil }, nil
	}
	cmd := exec.Command(d.cfg.Command, d.cfg.Args...)
	cmd.Env = os.Environ()
	for k, v := range d.cfg.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// Its own process group, so that stop reaches the children a launcher
	// such as npx or uvx starts.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", d.cfg.Command, err)
	}
	d.mu.Lock()
	d.pid = cmd.Process.Pid
	d.proc = cmd
	d.mu.Unlock()
	stderrDone := make(chan struct{})
	go d.readStderr(stderr, stderrDone)
	var once sync.Once
	var werr error
	wait := func() error {
		once.Do(func() {
			stdin.Close()
			exited := make(chan error, 1)
			go func() { <-stderrDone; exited <- cmd.Wait() }()
			select {
			case werr = <-exited:
			case <-time.After(d.sup.opts.StopGrace):
				syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
				select {
				case werr = <-exited:
				case <-time.After(d.sup.opts.StopGrace):
					syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
					werr = <-exited
				}
			}
			if werr != nil {
				werr = fmt.Errorf("process exited: %w", werr)
			}
		})
		return werr
	}
	return &mcp.IOTransport{Reader: stdout, Writer: stdin}, wait, nil
}

func (d *downstream) readStderr(r io.Reader, done chan<- struct{}) {
	defer close(done)
	// Lines are cut at 4 KiB, never stop the reading: a server whose
	// stderr pipe fills up blocks.
	br := bufio.NewReaderSize(r, 4096)
	for {
		chunk, isPrefix, err := br.ReadLine()
		if err != nil {
			return
		}
		line := string(chunk)
		if isPrefix {
			line += " …(cut)"
			for isPrefix && err == nil {
				_, isPrefix, err = br.ReadLine()
			}
		}
		d.mu.Lock()
		d.stderr = append(d.stderr, line)
		if n := len(d.stderr) - d.sup.opts.StderrLines; n > 0 {
			d.stderr = append(d.stderr[:0:0], d.stderr[n:]...)
		}
		d.mu.Unlock()
	}
}

// stop ends the server: stdin closed, then SIGTERM, then SIGKILL to its
// process group, each after StopGrace.
func (d *downstream) stop() {
	// Cancelling ends the session; connectAndServe then reaps the process
	// (stdin closed → SIGTERM → SIGKILL, StopGrace apart).
	d.cancel()
	select {
	case <-d.done:
	case <-time.After(3*d.sup.opts.StopGrace + d.sup.opts.ConnectTimeout):
	}
}

func headerClient(headers map[string]string) *http.Client {
	if len(headers) == 0 {
		return nil
	}
	return &http.Client{Transport: headerTransport{headers: headers, base: http.DefaultTransport}}
}

type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, os.ExpandEnv(v))
	}
	return t.base.RoundTrip(r)
}
