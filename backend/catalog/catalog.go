// Package catalog is the catalogue of tool sources: the downstream MCP
// servers (processes, Streamable HTTP and SSE URLs) and Airlock's own
// in-process servers (its tools, the built-in file and shell servers),
// behind one interface. It supervises them alike — start, list, restart with
// backoff, mark failed — keeps an immutable snapshot of what they offer
// under the names agents see, routes a request to the source that serves
// it, and dispatches it there.
//
// It imports core and the MCP SDK only. The pipeline's route and dispatch
// stages are implemented here; everything that decides about a request lives
// elsewhere.
package catalog

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AirlockServerName is the name Airlock gives itself in the MCP handshake,
// as a server to agents and as a client to its servers. A downstream server
// that answers with it is an Airlock, which Airlock refuses to proxy.
const AirlockServerName = "airlock"

// Options tune how sources are kept alive. Zero values take the defaults in
// parentheses.
type Options struct {
	// A server's own startTimeout and callTimeout (servers.json) take the
	// place of these two.
	ConnectTimeout time.Duration // start + MCP handshake + first listing (30 s)
	CallTimeout    time.Duration // one request when the source never answers (10 min; progress restarts it)
	BackoffMin     time.Duration // first restart delay (200 ms)
	BackoffMax     time.Duration // longest restart delay (30 s)
	// MaxCrashes in a row mark a source failed; it then waits for a manual
	// restart (5). A start that never became ready counts as a crash, and
	// so does a run that ended within StableAfter of becoming ready.
	MaxCrashes  int
	StableAfter time.Duration // a ready run this long resets the crash count (30 s)
	StopGrace   time.Duration // SIGTERM → SIGKILL (3 s)
	// LogWindow is how long after an agent's request at a server ended a
	// log message of the server may still be that request's (5 s): the
	// SDK hands a message over after the answer that followed it on the
	// wire (found by an interop test: most lines a server logged during
	// one agent's call reached every agent, as the server's own).
	LogWindow   time.Duration
	StderrLines int // kept for the UI (50)
	// Sandbox restricts the thread that starts a server whose config sets
	// Sandbox (proc.Spec's Restrict); it fails when it cannot, and the
	// server does not start. Nil: such a server does not start.
	Sandbox func() error
	Logger  *slog.Logger
	// Expose turns the tools a downstream server lists into the tools
	// agents see (tool pinning: a changed tool keeps its accepted
	// definition). Nil exposes them as listed. In-process servers are
	// Airlock's own code and are exposed as they are.
	Expose func(cfg core.ServerConfig, observed []core.ToolInfo) []core.ToolInfo
	// ExposeInstructions turns the instructions a downstream server gives
	// at initialize (trimmed; "" for none) into those agents get
	// (instructions pinning: changed ones are held back until accepted).
	// Nil passes them on as given; in-process servers' pass as they are.
	ExposeInstructions func(cfg core.ServerConfig, given string) string
	// Order keeps the order servers were added in across restarts, so that
	// a name two --no-prefix servers would expose stays with the same one
	// (found by a new-user test: after a restart the server added later
	// had it, because servers then started in the order of their ids). It
	// gets the ids configured now, sorted, and returns each one's place:
	// the places it had, new ids after them in the order given, removed
	// ids forgotten. Nil orders each Apply's new servers after the others.
	Order func(ids []string) map[string]uint64
	// Reserved are the ids of servers that are Airlock's own even while
	// they are not running (the built-in tools while no folder is
	// allowed): a --no-prefix server's id__… name would pass for theirs.
	Reserved []string
}

func (o *Options) defaults() {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&o.ConnectTimeout, 30*time.Second)
	set(&o.CallTimeout, 10*time.Minute)
	set(&o.BackoffMin, 200*time.Millisecond)
	set(&o.BackoffMax, 30*time.Second)
	set(&o.StableAfter, 30*time.Second)
	set(&o.StopGrace, 3*time.Second)
	set(&o.LogWindow, 5*time.Second)
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

// Change tells listeners that a source's status, or what it offers, changed.
type Change struct {
	Status core.ServerStatus
	// ListsChanged is set when the snapshot changed: tools, prompts or
	// resources were added, removed or redefined.
	ListsChanged bool
}

