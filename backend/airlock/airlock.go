// Package airlock wires Airlock together: the one place where the store, the
// servers file, the supervisor, the rules, the approval broker, the gateway,
// the facade and the HTTP listener are built and connected. Both the desktop
// app and `airlock serve` start through Start.
package airlock

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"expvar"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/airlock-dev/airlock/backend/sandbox"
	"github.com/airlock-dev/airlock/backend/tokenfile"

	"github.com/airlock-dev/airlock/backend/activity"
	"github.com/airlock-dev/airlock/backend/api"
	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/config"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/events"
	"github.com/airlock-dev/airlock/backend/gateway"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/instance"
	"github.com/airlock-dev/airlock/backend/pins"
	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/airlock-dev/airlock/backend/runner"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/teams"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Version is Airlock's version (core.Version).
var Version = core.Version

// DefaultAddr is where the gateway listens unless told otherwise.
const DefaultAddr = "127.0.0.1:4750"

// Options start an instance.
type Options struct {
	DataDir string
	Addr    string
	UI      fs.FS // the built Svelte UI; nil serves no UI over HTTP
	Logger  *slog.Logger
	// Catalog tunes the supervision of tool sources (tests shorten it).
	Catalog catalog.Options
	// ApprovalTimeout overrides the stored setting (default 5 minutes);
	// ApprovalProgressInterval is how often a waiting call gets progress.
	ApprovalTimeout          time.Duration
	ApprovalProgressInterval time.Duration
	// OnFocus is called when a second launch on the same data directory
	// asks this instance to show itself.
	OnFocus func()
	// AllowPaths are folders the built-in file and shell tools may use for
	// this run (--allow-path), besides the ones stored in the settings.
	AllowPaths []string
	// InProcess are extra in-process MCP servers to serve as sources, by
	// id (embedders and tests; Airlock's own servers are added anyway).
	InProcess map[string]*mcp.Server
	// AllowedHosts are host names, besides loopback ones, that requests may
	// name in their Host header: the names a remote browser or agent uses to
	// reach a non-loopback --addr.
	AllowedHosts []string
	// RunBoard is the task board agent runs work for (see startRunner).
	RunBoard runner.Board
	// Drain is how long Close lets the agents' calls already running
	// finish (default gateway.DrainTimeout; tests shorten it).
	Drain time.Duration
	// Binary is the airlock binary named in the commands Airlock shows
	// (default: the running one).
	Binary string
}

// Instance is a running Airlock backend.
type Instance struct {
	closeOnce sync.Once
	// bg are the goroutines that keep things current until the instance's
	// context ends (file watchers, pollers): Close waits for them before
	// the database closes, so that none writes to it, or to the data
	// directory, once Close has returned (found by CI: the rules file was
	// written into a test's data directory while it was being removed).
	bg       sync.WaitGroup
	bgMu     sync.Mutex
	bgClosed bool // Close is waiting for bg, or has: nothing more starts

	API     *api.Facade
	Hub     *events.Hub
	UIToken string
	Addr    string // the address actually listened on
	Info    api.Info
	base    string // host:port for URLs: Addr, or a usable name for it

	db      *store.DB
	cfg     *config.Store
	cat     *catalog.Catalog
	gw      *gateway.Gateway
	authz   *authz.Service
	teams   *teams.Service
	rules   *hitl.Rules
	broker  *hitl.Broker
	builtin *builtin.Builtin
	runner  *runner.Runner
	srv     *http.Server
	cancel  context.CancelFunc
	log     *slog.Logger
	closers []func()
}

// UIURL is the browser URL of the UI, with its access token.
func (in *Instance) UIURL() string { return "http://" + in.base + "/?token=" + in.UIToken }

// Sessions is the number of agent sessions open.
func (in *Instance) Sessions() int { return in.gw.Sessions() }

