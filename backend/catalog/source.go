package catalog

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/proc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// source is one supervised tool source: a downstream server (a process or
// a URL) or an in-process server. A Restart replaces it with a fresh one, so
// its fields never need resetting.
type source struct {
	cat *Catalog
	cfg core.ServerConfig
	// added is the source's place in the order servers were added.
	added uint64
	// inproc is the server of an in-process source.
	inproc *mcp.Server
	// secrets takes the secrets of its URL out of the text of its errors.
	secrets redactor

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	// up is closed the first time the source is running (after its tools
	// are in the snapshot).
	up     chan struct{}
	upOnce sync.Once

	mu       sync.Mutex
	state    string
	since    time.Time
	pid      int
	restarts int
	lastErr  string          // why it last stopped or failed to start
	stderr   *proc.Tail      // what a process source last wrote to stderr
	tools    []core.ToolInfo // as the server lists them
	lists    lists           // prompts and resources
	sess     *mcp.ClientSession
	// agentErr is lastErr as agents are told it: without the last line the
	// process wrote to stderr (see describe).
	agentErr string
	// startSecs and callSecs are its own timeouts (0: the catalog's).
	startSecs, callSecs atomic.Int64
	// inflight are the requests forwarded to the source and not answered
	// yet, so that a sampling or elicitation request the source makes can
	// be relayed to the agent whose request it is handling.
	// Each is ended (errSourceStopped) when the source stops.
	inflight map[*core.Request]context.CancelCauseFunc
	// relist makes the listings of unknown resources' reads go one at a
	// time (relistResources).
	relist sync.Mutex
	// ended is when each agent session's last request at the source
	// ended (for logSource; entries older than logWindow are dropped).
	ended map[logWhom]time.Time
}

func newSource(c *Catalog, cfg core.ServerConfig, inproc *mcp.Server) *source {
	ctx, cancel := context.WithCancel(context.Background())
	d := &source{cat: c, cfg: cfg, inproc: inproc, secrets: newRedactor(cfg.URL), ctx: ctx, cancel: cancel, done: make(chan struct{}), up: make(chan struct{}),
		state: core.StateStarting, since: time.Now(), inflight: map[*core.Request]context.CancelCauseFunc{}, ended: map[logWhom]time.Time{}}
	d.setTimeouts(cfg)
	return d
}

func (d *source) builtIn() bool { return d.inproc != nil }

// startTimeout is how long the source may take to start and list what it
// offers: its own startTimeout, or the catalog's.
func (d *source) startTimeout() time.Duration {
	if n := d.startSecs.Load(); n > 0 {
		return time.Duration(n) * time.Second
	}
	return d.cat.opts.ConnectTimeout
}

const startTimeoutHint = `; if it is slow to start (a first "npx -y" downloads its package), raise its start timeout ("startTimeout" in seconds in servers.json, or Edit on the Servers screen)`

// callTimeout is how long one request to the source may go unanswered:
// its own callTimeout, or the catalog's.
func (d *source) callTimeout() time.Duration {
	if n := d.callSecs.Load(); n > 0 {
		return time.Duration(n) * time.Second
	}
	return d.cat.opts.CallTimeout
}

// setTimeouts applies cfg's timeouts: a change of them alone does not
// restart the source (found by a regression test: raising the call
// timeout, as the timeout error advises, killed the call still running).
func (d *source) setTimeouts(cfg core.ServerConfig) {
	d.startSecs.Store(int64(cfg.StartTimeout))
	d.callSecs.Store(int64(cfg.CallTimeout))
}

// errSourceStopped is the cause of the context of a request whose source
// was stopped or restarted while it ran.
type errSourceStopped struct {
	server string
	gone   string // "removed" or "disabled" when it does not start again
}

func (e *errSourceStopped) Error() string { return "server " + e.server + " stopped" }

// callTimeoutError is the cause of a request's context that ran out of
// its call timeout.
type callTimeoutError struct{ after time.Duration }

func (e *callTimeoutError) Error() string { return fmt.Sprintf("no answer within %s", e.after) }