// Catalog owns the sources.
type Catalog struct {
	opts    Options
	version string

	mu      sync.RWMutex
	sources map[string]*source
	inproc  map[string]*mcp.Server // in-process servers by id, kept across restarts
	// added counts the servers added, for their order: a name two servers
	// would expose stays with the one that was there first.
	added uint64
	// configured are the ids of the servers configured, disabled ones
	// too: their id__… names are theirs whether they run or not.
	configured map[string]bool

	snap    atomic.Pointer[Snapshot]
	snapMu  sync.Mutex // serialises rebuilds
	snapSeq uint64

	// progress routes source progress notifications (keyed by the token
	// Airlock put on the forwarded request) back to the caller.
	progressSeq atomic.Int64
	progress    sync.Map // progressKey → func(*mcp.ProgressNotificationParams)

	listeners       listeners[func(Change)]
	logListeners    listeners[func(server string, p *mcp.LoggingMessageParams, from LogSource)]
	updateListeners listeners[func(server string, p *mcp.ResourceUpdatedNotificationParams)]

	relayMu sync.Mutex
	relayer Relayer
	subs    subscriptions // resource subscriptions of agent sessions (relay.go)
	// elicits are the URL elicitations relayed or named in a refusal,
	// for their completion (elicit.go).
	elicits elicitations
}

// New returns a catalog with no sources.
func New(version string, opts Options) *Catalog {
	opts.defaults()
	c := &Catalog{opts: opts, version: version, sources: map[string]*source{}, inproc: map[string]*mcp.Server{}}
	c.snap.Store(&Snapshot{})
	return c
}

// listeners is a list of callbacks that may grow while sources already
// run and call them (the gateway registers after Airlock's own server was
// added).
type listeners[F any] struct {
	mu  sync.Mutex
	fns []F
}

func (l *listeners[F]) add(fn F) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// A new array each time: a caller iterating over the old one is safe.
	l.fns = append(slices.Clip(l.fns), fn)
}

func (l *listeners[F]) all() []F {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fns
}

// OnChange registers fn to be called on every status or list change, after
// the snapshot was rebuilt. Changes before it registered are not replayed.
func (c *Catalog) OnChange(fn func(Change)) { c.listeners.add(fn) }

// LogSource says whose request a source was handling when it logged a
// message, the only hint MCP gives of whom the message concerns.
type LogSource struct {
	// Idle: no agent request was in flight; the message is the server's
	// own (it started, it lost a connection).
	Idle bool
	// Agents are the agents (core.Caller.AgentID, or the label of a caller
	// without one) whose requests were in flight.
	Agents []string
	// Sessions are the agent sessions (core.Caller.Session) of the
	// requests in flight, or, when none is, of those that just ended: one
	// agent may have many (every client on one token), and a line logged
	// during one session's call is that session's. Agents counts the
	// requests that just ended too (a late line must never reach another
	// agent); Sessions does not while a request is in flight, or a session
	// of the same agent that called a moment before (the conformance
	// suite's scenarios, one session each) would make every line of the
	// running call unattributed (found by CI).
	Sessions []string
}

// OnLog registers fn to receive the sources' log messages.
func (c *Catalog) OnLog(fn func(server string, p *mcp.LoggingMessageParams, from LogSource)) {
	c.logListeners.add(fn)
}

func (c *Catalog) changed(d *source, listsChanged bool) {
	if listsChanged {
		c.rebuild()
	}
	st := d.status()
	if w := c.Snapshot().warnings[d.cfg.ID]; len(w) > 0 {
		st.Warnings = w
	}
	for _, fn := range c.listeners.all() {
		fn(Change{Status: st, ListsChanged: listsChanged})
	}
}

func (c *Catalog) routeLog(server string, p *mcp.LoggingMessageParams, from LogSource) {
	for _, fn := range c.logListeners.all() {
		fn(server, p, from)
	}
}

// logWho names the agent of r as LogSource does.
func logWho(r *core.Request) string {
	if r.Caller.AgentID != "" {
		return r.Caller.AgentID
	}
	return r.Caller.Label()
}

// addAgent counts agent in from.
func (from *LogSource) addAgent(agent string) {
	if !slices.Contains(from.Agents, agent) {
		from.Agents = append(from.Agents, agent)
	}
}

// logWhom is the agent and the session of a request, as LogSource names
// them.
type logWhom struct{ agent, session string }

func logWhomOf(r *core.Request) logWhom { return logWhom{logWho(r), r.Caller.Session} }

// add counts w in from.
func (from *LogSource) add(w logWhom) {
	from.addAgent(w.agent)
	if !slices.Contains(from.Sessions, w.session) {
		from.Sessions = append(from.Sessions, w.session)
	}
}

// logSource is whose requests d was handling when it logged: those in
// flight and those that ended within Options.LogWindow. Idle (the server's own,
// for every agent that sees it) only when there are none.
func (d *source) logSource() LogSource {
	d.mu.Lock()
	defer d.mu.Unlock()
	var from LogSource
	for r := range d.inflight {
		from.add(logWhomOf(r))
	}
	inflight := len(from.Sessions) > 0
	d.pruneEndedLocked()
	for who := range d.ended {
		if inflight {
			from.addAgent(who.agent)
		} else {
			from.add(who)
		}
	}
	from.Idle = len(from.Agents) == 0
	return from
}