// dataDirFiles and dataDirFolders are what Airlock keeps in its data
// directory (instance.Tidy; the runs' folders are made fresh per run).
var (
	dataDirFiles = []string{
		store.FileName, store.FileName + "-wal", store.FileName + "-shm", store.FileName + "-journal",
		filepath.Join(store.JournalDir, store.JournalFileName), store.JournalFileName,
		tokenfile.TokenFile, hitl.RulesFileName, config.FileName,
	}
	dataDirFolders = []string{store.JournalDir, "runs", "logs"}
)

// Start opens the data directory, starts the downstream servers and listens.
func Start(ctx context.Context, o Options) (_ *Instance, err error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	in := &Instance{Hub: events.NewHub(), log: o.Logger}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	ctx, in.cancel = context.WithCancel(ctx)

	lock, err := instance.Acquire(o.DataDir)
	if err != nil {
		return nil, err
	}
	in.closers = append(in.closers, lock.Release)
	instance.Tidy(o.DataDir, dataDirFiles, dataDirFolders)

	in.db, err = store.Open(filepath.Join(o.DataDir, store.FileName))
	if err != nil {
		return nil, err
	}
	in.closers = append(in.closers, func() { in.db.Close() })

	agentToken, err := tokenfile.AgentToken(o.DataDir, true)
	if err != nil {
		return nil, err
	}
	in.cfg, err = config.New(filepath.Join(o.DataDir, "servers.json"), in.Hub)
	if err != nil {
		return nil, err
	}
	if o.Logger != nil {
		in.cfg.SetLogger(o.Logger)
	}
	if stopped, err := in.cfg.Watch(ctx); err != nil {
		o.Logger.Warn("edits of the servers file will not apply until Airlock restarts", "err", err)
	} else {
		in.background(func() { <-stopped })
	}

	// The audit log is closed after the catalog (closers run last to
	// first), so that requests still finishing can record themselves.
	audit, err := store.OpenDataDirAuditLog(in.db, o.DataDir, o.Logger)
	if err != nil {
		return nil, err
	}
	recorder := activity.New(audit, in.Hub, o.Logger)
	in.closers = append(in.closers, func() { recorder.Close(); audit.Close() })

	toolPins, err := pins.New(store.NewPins(in.db))
	if err != nil {
		return nil, err
	}
	// Servers removed from the servers file while Airlock was not running
	// take their accepted instructions with them (as forgetRemoved does for
	// those removed while it runs); not while the file is broken, which
	// lists none.
	if in.cfg.State().Error == "" {
		configured := map[string]bool{}
		for _, c := range in.cfg.List() {
			configured[c.ID] = true
		}
		if err := toolPins.PruneInstructions(func(id string) bool { return configured[id] }); err != nil {
			o.Logger.Warn("forget the instructions of removed servers", "err", err)
		}
	}
	catOpts := o.Catalog
	catOpts.Logger = o.Logger
	catOpts.Expose = toolPins.Expose
	catOpts.ExposeInstructions = func(cfg core.ServerConfig, given string) string { return toolPins.ExposeInstructions(cfg.ID, given) }
	if catOpts.Order == nil {
		catOpts.Order = serverOrder(in.db, in.log, func() bool { return in.cfg.State().Error == "" })
	}
	serverSandbox := sandbox.New([]string{o.DataDir})
	catOpts.Sandbox = func() error {
		if st := serverSandbox.Status(); !st.Enforced {
			return fmt.Errorf("it is set to run in a sandbox, and there is none here: %s", st.Reason)
		}
		return serverSandbox.Restrict()
	}
	catOpts.Reserved = append(catOpts.Reserved, catalog.AirlockServerName, builtin.ServerFileRead, builtin.ServerFileWrite, builtin.ServerShellExec)
	in.cat = catalog.New(Version, catOpts)
	in.closers = append(in.closers, in.cat.Close)
	in.cat.OnChange(func(ch catalog.Change) { in.Hub.Emit(core.EventServerStatus, toolPins.Annotate(ch.Status)) })

	in.authz, err = authz.New(store.NewAgents(in.db), authz.Options{Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	// The token of earlier versions stays the agent "default"'s.
	if err := in.authz.AdoptLegacyToken(agentToken); err != nil {
		return nil, err
	}
	in.background(func() { in.authz.Watch(ctx) })
	own := ownServer(in.authz)
	team, err := in.startTeams(ctx, o, own)
	if err != nil {
		return nil, err
	}
	in.cat.AddInProcess(authz.Server, own, true)

	if err := in.startBuiltin(ctx, o); err != nil {
		return nil, err
	}

	hitlDeps, err := in.startHITL(ctx, o, audit)
	if err != nil {
		return nil, err
	}
	in.rules, in.broker = hitlDeps.rules, hitlDeps.broker
	broker := in.broker
	in.cat.OnChange(func(ch catalog.Change) {
		if ch.Status.State == core.StateStopped && broker != nil {
			// A server removed or disabled: the calls to it waiting for a
			// person are declined with the reason, not left for someone to
			// approve into "not configured" (found by a new-user test).
			// Apart from the catalog's own goroutine, which may hold it.
			go broker.Revalidate(func(r *core.Request) error {
				if r.Server == "" || in.cat.BuiltIn(r.Server) {
					return nil
				}
				// A changed server is already there anew (starting); a
				// removed or disabled one is not.
				if _, ok := in.cat.ServerStatus(r.Server); !ok {
					return core.Errorf(core.ENotFound, "server %q was removed or turned off", r.Server)
				}
				return nil
			})
		}
	})
	var _ pipeline.BuiltInDispatcher = in.cat // tool errors of Airlock's own servers keep their codes in the audit
	guard := builtin.NewDataDirGuard(o.DataDir, in.cat.BuiltIn)
	pipe, err := pipeline.New(pipeline.Stages{
		Route:    in.cat,
		Gate:     in.authz,
		Policies: []pipeline.Policy{pinPolicy{toolPins}, guard, in.builtin},
		Decider:  hitlDeps.rules,
		Approver: hitlDeps.broker,
		Dispatch: in.cat,
		Respond:  team.responders(),
		Audit:    recorder,
		Logger:   o.Logger,
	})
	if err != nil {
		return nil, err
	}
	// Sampling and elicitation a source asks for during an agent's call go
	// to that agent's client through the same pipeline.
	in.cat.SetRelayer(pipe.Run)
	// Agents' sessions outlive a restart; those no run has seen for a week
	// are forgotten.
	sessions := store.NewMCPSessions(in.db)
	if err := sessions.Prune(time.Now().Add(-store.MCPSessionKeep)); err != nil {
		o.Logger.Warn("forget old sessions", "err", err)
	}
	in.gw = gateway.New(in.cat, pipe, identifier{svc: in.authz, ended: in.teams.SessionEnded}, in.authz,
		gateway.Options{Version: Version, Logger: o.Logger, Audit: recorder, Compact: in.authz, Precheck: denyFirst{guard, in.builtin}, Drain: o.Drain, Sessions: sessions})
	// A change of an agent, its role, grants or toggles changes what its
	// sessions may see: they get list_changed at once (a suspended agent's
	// list empties).
	in.authz.OnChange(func(ids []string) {
		// Calls waiting for a person whose agent may no longer make them
		// are declined with the reason, not left in the queue. First: a
		// session whose credential is gone ends in Sync, and a waiting
		// call is to hear the decline's reason, not only that its session
		// ended (found by CI: which came first was a race).
		in.broker.Revalidate(func(r *core.Request) error {
			if err := in.authz.Holds(&r.Caller); err != nil {
				return err
			}
			return in.authz.Authorize(context.Background(), r)
		})
		in.gw.Sync()
		if ids == nil {
			ids = []string{}
		}
		in.Hub.Emit(core.EventAgentsChanged, core.AgentsChanged{AgentIDs: ids})
	})

	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, core.Errorf(core.EConflict, "cannot listen on %s: the address is in use (is Airlock already running? choose another with --addr or AIRLOCK_ADDR)", o.Addr)
		}
		return nil, fmt.Errorf("listen on %s: %w", o.Addr, err)
	}
	in.Addr = ln.Addr().String()
	in.UIToken = randomToken()
	sec := api.NewSecurity(in.UIToken, in.Addr)
	sec.AllowedHosts = append(sec.AllowedHosts, o.AllowedHosts...)
	host, port, _ := net.SplitHostPort(in.Addr)
	if ip := net.ParseIP(host); ip != nil && !ip.IsLoopback() && !ip.IsUnspecified() {
		sec.AllowedHosts = append(sec.AllowedHosts, host)
	}
	base := in.Addr
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		// Listening on every address: advertise a name clients can use.
		name := "127.0.0.1"
		if len(o.AllowedHosts) > 0 {
			name = o.AllowedHosts[0]
		}
		base = net.JoinHostPort(name, port)
	}
	in.base = base

	binary := o.Binary
	if binary == "" {
		binary = executable()
	}
	in.Info = api.Info{
		Version: Version, MCPURL: "http://" + base + "/mcp", SSEURL: "http://" + base + "/sse",
		AgentToken: agentToken, DataDir: o.DataDir, ConfigPath: in.cfg.State().Path, Binary: binary, Bridge: bridgeBeside(binary),
	}
	if err := in.startRunner(ctx, o); err != nil {
		ln.Close()
		return nil, err
	}
	deps := api.Deps{Info: in.Info, Runner: in.runner, Config: in.cfg, Catalog: in.cat, Audit: audit, Recorder: recorder, DB: in.db, Pins: toolPins, Authz: in.authz, Builtin: in.builtin, Events: in.Hub}
	hitlDeps.apply(&deps)
	team.apply(&deps)
	in.API = api.New(deps)

	localToken := randomToken()
	routes := api.Routes{Security: sec, API: in.API, Hub: in.Hub, MCP: in.gw.StreamableHandler(), SSE: in.gw.SSEHandler(), UI: o.UI,
		Instance: instance.Endpoint{Token: localToken, Focus: o.OnFocus, Reload: in.reload, RPC: in.cliRPC(), Status: map[string]func() any{
			instance.StatusServers: func() any {
				// With what waits for an accept, so that `servers list` can say so.
				st := in.cat.Status()
				for i := range st {
					st[i] = toolPins.Annotate(st[i])
				}
				return st
			},
			instance.StatusBuiltin: func() any { return in.builtin.Get() },
		}}.Handler(),
		Debug: debugHandler(in.authz)}
	// Idle keep-alive connections close after a while; streams (SSE, long
	// calls) are not idle and are not cut.
	in.srv = &http.Server{Handler: routes.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 5 * time.Minute}
	// A second launch runs on this machine: give it a loopback address.
	focusAddr := in.Addr
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		focusAddr = net.JoinHostPort("127.0.0.1", port)
	}
	if err := lock.Publish(instance.Info{PID: os.Getpid(), Addr: focusAddr, Token: localToken}); err != nil {
		ln.Close()
		return nil, fmt.Errorf("write lock file: %w", err)
	}
	// In-process servers (Airlock's own tools, the built-in ones, tests')
	// come up in moments: agents that connect at once get a whole first
	// listing. Downstream servers start after the listener, so that a slow
	// one never delays the UI; config changes (UI, CLI, editor) re-apply.
	for id, srv := range o.InProcess {
		in.cat.AddInProcess(id, srv, false)
	}
	in.waitInProcess(ctx, o)
	go in.srv.Serve(ln)
	in.cfg.Subscribe(in.cat.Apply)
	in.cfg.Subscribe(forgetRemoved(in.cfg.List(), toolPins, o.Logger))
	in.cat.Apply(in.cfg.List())
	return in, nil
}