// callDeadline returns ctx ended after the source's call timeout, with a
// *callTimeoutError as its cause; still starts the count again (the source
// said it is working on the request), stop releases the timer.
func (d *source) callDeadline(ctx context.Context) (_ context.Context, still, stop func(), cancel context.CancelCauseFunc) {
	t := d.callTimeout()
	ctx, cancel = context.WithCancelCause(ctx)
	timer := time.AfterFunc(t, func() { cancel(&callTimeoutError{t}) })
	var done atomic.Bool
	still = func() {
		if !done.Load() && ctx.Err() == nil {
			timer.Reset(t)
		}
	}
	return ctx, still, func() { done.Store(true); timer.Stop(); cancel(nil) }, cancel
}

func (d *source) status() core.ServerStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	tools := make([]core.ToolInfo, len(d.tools))
	for i, t := range d.tools {
		t.ExposedName = exposed(d.cfg, t.Name)
		tools[i] = t
	}
	st := core.ServerStatus{
		ID: d.cfg.ID, Transport: d.cfg.Transport(), BuiltIn: d.builtIn(), State: d.state, PID: d.pid,
		Restarts: d.restarts, LastError: d.lastErr,
		StderrTail: d.stderrLines(),
		Tools:      tools,
		Since:      d.since,
	}
	if d.sess != nil {
		st.Instructions = instructionsOf(d.sess)
	}
	return st
}

// stderrLines is what the process last wrote to stderr (d.mu held).
func (d *source) stderrLines() []string {
	if d.stderr == nil {
		return []string{}
	}
	return d.stderr.Lines()
}

func (d *source) session() *mcp.ClientSession {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sess
}

// agentError is why the source last stopped or failed to start, as agents
// are told it.
func (d *source) agentError() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.agentErr
}

// setState moves the source to state; why, when it is not zero, is why.
func (d *source) setState(state string, why failure, listsChanged bool) {
	d.mu.Lock()
	d.state = state
	d.since = time.Now()
	if why.status != "" {
		d.lastErr, d.agentErr = why.status, why.agents
	}
	d.mu.Unlock()
	d.cat.changed(d, listsChanged)
}

// failure is why a source stopped or could not start: as its status shows
// it to the person, and as agents are told it.
type failure struct{ status, agents string }

// describe is err as a failure of the source. Both texts are without the
// secrets of the source's URL, which every agent would learn (and could
// then call the server around Airlock's rules and audit). What agents are
// told also leaves out the last line the process wrote to stderr: that is
// the server's own log, which may hold anything (a key it was given, a
// path, another agent's data), and every agent may call the server; the
// person sees it on the Servers screen, in the status and in the stderr
// tail.
func (d *source) describe(err error) failure {
	status := err.Error()
	agents := status
	if n := (*stderrNoted)(nil); errors.As(err, &n) {
		agents = strings.Replace(status, n.suffix(), "", 1)
	}
	return failure{d.secrets.redact(status), d.secrets.redact(agents)}
}

// with is f with the same note added to both texts.
func (f failure) with(format string, args ...any) failure {
	note := fmt.Sprintf(format, args...)
	return failure{f.status + note, f.agents + note}
}

// run keeps the source alive until stop: connect, wait for the connection
// to end, back off, again. A start that never became ready (it failed, or
// hung until the connect timeout) and a run that ended soon after it
// became ready both count as crashes; MaxCrashes in a row mark a process
// source failed, and the backoff doubles after each (a URL source is tried
// again for as long as it is configured).
func (d *source) run() {
	defer close(d.done)
	opts := &d.cat.opts
	crashes := 0
	backoff := opts.BackoffMin
	for {
		ready, err := d.connectAndServe()
		if d.ctx.Err() != nil {
			return
		}
		hadLists := d.clearSession()
		if !ready.IsZero() && time.Since(ready) >= opts.StableAfter {
			crashes, backoff = 0, opts.BackoffMin
		}
		crashes++
		d.mu.Lock()
		d.restarts++
		d.mu.Unlock()
		why := failure{"connection ended", "connection ended"}
		if err != nil {
			why = d.describe(err)
		}
		// A server Airlock reaches by URL is not Airlock's to run: one that
		// is down (not up yet at login, restarting) is tried again at the
		// longest backoff for as long as it is configured (found by a
		// new-user test: one that came up seconds after Airlock was given
		// up for good, with a hint that it had crashed).
		if crashes >= opts.MaxCrashes && d.cfg.Transport() == core.TransportStdio {
			what := "crashes"
			if ready.IsZero() {
				what = "failed starts"
			}
			d.setState(core.StateFailed, why.with(" (gave up after %d %s in a row)", crashes, what), hadLists)
			return
		}
		d.setState(core.StateRestarting, why.with(" (retrying in %s)", backoff.Round(time.Millisecond)), hadLists)
		select {
		case <-d.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, opts.BackoffMax)
	}
}