// pruneEndedLocked forgets the requests that ended more than
// Options.LogWindow ago.
func (d *source) pruneEndedLocked() {
	for who, at := range d.ended {
		if time.Since(at) > d.cat.opts.LogWindow {
			delete(d.ended, who)
		}
	}
}

// AddInProcess adds an in-process server under id, started at once and
// served through the same pipeline as any downstream server. noPrefix
// exposes its tools under their own names (Airlock's own tools).
func (c *Catalog) AddInProcess(id string, srv *mcp.Server, noPrefix bool) {
	cfg := core.ServerConfig{ID: id, Type: core.TransportInProcess, NoPrefix: noPrefix}
	c.mu.Lock()
	old := c.sources[id]
	d := newSource(c, cfg, srv)
	c.added++
	d.added = c.added
	c.sources[id] = d
	c.inproc[id] = srv
	c.mu.Unlock()
	if old != nil {
		old.stop()
	}
	go d.run()
}

// WaitUp waits until the source id has been running once (its tools listed
// in the snapshot), or ctx ends. In-process sources come up in moments:
// Airlock waits for its own before it serves agents, so that the first
// listing is whole.
func (c *Catalog) WaitUp(ctx context.Context, id string) error {
	c.mu.RLock()
	d := c.sources[id]
	c.mu.RUnlock()
	if d == nil {
		return core.Errorf(core.ENotFound, "no source %s", id)
	}
	select {
	case <-d.up:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("source %s did not come up: %w", id, ctx.Err())
	}
}

// BuiltIn reports whether server is an in-process server (Airlock's own
// tools, the built-in file and shell servers).
func (c *Catalog) BuiltIn(server string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.inproc[server]
	return ok
}

// RemoveInProcess stops and removes an in-process server.
func (c *Catalog) RemoveInProcess(id string) {
	c.mu.Lock()
	d := c.sources[id]
	if d == nil || !d.builtIn() {
		c.mu.Unlock()
		return
	}
	delete(c.sources, id)
	delete(c.inproc, id)
	c.mu.Unlock()
	c.stopped(d, "removed")
}

func (c *Catalog) stopped(d *source, gone string) {
	d.stopFor(gone)
	d.clearSession()
	st := d.status()
	st.State = core.StateStopped
	st.Tools = nil
	c.rebuild()
	for _, fn := range c.listeners.all() {
		fn(Change{Status: st, ListsChanged: true})
	}
}