// background runs fn in a goroutine Close waits for, unless Close has
// begun waiting (a late UI or CLI change of the built-in settings, say):
// then it does not run at all, as nothing may start once the database is
// about to close (found in a review).
func (in *Instance) background(fn func()) {
	in.bgMu.Lock()
	defer in.bgMu.Unlock()
	if !in.bgClosed {
		in.bg.Go(fn)
	}
}

// forgetRemoved returns a servers-file subscriber that forgets the
// accepted instructions of each server removed from the file (given the
// servers configured now): a server added later under the same id is
// another server, and the old one's text must not reach agents under its
// name (found in a review). Its tool pins stay: for tools a stale pin
// only makes calls ask.
func forgetRemoved(now []core.ServerConfig, p *pins.Pins, log *slog.Logger) func([]core.ServerConfig) {
	var mu sync.Mutex
	configured := map[string]bool{}
	for _, c := range now {
		configured[c.ID] = true
	}
	return func(cfgs []core.ServerConfig) {
		mu.Lock()
		defer mu.Unlock()
		next := map[string]bool{}
		for _, c := range cfgs {
			next[c.ID] = true
		}
		for id := range configured {
			if !next[id] {
				if err := p.ForgetInstructions(id); err != nil {
					log.Warn("forget the instructions of a removed server", "server", id, "err", err)
				}
			}
		}
		configured = next
	}
}