func (d *source) clearSession() (hadLists bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	hadLists = len(d.tools) > 0 || !d.lists.empty()
	d.sess, d.tools, d.lists, d.pid = nil, nil, lists{}, 0
	return hadLists
}

// connectAndServe starts the source, completes the MCP handshake, lists its
// tools, prompts and resources, and blocks until the connection ends. ready
// is when it became ready (zero when it never did).
func (d *source) connectAndServe() (ready time.Time, err error) {
	d.setState(core.StateStarting, failure{}, false)
	transport, wait, err := d.transport()
	if err != nil {
		return time.Time{}, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: AirlockServerName, Version: d.cat.version}, &mcp.ClientOptions{
		// Sampling and elicitation are relayed to the agent whose request
		// the source is handling. Roots are not offered: a source is shared
		// by every agent, and roots belong to one (a server such as
		// server-filesystem would take one agent's folders as everyone's).
		// A server that asks anyway is refused with the reason
		// (serverRequests, the client's receiving middleware).
		// A server's tool result is handed on as it came (SDK patch):
		// Airlock reads only whether it is an error unless it must change
		// it. Airlock's own servers are read whole (their refusals carry
		// a reason code in _meta).
		VerbatimToolResults: !d.builtIn(),
		// An elicitation's answer goes back as the agent's user gave it,
		// without the schema's defaults (SDK patch; see the gateway's
		// server options).
		KeepElicitationContent: true,
		Capabilities: &mcp.ClientCapabilities{
			Sampling:    &mcp.SamplingCapabilities{},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		},
		CreateMessageHandler: func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			res, err := d.relay(ctx, core.KindSampling, req.Params)
			if err != nil {
				return nil, err
			}
			return res.(*mcp.CreateMessageResult), nil
		},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			res, err := d.relay(ctx, core.KindElicitation, req.Params)
			if err != nil {
				return nil, err
			}
			return res.(*mcp.ElicitResult), nil
		},
		ElicitationCompleteHandler: func(ctx context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			d.cat.elicitationComplete(ctx, d.cfg.ID, req.Params)
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			d.cat.routeUpdated(d.cfg.ID, req.Params)
		},
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { go d.refresh() },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { go d.refresh() },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { go d.refresh() },
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			d.cat.routeProgress(d.cfg.ID, req.Params)
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			d.cat.routeLog(d.cfg.ID, req.Params, d.logSource())
		},
	})
	client.AddReceivingMiddleware(serverRequests)
	startTimeout := d.startTimeout()
	connectCtx, cancel := context.WithTimeout(d.ctx, startTimeout)
	defer cancel()
	// The SSE client keeps using the Connect context for its stream, so it
	// must live as long as the source does.
	sessCtx := connectCtx
	if d.cfg.Transport() == core.TransportSSE {
		sessCtx = d.ctx
	}
	sess, err := client.Connect(sessCtx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		werr := wait()
		var bad *badOutputError
		if connectCtx.Err() != nil && d.ctx.Err() == nil {
			return time.Time{}, fmt.Errorf("did not become ready within %s%s", startTimeout, startTimeoutHint)
		}
		if !errors.As(err, &bad) {
			// The handshake may fail on the broken connection before the
			// read's own error reaches it: what the process wrote says
			// why (found by CI, once: "killed by signal terminated").
			if st, ok := transport.(*stdioTransport); ok {
				if line := st.tap.badLine(); line != nil {
					bad = &badOutputError{line: line, err: err}
				}
			}
		}
		if bad != nil {
			// Airlock stopped the process after it broke the handshake:
			// its exit status would only say so.
			return time.Time{}, d.withStderr(fmt.Errorf("%w before it answered initialize; %s", bad, badOutputHint))
		}
		if werr != nil {
			// Its exit status and last words say more than the EOF the
			// handshake saw.
			return time.Time{}, d.withStderr(fmt.Errorf("%w before it answered initialize", werr))
		}
		return time.Time{}, d.withStderr(fmt.Errorf("connect: %w", err))
	}
	if info := sess.InitializeResult().ServerInfo; info != nil && info.Name == AirlockServerName && d.cfg.Transport() != core.TransportInProcess {
		// Airlock itself (its URL, or a bridge to it) would list its own
		// tools again, prefixed, at every listing: without end.
		d.closeSession(sess, wait)
		return time.Time{}, fmt.Errorf("this server is an Airlock (itself, or another one): Airlock does not proxy an Airlock, whose tools would come back to it prefixed, without end; remove the server")
	}
	tools, ls, err := d.list(connectCtx, sess)
	if err != nil {
		d.closeSession(sess, wait)
		return time.Time{}, err
	}
	if caps := sess.InitializeResult().Capabilities; caps != nil && caps.Logging != nil {
		// Take every message; each agent session filters by its own level.
		if err := sess.SetLoggingLevel(connectCtx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			d.cat.opts.Logger.Warn("set the logging level of a source", "server", d.cfg.ID, "err", d.secrets.redact(err.Error()))
		}
	}
	d.resubscribe(connectCtx, sess)
	// Its lists are in the snapshot before its state says running: a
	// request made on seeing "running" finds its tools and prompts.
	d.mu.Lock()
	d.sess, d.tools, d.lists = sess, tools, ls
	d.mu.Unlock()
	d.cat.rebuild()
	d.mu.Lock()
	d.state = core.StateRunning
	d.since = time.Now()
	d.lastErr, d.agentErr = "", ""
	ready = d.since
	d.mu.Unlock()
	d.cat.changed(d, true)
	d.upOnce.Do(func() { close(d.up) })

	ended := make(chan error, 1)
	go func() { ended <- sess.Wait() }()
	select {
	case <-d.ctx.Done():
		d.closeSession(sess, wait)
		return ready, nil
	case err := <-ended:
		werr := wait()
		// Among the server's own lines, which the Servers screen keeps
		// across restarts, how it ended: a crash is told from a restart
		// someone asked for (found by a new-user test: after a kill the
		// screen said "1 restarts" and nothing else).
		if werr != nil {
			d.stderrLine("[airlock] it ended by itself: " + werr.Error())
		} else if !errors.Is(err, errHungStdin) {
			d.stderrLine("[airlock] it ended by itself: " + cmp.Or(errText(err), "it closed its connection"))
		}
		if errors.Is(err, errHungStdin) {
			// Its status shows the reason only until it runs again: the
			// Servers screen keeps it among the server's own lines.
			d.stderrLine("[airlock] " + errHungStdin.Error())
			return ready, err
		}
		if bad := (*badOutputError)(nil); errors.As(err, &bad) {
			return ready, fmt.Errorf("%w; %s", bad, badOutputHint)
		}
		if werr != nil {
			return ready, werr
		}
		return ready, err
	}
}