// Apply reconciles the downstream servers with cfgs: new ones start,
// removed or disabled ones stop, changed ones restart, unchanged ones are
// left alone. In-process servers are not affected.
func (c *Catalog) Apply(cfgs []core.ServerConfig) {
	want := map[string]core.ServerConfig{}
	for _, cfg := range cfgs {
		want[cfg.ID] = cfg
	}
	var order map[string]uint64
	if c.opts.Order != nil {
		ids := make([]string, 0, len(want))
		for id := range want {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		order = c.opts.Order(ids)
	}
	c.mu.Lock()
	configured := map[string]bool{}
	for id := range want {
		configured[id] = true
	}
	reserve := !maps.Equal(configured, c.configured) // a disabled server's names too
	c.configured = configured
	var stop, start []*source
	// A server whose entry changed keeps its place in the order.
	was := map[string]uint64{}
	gone := map[*source]string{} // why a source stopped does not start again
	for id, d := range c.sources {
		if d.builtIn() {
			continue
		}
		cfg, ok := want[id]
		if ok && !cfg.Disabled && sameConfig(withoutTimeouts(cfg), withoutTimeouts(d.cfg)) {
			changed := int64(cfg.StartTimeout) != d.startSecs.Load() || int64(cfg.CallTimeout) != d.callSecs.Load()
			d.setTimeouts(cfg)
			if !changed || d.status().State != core.StateFailed {
				continue
			}
			// A server that gave up starting tries again with its new
			// timeouts (found by a regression test: raising the start
			// timeout, as its error advises, left it failed).
		}
		// Removed, disabled or changed: it stops (and starts anew below).
		stop = append(stop, d)
		switch {
		case !ok:
			gone[d] = "removed"
		case cfg.Disabled:
			gone[d] = "disabled"
		}
		delete(c.sources, id)
		if ok && !cfg.Disabled {
			was[id] = d.added
		}
	}
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Strings(ids) // servers added together are ordered by id
	for _, id := range ids {
		cfg := want[id]
		if cfg.Disabled {
			continue
		}
		if d, ok := c.sources[id]; ok {
			if d.builtIn() {
				c.opts.Logger.Warn("a configured server has the id of a built-in one; it is ignored", "id", id)
			}
			continue
		}
		d := newSource(c, cfg, nil)
		if n, ok := order[id]; ok {
			d.added = n
			c.added = max(c.added, n)
		} else if n, ok := was[id]; ok {
			d.added = n
		} else {
			c.added++
			d.added = c.added
		}
		c.sources[id] = d
		start = append(start, d)
	}
	c.mu.Unlock()
	for _, d := range stop {
		c.stopped(d, gone[d])
	}
	if reserve && len(stop) == 0 {
		// Which names the --no-prefix servers may expose changed: their
		// lists and warnings with it.
		c.mu.RLock()
		var noPrefix []*source
		for _, d := range c.sources {
			if d.cfg.NoPrefix {
				noPrefix = append(noPrefix, d)
			}
		}
		c.mu.RUnlock()
		if len(noPrefix) == 0 {
			c.rebuild()
		}
		for i, d := range noPrefix {
			c.changed(d, i == 0) // rebuilt once, each status with its warnings
		}
	}
	for _, d := range start {
		go d.run()
	}
}

// withoutTimeouts is cfg without the timeouts, which apply without a
// restart.
func withoutTimeouts(cfg core.ServerConfig) core.ServerConfig {
	cfg.StartTimeout, cfg.CallTimeout = 0, 0
	return cfg
}

func sameConfig(a, b core.ServerConfig) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// Close stops every source.
func (c *Catalog) Close() {
	c.mu.Lock()
	all := make([]*source, 0, len(c.sources))
	for id, d := range c.sources {
		all = append(all, d)
		delete(c.sources, id)
	}
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, d := range all {
		wg.Add(1)
		go func() { defer wg.Done(); d.stop() }()
	}
	wg.Wait()
}

// Status returns every source's status, sorted by id.
func (c *Catalog) Status() []core.ServerStatus {
	c.mu.RLock()
	out := make([]core.ServerStatus, 0, len(c.sources))
	for _, d := range c.sources {
		out = append(out, d.status())
	}
	c.mu.RUnlock()
	w := c.Snapshot().warnings
	for i := range out {
		out[i].Warnings = w[out[i].ID]
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// ServerStatus returns one source's status.
func (c *Catalog) ServerStatus(id string) (core.ServerStatus, bool) {
	d := c.get(id)
	if d == nil {
		return core.ServerStatus{}, false
	}
	st := d.status()
	st.Warnings = c.Snapshot().warnings[id]
	return st, true
}

// Restart stops and starts a source now, clearing a failed state.
func (c *Catalog) Restart(id string) error {
	c.mu.Lock()
	d, ok := c.sources[id]
	if !ok {
		c.mu.Unlock()
		return core.Errorf(core.ENotFound, "server %q is not configured or is disabled", id)
	}
	nd := newSource(c, d.cfg, d.inproc)
	nd.added = d.added
	// Its timeouts as last applied, which may be newer than its entry's.
	nd.startSecs.Store(d.startSecs.Load())
	nd.callSecs.Store(d.callSecs.Load())
	c.sources[id] = nd
	c.mu.Unlock()
	d.stop()
	go nd.run()
	return nil
}

// PID returns the process id of a stdio server (0 when not running).
func (c *Catalog) PID(id string) int {
	if d := c.get(id); d != nil {
		return d.status().PID
	}
	return 0
}

func (c *Catalog) get(id string) *source {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.sources[id]
}

// Tools returns the tools agents may be shown, sorted by exposed name.
func (c *Catalog) Tools() []core.ToolInfo { return c.Snapshot().Tools }

// Error codes of routing and dispatch.
const (
	// EUnknownTool: no source offers a tool of that name.
	EUnknownTool = "unknown_tool"
	// EUnknownPrompt: no source offers a prompt of that name.
	EUnknownPrompt = "unknown_prompt"
	// EUnknownResource: no source offers that resource URI.
	EUnknownResource = "unknown_resource"
	// EDownstream: the source answered with its own protocol error.
	EDownstream = "downstream_error"
)

// Route finds the source and target of r from the name the agent used
// (r.Exposed) and fills r.Server, r.Name and, for a tool, r.Tool. A name no
// source offers is refused with a reason code and a hint. It implements the
// pipeline's route stage.
func (c *Catalog) Route(ctx context.Context, r *core.Request) error {
	s := c.Snapshot()
	switch r.Kind {
	case core.KindToolCall:
		t, ok := s.Tool(r.Exposed)
		if !ok && (c.waitFirstStart(ctx, r.Exposed) || !strings.Contains(r.Exposed, "__") && c.waitFirstStarts(ctx)) {
			t, ok = c.Snapshot().Tool(r.Exposed)
		}
		if !ok {
			if err := c.notRunning(r.Exposed); err != nil {
				return err
			}
			return (&core.Error{Code: EUnknownTool, Message: fmt.Sprintf("no server offers a tool named %q", r.Exposed)}).
				WithHint("call tools/list (or help) for the tools you can use; names are <server>__<tool>")
		}
		r.Server, r.Name, r.Tool = t.ServerID, t.Name, &t
	case core.KindPromptGet:
		p, ok := s.Prompt(r.Exposed)
		if !ok && c.waitFirstStarts(ctx) {
			p, ok = c.Snapshot().Prompt(r.Exposed)
		}
		if !ok {
			return (&core.Error{Code: EUnknownPrompt, Message: fmt.Sprintf("no server offers a prompt named %q", r.Exposed)}).
				WithHint("call prompts/list for the prompts you can use")
		}
		r.Server, r.Name = p.Server, p.Name
	case core.KindResourceRead:
		server, ok := c.ResourceServerFor(ctx, s, r.Exposed)
		if !ok && r.SubscribedAt != "" && c.get(r.SubscribedAt) != nil {
			server, ok = r.SubscribedAt, true
		}
		if !ok {
			if down := c.downServers(); len(down) > 0 {
				// It may be theirs (found by an interop test: the hint to
				// list resources did not say why a read that works at other
				// times was refused).
				return (&core.Error{Code: EUnknownResource, Message: fmt.Sprintf("no running server offers the resource %q, and %s not running: it may serve it", r.Exposed, serverList(down))}).
					WithHint("see the Servers screen (or airlock servers list); once every server runs, read it again")
			}
			return (&core.Error{Code: EUnknownResource, Message: fmt.Sprintf("no server offers the resource %q", r.Exposed)}).
				WithHint("call resources/list or resources/templates/list for the resources you can read")
		}
		r.Server, r.Name = server, r.Exposed
	case core.KindSampling, core.KindElicitation:
		if r.Server == "" || r.Peer == nil {
			return core.Errorf(core.EInvalid, "a relayed %s needs its source and the agent's client", r.Kind)
		}
		return checkRelay(r)
	default:
		return core.Errorf(core.EInvalid, "Airlock does not route %q requests", r.Kind)
	}
	return nil
}

// ResourceServerFor returns the server to ask for the resource uri, read
// or subscribed to, given the catalog's snapshot s: the server that lists
// it or has a template matching it; else the same once the first starts
// are over, or once the servers have listed their resources again (a
// resource a server made a moment ago, a resource_link in a call's answer,
// before Airlock heard its list change: found by an interop test, read at
// once it was unknown); else the one server that offers resources at all
// (see soleResourceServer).
func (c *Catalog) ResourceServerFor(ctx context.Context, s *Snapshot, uri string) (string, bool) {
	server, ok := s.ResourceServer(uri)
	if !ok && c.waitFirstStarts(ctx) {
		server, ok = c.Snapshot().ResourceServer(uri)
	}
	if !ok && c.relistResources() {
		server, ok = c.Snapshot().ResourceServer(uri)
	}
	if !ok {
		server, ok = c.soleResourceServer()
	}
	return server, ok
}

// soleResourceServer returns the one running server that offers
// resources, for a URI that no server lists and no template matches: a
// server may serve URIs it does not list (found by an interop test: ones
// it makes as it goes, or reads of any path under a folder, were refused
// through Airlock and read directly). With one such server an agent reads
// through Airlock what it reads directly, and gets the server's own answer
// (its contents, or its own error) either way. With several, Airlock
// cannot tell which one to ask and the read is refused as unknown, as it
// is with none, and so it is while any server is not running (it may be
// the one). Airlock's own servers list all they serve, so they never
// count.
func (c *Catalog) soleResourceServer() (string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	found := ""
	for id, d := range c.sources {
		if d.builtIn() {
			continue
		}
		sess := d.session()
		if sess == nil {
			// Not running now: it may be the one that serves the URI, and
			// another server must not be sent a URI meant for it.
			return "", false
		}
		if caps := sess.InitializeResult().Capabilities; caps == nil || caps.Resources == nil {
			continue
		}
		if found != "" {
			return "", false
		}
		found = id
	}
	return found, found != ""
}

// downServers are the ids of the servers that are not running now
// (Airlock's own aside), sorted.
func (c *Catalog) downServers() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []string
	for id, d := range c.sources {
		if !d.builtIn() && d.session() == nil {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// serverList is "server "a" is" or "servers "a", "b" are".
func serverList(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = strconv.Quote(id)
	}
	if len(ids) == 1 {
		return "server " + q[0] + " is"
	}
	return "servers " + strings.Join(q, ", ") + " are"
}

// relistResources lists again, at once, the resources of the running
// servers that offer any, and reports whether it listed any. Listings of
// one server go one at a time: an unknown read costs no more than the
// agent listing resources itself.
func (c *Catalog) relistResources() bool {
	c.mu.RLock()
	var due []*source
	for _, d := range c.sources {
		sess := d.session()
		if sess == nil {
			continue
		}
		if caps := sess.InitializeResult().Capabilities; caps == nil || caps.Resources == nil {
			continue
		}
		due = append(due, d)
	}
	c.mu.RUnlock()
	var wg sync.WaitGroup
	for _, d := range due {
		wg.Go(func() {
			d.relist.Lock()
			defer d.relist.Unlock()
			d.refresh()
		})
	}
	wg.Wait()
	return len(due) > 0
}

// waitFirstStart waits, for a call to server__tool, until that server has
// started for the first time, at most its start timeout: right after
// Airlock starts, agents that carried their sessions on call the tools
// they knew before the servers are up (found by a regression test: the
// first call after a restart was refused as "starting"). It reports
// whether the server came up.
func (c *Catalog) waitFirstStart(ctx context.Context, exposed string) bool {
	id, _, ok := strings.Cut(exposed, "__")
	if !ok {
		return false
	}
	d := c.get(id)
	if d == nil || d.builtIn() {
		return false
	}
	select {
	case <-d.up:
		return false // it was up: not a first start
	default:
	}
	if d.status().State != core.StateStarting {
		return false
	}
	t := time.NewTimer(d.startTimeout())
	defer t.Stop()
	select {
	case <-d.up:
		return true
	case <-d.done:
	case <-ctx.Done():
	case <-t.C:
	}
	return false
}

// waitFirstStarts waits until every server that is starting for the first
// time is up (or gave up), at most the longest of their start timeouts,
// for a prompt, a resource or a --no-prefix tool whose name says no
// server: right after Airlock starts, agents that carried their sessions
// on read what they knew before the servers are up (found by a regression
// test: such a read was refused as unknown, milliseconds before the
// resource was listed). It reports whether it waited for any.
func (c *Catalog) waitFirstStarts(ctx context.Context) bool {
	c.mu.RLock()
	var starting []*source
	var longest time.Duration
	for _, d := range c.sources {
		if d.builtIn() {
			continue
		}
		select {
		case <-d.up:
			continue // it was up: not a first start
		default:
		}
		if d.status().State == core.StateStarting {
			starting = append(starting, d)
			longest = max(longest, d.startTimeout())
		}
	}
	c.mu.RUnlock()
	if len(starting) == 0 {
		return false
	}
	t := time.NewTimer(longest)
	defer t.Stop()
	for _, d := range starting {
		select {
		case <-d.up:
		case <-d.done:
		case <-ctx.Done():
			return true
		case <-t.C:
			return true
		}
	}
	return true
}

// notRunning explains a call to a tool of a configured server that is not
// running now (restarting after a crash, failed, stopped): its tools are
// out of the lists meanwhile, and "no server offers it" would send the
// agent looking for another name.
func (c *Catalog) notRunning(exposed string) error {
	id, _, ok := strings.Cut(exposed, "__")
	if !ok {
		return nil
	}
	d := c.get(id)
	if d == nil {
		return nil
	}
	st := d.status()
	hint := "see the Servers screen"
	switch st.State {
	case core.StateRunning:
		return nil
	case core.StateStarting, core.StateRestarting:
		hint = "it is starting again by itself; call again in a moment"
	case core.StateFailed:
		hint = "it crashed too often; restart it on the Servers screen or with airlock servers restart " + id
	}
	return (&core.Error{Code: core.EUnavailable, Message: fmt.Sprintf("server %q is %s, so %q cannot be called now", id, st.State, exposed)}).WithHint(hint)
}

// Dispatch runs r on the source that serves it. It implements the
// pipeline's dispatch stage. An in-process source learns the caller from
// the request's _meta (core.MetaCaller); a downstream one never does.
func (c *Catalog) Dispatch(ctx context.Context, r *core.Request) (mcp.Result, error) {
	if r.Kind == core.KindSampling || r.Kind == core.KindElicitation {
		return c.dispatchRelay(ctx, r)
	}
	d := c.get(r.Server)
	if d == nil {
		return nil, core.Errorf(core.ENotFound, "server %q is not configured", r.Server)
	}
	sess := d.session()
	if sess == nil {
		msg := fmt.Sprintf("server %q is %s", r.Server, d.status().State)
		if why := d.agentError(); why != "" {
			msg += ": " + why
		}
		return nil, (&core.Error{Code: core.EUnavailable, Message: msg}).WithHint("see the Servers screen; a failed server restarts from there")
	}
	var meta mcp.Meta
	if len(r.Meta) > 0 && r.Kind == core.KindToolCall {
		meta = make(mcp.Meta, len(r.Meta)+1)
		for k, v := range r.Meta {
			if k != core.MetaCaller { // Airlock's own, never the agent's
				meta[k] = v
			}
		}
	}
	if d.builtIn() {
		if meta == nil {
			meta = mcp.Meta{}
		}
		meta[core.MetaCaller] = r.Caller
	}
	ctx, still, stop, cancel := d.callDeadline(ctx)
	defer stop()
	defer d.track(r, cancel)()
	// A line the server logged before its answer is handled while the
	// request is still tracked here (logSource), so that it goes to the
	// session whose request it was, not to everyone as the server's own.
	ctx = mcp.WithLogsHandledBeforeReturn(ctx)
	var res mcp.Result
	var err error
	// The agent's progress token, if it gave one, is replaced by one of
	// Airlock's (any request may carry one, MCP says: a long read or
	// prompt reports progress as a call does).
	var tok any
	if r.Progress != nil {
		// Random, and bound to the source: one downstream server cannot
		// guess its way into another's calls.
		tok = fmt.Sprintf("airlock-%d-%s", c.progressSeq.Add(1), rand.Text())
		key := progressKey{r.Server, tok.(string)}
		c.progress.Store(key, func(p *mcp.ProgressNotificationParams) {
			still() // a server that reports progress is working on it
			r.Progress(p.Progress, p.Total, p.Message)
		})
		defer c.progress.Delete(key)
	}
	switch r.Kind {
	case core.KindToolCall:
		params := &mcp.CallToolParams{Name: r.Name, Meta: meta}
		if len(r.Args) > 0 {
			params.Arguments = r.Args
		}
		if tok != nil {
			params.SetProgressToken(tok)
		}
		res, err = sess.CallTool(ctx, params)
	case core.KindPromptGet:
		params := &mcp.GetPromptParams{Name: r.Name, Meta: meta}
		if len(r.Args) > 0 {
			if err := json.Unmarshal(r.Args, &params.Arguments); err != nil {
				return nil, core.Errorf(core.EInvalid, "prompt arguments must be an object of strings: %v", err)
			}
		}
		if tok != nil {
			params.SetProgressToken(tok)
		}
		res, err = sess.GetPrompt(ctx, params)
	case core.KindResourceRead:
		params := &mcp.ReadResourceParams{URI: r.Name, Meta: meta}
		if tok != nil {
			params.SetProgressToken(tok)
		}
		res, err = sess.ReadResource(ctx, params)
	default:
		return nil, core.Errorf(core.EInvalid, "Airlock does not dispatch %q requests", r.Kind)
	}
	if err != nil {
		// A -32042 passes on as it is; its client will wait for the
		// completion of the elicitations it names.
		c.elicits.noteRequired(r.Server, r.Peer, err)
		return nil, c.callError(ctx, r, err)
	}
	return res, nil
}

type progressKey struct{ server, token string }

// readsStdio reports whether Airlock reads server's messages from a
// process it started: only there does the SDK answer a call whose answer
// was too large with CodeMessageTooLarge itself (another server may send
// that code as its own, and it then passes through as its own).
func (c *Catalog) readsStdio(server string) bool {
	d := c.get(server)
	return d != nil && d.inproc == nil && d.cfg.URL == ""
}

// codeRejectedByTransport is the SDK's code for a message its transport
// could not send: the connection, not the server, failed.
const codeRejectedByTransport = -32005

// callError says why a forwarded request failed, with a code: the source's
// own JSON-RPC error (kept, so it can pass through to the agent as it is),
// a timeout, a cancellation, a process source that wrote something that is
// not JSON-RPC, or a source that cannot be reached (its connection broke;
// the catalog reconnects).
func (c *Catalog) callError(ctx context.Context, r *core.Request, err error) error {
	var wire *jsonrpc.Error
	switch {
	case errors.As(context.Cause(ctx), new(*errSourceStopped)):
		if gone := context.Cause(ctx).(*errSourceStopped).gone; gone != "" {
			// Not to be called again (found by a new-user test: the agent
			// was told the server was starting anew).
			return (&core.Error{Code: core.EUnavailable, Message: fmt.Sprintf("server %q was %s while %s ran: the call was ended unfinished and may have had effects", r.Server, gone, r.Name)}).
				WithHint(fmt.Sprintf("check what it did; the server's tools are gone until it is %s again", map[string]string{"removed": "added", "disabled": "enabled"}[gone]))
		}
		return (&core.Error{Code: core.EUnavailable, Message: fmt.Sprintf("server %q was stopped or restarted (its entry changed, or Restart) while %s ran: the call was ended unfinished and may have had effects", r.Server, r.Name)}).
			WithHint("check what it did, then call again: the server is starting anew")
	case errors.As(context.Cause(ctx), new(*callTimeoutError)):
		t := context.Cause(ctx).(*callTimeoutError).after
		e := core.Errorf(core.ETimeout, "server %q did not answer %s within %s", r.Server, r.Name, t)
		if d := c.get(r.Server); d != nil && !d.builtIn() {
			e = e.WithHint(fmt.Sprintf("if it needs longer, raise the server's call timeout (\"callTimeout\" in seconds in servers.json, or Edit on the Servers screen); a server that sends progress notifications is given another %s after each", t))
		}
		return e
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &wire) && wire.Code == mcp.CodeMessageTooLarge && c.readsStdio(r.Server):
		// The SDK dropped the answer and kept the connection: the other
		// calls to the server go on (found by an interop test: the whole
		// connection was reset, and every agent's call in flight failed).
		return (&core.Error{Code: core.ETooLarge, Message: fmt.Sprintf("server %q answered %s with more than Airlock reads in one message from a stdio server (%d MiB): %s", r.Server, r.Name, mcp.DefaultMaxLineLength>>20, wire.Message)}).
			WithHint("ask for less at once (a smaller page, a part of a file); MCP clients have such limits too (10 MiB in the TypeScript SDK)")
	case errors.As(err, &wire) && wire.Code != codeRejectedByTransport:
		return &DownstreamError{Server: r.Server, Target: r.Name, Wire: wire}
	}
	if bad := (*badOutputError)(nil); errors.As(err, &bad) {
		// The connection ended on it, so the server is unavailable until
		// it restarts, but what it said is the cause, not its reachability.
		return (&core.Error{Code: core.EUnavailable, Message: fmt.Sprintf("server %q sent an invalid answer to %s: it %v", r.Server, r.Name, bad)}).
			WithHint(badOutputHint + "; Airlock restarts the server by itself")
	}
	// The transport's error quotes the server's URL: its secrets are taken
	// out. What the process last wrote to stderr is not added: it is the
	// server's own log, for the person (see source.describe).
	var secrets redactor // a server removed meanwhile: its URLs are still cut
	if d := c.get(r.Server); d != nil {
		secrets = d.secrets
	}
	return (&core.Error{Code: core.EUnavailable, Message: fmt.Sprintf("server %q cannot be reached: %s", r.Server, secrets.redact(err.Error()))}).
		WithHint("Airlock restarts or reconnects it by itself; see the Servers screen")
}

// DownstreamError is a source's own JSON-RPC error answer. It passes
// through to the agent as the same JSON-RPC error (code, message, data),
// as the server would answer it directly; the audit records it with code
// downstream_error.
type DownstreamError struct {
	Server, Target string
	Wire           *jsonrpc.Error
}

func (e *DownstreamError) Error() string {
	return fmt.Sprintf("%s: server %q answered %s with an error: %s", EDownstream, e.Server, e.Target, e.Wire.Message)
}

// Unwrap gives errors.As the *core.Error (code downstream_error) and the
// wire error.
func (e *DownstreamError) Unwrap() []error {
	return []error{
		&core.Error{Code: EDownstream, Message: fmt.Sprintf("server %q answered %s with an error: %s", e.Server, e.Target, e.Wire.Message)},
		e.Wire,
	}
}

func (c *Catalog) routeProgress(server string, p *mcp.ProgressNotificationParams) {
	tok, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	if fn, ok := c.progress.Load(progressKey{server, tok}); ok {
		fn.(func(*mcp.ProgressNotificationParams))(p)
	}
}

// Session returns the client session of a running source, for the
// features that are not requests of the pipeline (completion, resource
// subscriptions).
func (c *Catalog) Session(id string) (*mcp.ClientSession, bool) {
	d := c.get(id)
	if d == nil {
		return nil, false
	}
	s := d.session()
	return s, s != nil
}

// Instructions returns, by server id, the instructions of each running
// server (MCP's InitializeResult.instructions: how to use its tools) as
// agents are to get them: those the user accepted (Options.
// ExposeInstructions). A server without any is not in it. The map is
// shared: read only.
func (c *Catalog) Instructions() map[string]string {
	return c.Snapshot().instructions
}

// Refresh rebuilds the snapshot after something Expose depends on changed
// for server id (the user accepted a tool change) and tells listeners.
func (c *Catalog) Refresh(id string) {
	if d := c.get(id); d != nil {
		c.changed(d, true)
	}
}