// waitInProcess waits (briefly) for the in-process servers to list their
// tools. One that does not is logged; it joins the listings when it comes
// up, announced with list_changed like any server.
func (in *Instance) waitInProcess(ctx context.Context, o Options) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, st := range in.cat.Status() {
		if !st.BuiltIn {
			continue
		}
		if err := in.cat.WaitUp(ctx, st.ID); err != nil {
			o.Logger.Error("an in-process server is slow to start", "server", st.ID, "err", err)
		}
	}
}

// Close stops serving, stops the downstream servers and closes the store.
func (in *Instance) Close() { in.closeOnce.Do(in.close) }

// close is Close, once: a second Close (a signal while a stop runs) waits
// for the first.
func (in *Instance) close() {
	if in.cancel != nil {
		in.cancel()
	}
	if in.broker != nil {
		// Calls waiting for a person end now, recorded and answered as
		// expired: the gateway's sessions wait for their requests to end
		// before they close, and nobody can approve them any more.
		in.broker.Stop()
	}
	if in.runner != nil {
		// The agents Airlock runs end first: their calls end with them
		// instead of holding up the gateway.
		in.runner.Close()
	}
	if in.gw != nil {
		// Calls already running finish and answer their agents, for the
		// drain time at most; the agents' sessions and event streams end
		// after them. The listener stays open meanwhile: a running call
		// may still need its agent's answer to a request it relayed.
		in.gw.Close()
	}
	if in.srv != nil {
		// Shutdown waits for requests to finish, but event streams (the
		// UI's SSE) never do: close whatever is left.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if err := in.srv.Shutdown(ctx); err != nil {
			in.srv.Close()
		}
		cancel()
	}
	in.bgMu.Lock()
	in.bgClosed = true
	in.bgMu.Unlock()
	in.bg.Wait()
	for i := len(in.closers) - 1; i >= 0; i-- {
		in.closers[i]()
	}
	in.closers = nil
}