// closeSession ends the session with the source, then its process (wait).
// Closing the session waits for the requests under way, and a write to a
// process that stopped reading its stdin never ends: after the stop grace,
// wait goes ahead anyway, closing stdin and stopping the process, which
// ends that write (found by an interop test: a restart or a stop of
// Airlock waited for ever, and the process outlived it).
func (d *source) closeSession(sess *mcp.ClientSession, wait func() error) {
	closed := make(chan struct{})
	go func() {
		sess.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(d.cat.opts.StopGrace):
		d.cat.opts.Logger.Warn("a server's session did not close in time; stopping its process", "server", d.cfg.ID)
	}
	wait()
}

// list reads the source's tools, prompts and resources.
func (d *source) list(ctx context.Context, sess *mcp.ClientSession) ([]core.ToolInfo, lists, error) {
	tools, err := listTools(ctx, d.cfg.ID, sess)
	if err != nil {
		return nil, lists{}, fmt.Errorf("list tools: %w", err)
	}
	ls, err := listExtras(ctx, sess)
	if err != nil {
		return nil, lists{}, fmt.Errorf("list prompts and resources: %w", err)
	}
	return tools, ls, nil
}

// refresh rereads the lists after the source said they changed.
func (d *source) refresh() {
	sess := d.session()
	if sess == nil {
		return
	}
	ctx, cancel := context.WithTimeout(d.ctx, d.startTimeout())
	defer cancel()
	tools, ls, err := d.list(ctx, sess)
	if err != nil {
		d.cat.opts.Logger.Warn("refresh lists", "server", d.cfg.ID, "err", d.secrets.redact(err.Error()))
		return
	}
	d.mu.Lock()
	if d.sess != sess {
		d.mu.Unlock()
		return
	}
	d.tools, d.lists = tools, ls
	d.mu.Unlock()
	d.cat.changed(d, true)
}

