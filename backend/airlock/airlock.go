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
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/airlock-dev/airlock/backend/api"
	"github.com/airlock-dev/airlock/backend/cli"
	"github.com/airlock-dev/airlock/backend/config"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/gateway"
	"github.com/airlock-dev/airlock/backend/pins"
	"github.com/airlock-dev/airlock/backend/store"
)

// Version is Airlock's version, set at build time with -ldflags.
var Version = "0.1.0-dev"

// DefaultAddr is where the gateway listens unless told otherwise.
const DefaultAddr = "127.0.0.1:4750"

// Options start an instance.
type Options struct {
	DataDir string
	Addr    string
	UI      fs.FS // the built Svelte UI; nil serves no UI over HTTP
	Logger  *slog.Logger
	// Supervisor tunes downstream supervision (tests shorten it).
	Supervisor gateway.SupervisorOptions
	// ApprovalTimeout overrides the stored setting (default 5 minutes);
	// ApprovalProgressInterval is how often a waiting call gets progress.
	ApprovalTimeout          time.Duration
	ApprovalProgressInterval time.Duration
	// OnFocus is called when a second launch on the same data directory
	// asks this instance to show itself.
	OnFocus func()
	// AllowedHosts are host names, besides loopback ones, that requests may
	// name in their Host header: the names a remote browser or agent uses to
	// reach a non-loopback --addr.
	AllowedHosts []string
}

// Instance is a running Airlock backend.
type Instance struct {
	API     *api.API
	Hub     *api.Hub
	UIToken string
	Addr    string // the address actually listened on
	Info    api.Info
	base    string // host:port for URLs: Addr, or a usable name for it

	db      *store.DB
	cfg     *config.Store
	sup     *gateway.Supervisor
	srv     *http.Server
	cancel  context.CancelFunc
	log     *slog.Logger
	closers []func()
}

// UIURL is the browser URL of the UI, with its access token.
func (in *Instance) UIURL() string { return "http://" + in.base + "/?token=" + in.UIToken }

// Start opens the data directory, starts the downstream servers and listens.
func Start(ctx context.Context, o Options) (_ *Instance, err error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	in := &Instance{Hub: api.NewHub(), log: o.Logger}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	ctx, in.cancel = context.WithCancel(ctx)

	lock, err := lockDataDir(o.DataDir)
	if err != nil {
		return nil, err
	}
	in.closers = append(in.closers, lock.release)

	in.db, err = store.Open(filepath.Join(o.DataDir, store.FileName))
	if err != nil {
		return nil, err
	}
	in.closers = append(in.closers, func() { in.db.Close() })

	agentToken, err := cli.AgentToken(o.DataDir, true)
	if err != nil {
		return nil, err
	}
	auth := newTokenAuth(o.DataDir, agentToken)

	in.cfg, err = config.New(filepath.Join(o.DataDir, "servers.json"), in.Hub)
	if err != nil {
		return nil, err
	}
	go in.cfg.Watch(ctx)

	// The audit log is closed after the supervisor (closers run last to
	// first), so that calls still finishing can record themselves.
	audit, err := store.OpenAuditLog(in.db, filepath.Join(o.DataDir, store.JournalFileName), o.Logger)
	if err != nil {
		return nil, err
	}
	auditWriter := gateway.NewAuditWriter(audit, in.Hub, o.Logger)
	in.closers = append(in.closers, func() { auditWriter.Close(); audit.Close() })

	toolPins, err := pins.New(store.NewPins(in.db))
	if err != nil {
		return nil, err
	}
	in.sup = gateway.NewSupervisor(Version, o.Supervisor)
	in.closers = append(in.closers, in.sup.Close)
	in.sup.OnEvent(func(ev gateway.SupervisorEvent) {
		if ev.ToolsChanged && ev.Status.State == core.StateRunning {
			if _, err := toolPins.Observe(ev.Status.ID, ev.Status.Tools); err != nil {
				o.Logger.Error("store accepted tool definitions", "server", ev.Status.ID, "err", err)
			}
		}
		in.Hub.Emit(core.EventServerStatus, toolPins.Annotate(ev.Status))
	})

	pipe := &gateway.Pipeline{Dispatch: in.sup, Audit: auditWriter, Policy: pinPolicy{toolPins}}
	hitlDeps, err := in.startHITL(ctx, o, pipe, audit)
	if err != nil {
		return nil, err
	}
	gw := gateway.New(in.sup, pipe, auth, gateway.Options{Version: Version, Logger: o.Logger})

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

	in.Info = api.Info{
		Version: Version, MCPURL: "http://" + base + "/mcp", SSEURL: "http://" + base + "/sse",
		AgentToken: agentToken, DataDir: o.DataDir, ConfigPath: in.cfg.State().Path,
	}
	deps := api.Deps{Info: in.Info, Config: in.cfg, Supervisor: in.sup, Audit: audit, DB: in.db, Pins: toolPins, Events: in.Hub}
	hitlDeps.apply(&deps)
	in.API = api.New(deps)

	focusToken := randomToken()
	routes := api.Routes{Security: sec, API: in.API, Hub: in.Hub, MCP: gw.StreamableHandler(), SSE: gw.SSEHandler(), UI: o.UI,
		Focus: focusHandler(focusToken, o.OnFocus)}
	in.srv = &http.Server{Handler: routes.Handler(), ReadHeaderTimeout: 10 * time.Second}
	// A second launch runs on this machine: give it a loopback address.
	focusAddr := in.Addr
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		focusAddr = net.JoinHostPort("127.0.0.1", port)
	}
	if err := lock.publish(lockInfo{PID: os.Getpid(), Addr: focusAddr, FocusToken: focusToken}); err != nil {
		ln.Close()
		return nil, fmt.Errorf("write lock file: %w", err)
	}
	go in.srv.Serve(ln)

	// Servers start after the listener so that a slow server never delays
	// the UI; config changes (UI, CLI, editor) re-apply.
	in.cfg.Subscribe(in.sup.Apply)
	in.sup.Apply(in.cfg.List())
	return in, nil
}