// SharedTokenLive reports whether the shared agent token (Info.AgentToken)
// still has its agent, "default": deleting that agent ends the token.
func (in *Instance) SharedTokenLive() bool {
	_, err := in.authz.Agent(authz.DefaultAgentID)
	return core.ErrorCode(err) != core.ENotFound
}

// ConfigError is why the servers file is not in effect ("" when it is).
func (in *Instance) ConfigError() string { return in.cfg.State().Error }

// RulesFileError says why rules.json is not in effect ("" when it is).
func (in *Instance) RulesFileError() string {
	if err := in.rules.FileError(); err != nil {
		return core.ErrorMessage(err)
	}
	return ""
}

// reload reads again what another process (the CLI) changed in the
// database, before that process's command returns (see
// instance.NotifyChanged).
func (in *Instance) reload() {
	if _, err := in.authz.Reload(); err != nil {
		in.log.Warn("reload agents", "err", err)
	}
	if _, err := in.rules.Reload(); err != nil {
		in.log.Warn("reload rules", "err", err)
	}
	if _, err := in.builtin.Reload(); err != nil {
		in.log.Warn("reload built-in settings", "err", err)
	}
	in.reloadTeams()
}

func randomToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// pinPolicy is the pipeline's policy stage for tools whose definition
// changed since the user accepted it, and tools a server added later: such
// a call always asks, whatever the rules say, until the user accepts the
// tool on the Servers screen.
type pinPolicy struct{ pins *pins.Pins }