func listTools(ctx context.Context, server string, sess *mcp.ClientSession) ([]core.ToolInfo, error) {
	if caps := sess.InitializeResult().Capabilities; caps == nil || caps.Tools == nil {
		return nil, nil
	}
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
	ti := core.ToolInfo{ServerID: server, Name: t.Name, Title: t.Title, Description: t.Description}
	if t.InputSchema != nil {
		ti.InputSchema, _ = json.Marshal(t.InputSchema)
	}
	if t.OutputSchema != nil {
		ti.OutputSchema, _ = json.Marshal(t.OutputSchema)
	}
	if a := t.Annotations; a != nil {
		ro, idem := a.ReadOnlyHint, a.IdempotentHint
		ti.Annotations = &core.ToolAnnotations{Title: a.Title, ReadOnly: &ro, Destructive: a.DestructiveHint, Idempotent: &idem, OpenWorld: a.OpenWorldHint}
	}
	if len(t.Meta) > 0 {
		ti.Meta = t.Meta
	}
	if len(t.Icons) > 0 {
		ti.Icons, _ = json.Marshal(t.Icons)
	}
	if len(t.Execution) > 0 {
		ti.Execution = t.Execution
	}
	return ti
}

// transport builds the MCP transport for the source. For stdio it starts
// the process; wait reaps it and reports how it ended.
func (d *source) transport() (mcp.Transport, func() error, error) {
	noWait := func() error { return nil }
	switch d.cfg.Transport() {
	case core.TransportInProcess:
		ct, st := InProcessTransports()
		ss, err := d.inproc.Connect(d.ctx, st, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("start in-process server: %w", err)
		}
		return ct, func() error { ss.Close(); return nil }, nil
	case core.TransportHTTP:
		return &mcp.StreamableClientTransport{Endpoint: d.cfg.URL, HTTPClient: headerClient(d.cfg.Headers)}, noWait, nil
	case core.TransportSSE:
		return &mcp.SSEClientTransport{Endpoint: d.cfg.URL, HTTPClient: headerClient(d.cfg.Headers)}, noWait, nil
	}
	return d.startProcess()
}