// Close stops serving, stops the downstream servers and closes the store.
func (in *Instance) Close() {
	if in.cancel != nil {
		in.cancel()
	}
	if in.srv != nil {
		// Shutdown waits for requests to finish, but event streams (SSE,
		// standalone MCP streams) never do: close whatever is left.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if err := in.srv.Shutdown(ctx); err != nil {
			in.srv.Close()
		}
		cancel()
	}
	for i := len(in.closers) - 1; i >= 0; i-- {
		in.closers[i]()
	}
	in.closers = nil
}

// tokenAuth checks agent tokens against the hash of the data directory's
// token, re-reading the file (at most once a second) when it changed, so that
// `airlock token --rotate` takes effect in a running Airlock.
type tokenAuth struct {
	dataDir string

	mu      sync.Mutex
	hash    [32]byte
	modTime time.Time
	checked time.Time
}

func newTokenAuth(dataDir, token string) *tokenAuth {
	a := &tokenAuth{dataDir: dataDir, hash: cli.HashToken(token), checked: time.Now()}
	if fi, err := os.Stat(filepath.Join(dataDir, cli.TokenFile)); err == nil {
		a.modTime = fi.ModTime()
	}
	return a
}

// Authenticate compares in constant time. Until per-agent tokens exist every
// holder of the token is the agent "agent".
func (a *tokenAuth) Authenticate(tok string) (string, bool) {
	a.mu.Lock()
	if time.Since(a.checked) > time.Second {
		a.checked = time.Now()
		if fi, err := os.Stat(filepath.Join(a.dataDir, cli.TokenFile)); err == nil && !fi.ModTime().Equal(a.modTime) {
			if t, err := cli.AgentToken(a.dataDir, false); err == nil {
				a.hash, a.modTime = cli.HashToken(t), fi.ModTime()
			}
		}
	}
	h := a.hash
	a.mu.Unlock()
	if cli.TokenMatches(h, tok) {
		return "agent", true
	}
	return "", false
}

func randomToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// TuneRuntime sets the Go runtime for a gateway: the default GC target makes
// the collector run several times per thousand calls, so Airlock trades a
// larger heap target for fewer collections while a soft memory limit keeps
// the resident size small. main calls it once; the benchmarks call it too so
// that they measure what the binary does.
func TuneRuntime() {
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(32 << 20)
}

// pinPolicy is the pipeline's policy stage for changed tools: a tool whose
// definition changed since the user accepted it always asks, whatever the
// rules say, until the change is accepted on the Servers screen.
type pinPolicy struct{ pins *pins.Pins }

func (p pinPolicy) Check(_ context.Context, c *gateway.Call) (bool, string, error) {
	ch, ok := p.pins.Changed(c.Tool.ServerID, c.Tool.Name)
	if !ok {
		return false, "", nil
	}
	return true, fmt.Sprintf("the definition of %s changed since you accepted it (%s) — accept the change on the Servers screen to stop this",
		c.Tool.ExposedName, strings.Join(ch.Fields, ", ")), nil
}