func (p pinPolicy) Check(_ context.Context, r *core.Request) core.Verdict {
	if r.Kind != core.KindToolCall {
		return core.Verdict{Outcome: core.Allow}
	}
	ch, ok := p.pins.Changed(r.Server, r.Name)
	if !ok {
		return core.Verdict{Outcome: core.Allow}
	}
	reason := fmt.Sprintf("the definition of %s changed since you accepted it (%s) — accept the change on the Servers screen to stop this",
		r.Exposed, strings.Join(ch.Fields, ", "))
	if ch.New {
		reason = fmt.Sprintf("%s is a tool %s added after you first connected it — accept it on the Servers screen to stop this", r.Exposed, r.Server)
	}
	return core.Verdict{Outcome: core.Ask, By: "pins", Reason: reason}
}

// denyFirst is the policies that refuse outright, checked where the
// gateway answers outside the pipeline (a batch's calls before any runs, a
// completion): the data-directory guard and the built-in tools' policy
// (found by a review: a completion reached a server with a path in the
// data directory, which a tool call could not).
type denyFirst []pipeline.Policy

func (d denyFirst) Check(ctx context.Context, r *core.Request) core.Verdict {
	for _, p := range d {
		if v := p.Check(ctx, r); v.Outcome == core.Deny {
			return v
		}
	}
	return core.Verdict{Outcome: core.Allow}
}

// bridgeBeside is the airlock-bridge next to the airlock binary bin, or "".
func bridgeBeside(bin string) string {
	p := filepath.Join(filepath.Dir(bin), "airlock-bridge")
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
		return p
	}
	return ""
}

// executable is the path of the running binary ("airlock" when unknown).
func executable() string {
	p, err := os.Executable()
	if err != nil {
		return "airlock"
	}
	return p
}

// debugHandler serves the runtime's counters (GET /debug/vars: allocations,
// GC) and profiles (GET /debug/pprof/...: cpu, heap, allocs, goroutine,
// mutex, block, trace) that `go tool task bench` reads while it drives
// Airlock. Only to a loopback peer with the token of an agent whose role is
// a superuser's (the shared token `airlock token` prints): a profile shows
// what the process is doing (goroutine dumps hold arguments, /debug/vars
// the command line), and taking one costs CPU.
func debugHandler(svc *authz.Service) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/debug/vars", expvar.Handler())
	mux.HandleFunc("/debug/pprof/", pprof.Index) // named profiles: /debug/pprof/heap, ...
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	return loopbackOnly(agentsOnly(svc, mux))
}

// loopbackOnly serves next to peers on this machine only, whatever address
// Airlock listens on.
func loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// agentsOnly serves next to requests with the token of an agent whose
// role is a superuser's; any other agent gets 403.
func agentsOnly(svc *authz.Service, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := svc.IdentifyRequest(r)
		if err != nil || id.AgentID == "" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		a, err := svc.Agent(id.AgentID)
		var role authz.Role
		if err == nil {
			role, err = svc.Role(a.Role)
		}
		if err != nil || !role.IsSuperuser {
			http.Error(w, "the debug endpoints need the token of an agent with a superuser role (airlock token prints one)", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