func (d *source) startProcess() (mcp.Transport, func() error, error) {
	env := os.Environ()
	for k, v := range d.cfg.Env {
		env = append(env, k+"="+v)
	}
	d.mu.Lock()
	if d.stderr == nil {
		// Lines are cut at 4 KiB; the writer never blocks the server.
		d.stderr = proc.NewTail(d.cat.opts.StderrLines, 4096)
	}
	tail := d.stderr
	d.mu.Unlock()
	// proc starts it in its own process group, so that stopping it reaches
	// the children a launcher such as npx or uvx starts.
	spec := proc.Spec{
		Path: d.cfg.Command, Args: d.cfg.Args, Env: env,
		StdinPipe: true, StdoutPipe: true, Stderr: tail,
	}
	if d.cfg.Sandbox {
		if spec.Restrict = d.cat.opts.Sandbox; spec.Restrict == nil {
			return nil, nil, errors.New("it is set to run in a sandbox, and Airlock has none to give it")
		}
	}
	p, err := proc.Start(context.Background(), spec)
	if err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", d.cfg.Command, err)
	}
	d.mu.Lock()
	d.pid = p.PID()
	d.mu.Unlock()
	grace := d.cat.opts.StopGrace
	var once sync.Once
	var werr error
	wait := func() error {
		once.Do(func() {
			// Closing stdin asks a stdio server to exit; SIGTERM and then
			// SIGKILL follow, each after the grace period.
			p.Stdin().Close()
			var ex proc.Exit
			select {
			case <-p.Done():
				ex = p.Wait()
			case <-time.After(grace):
				ex = p.Stop(grace)
			}
			p.Stdout().Close()
			if ex.Err != nil {
				werr = fmt.Errorf("process exited: %w", ex.Err)
			} else if ex.Code != 0 || ex.Signal != 0 {
				werr = fmt.Errorf("process exited (%s)", ex)
			}
		})
		return werr
	}
	logged := 0
	onJunk := func(line []byte) {
		// Shown with what it wrote to stderr (the Servers screen), and
		// logged (the first few): skipped, as MCP clients skip it.
		tail.AddLine("[stdout, not MCP, skipped] " + strings.ToValidUTF8(strings.TrimRight(string(line), "\r"), "\uFFFD"))
		if logged++; logged > 3 {
			return
		}
		d.cat.opts.Logger.Warn("a server wrote a line on stdout that is not MCP; it is skipped ("+badOutputHint+")",
			"server", d.cfg.ID, "line", strings.ToValidUTF8(string(line[:min(len(line), quoteMax)]), "\uFFFD"))
	}
	return newStdioTransport(p.Stdout(), p.Stdin(), onJunk, d.callTimeout()), wait, nil
}

// stderrLine adds line to what the Servers screen shows of the server's
// stderr.
func (d *source) stderrLine(line string) {
	if tail := d.stderrTail(); tail != nil {
		tail.AddLine(line)
	}
}

// stderrTail is the tail of the process's stderr lines, nil before it
// started.
func (d *source) stderrTail() *proc.Tail {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stderr
}

// withStderr is err with the last informative line the process wrote to
// stderr (a crash usually says why there), or err when it wrote none.
func (d *source) withStderr(err error) error {
	tail := d.stderrTail()
	if tail == nil {
		return err
	}
	if l := lastInformative(tail.Lines()); l != "" {
		return &stderrNoted{err: err, line: l}
	}
	return err
}

// stderrNoted is an error of a process source followed by the last line
// the process wrote to stderr, which is for the person only (describe).
type stderrNoted struct {
	err  error
	line string
}

func (e *stderrNoted) Error() string  { return e.err.Error() + e.suffix() }
func (e *stderrNoted) Unwrap() error  { return e.err }
func (e *stderrNoted) suffix() string { return "; stderr: " + e.line }

// lastInformative is the last line of stderr that may say why a process
// ended, "" when none does.
func lastInformative(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !uninformative(l) {
			return l
		}
	}
	return ""
}

// uninformative reports whether a stderr line says nothing of why a
// process ended: the version Node.js prints after a stack trace, a stack
// frame, a line of stdout Airlock skipped (found by a new-user test: the
// status ended with "stderr: Node.js v20.20.2").
func uninformative(line string) bool {
	if strings.Trim(line, "{}[]()^,; ") == "" {
		return true // the end of a printed object, a caret
	}
	for _, p := range []string{"Node.js v", "at ", "[stdout, not MCP, skipped]", "errno:", "code:", "syscall:", "throw ", "node:"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	// Writing to the pipe Airlock closed: a consequence of the end, not
	// its cause (found by a regression test).
	return strings.Contains(line, "EPIPE")
}

// stop ends the source: for a process, stdin closed, then SIGTERM, then
// SIGKILL to its process group, each after StopGrace.
func (d *source) stop() { d.stopFor("") }

// stopFor is stop, saying why the source does not start again ("removed",
// "disabled"; "" when it does).
func (d *source) stopFor(gone string) {
	d.cancel()
	// Its requests still running end now, saying why, rather than at
	// their timeout (found by a regression test: a call cut by a restart
	// reported that the server did not answer in time).
	d.mu.Lock()
	for _, cancel := range d.inflight {
		cancel(&errSourceStopped{d.cfg.ID, gone})
	}
	d.mu.Unlock()
	select {
	case <-d.done:
	case <-time.After(3*d.cat.opts.StopGrace + d.startTimeout()):
	}
}

// errText is err's text, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
