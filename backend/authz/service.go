package authz

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
)

// Defaults of Options.
const (
	DefaultCacheTTL     = 5 * time.Minute
	DefaultSessionTTL   = 24 * time.Hour
	DefaultPollInterval = 500 * time.Millisecond
)

// Options configures a Service. Zero values are sensible.
type Options struct {
	// Registry is the table of Airlock's own tools; nil means
	// DefaultRegistry().
	Registry *Registry
	// Now is the clock (tests pass a fake one); nil means time.Now.
	Now func() time.Time
	// CacheTTL is how long an agent's computed permissions are kept
	// (seed 003: 5 minutes). Changes made through the Service invalidate
	// at once; the TTL bounds staleness from anything else.
	CacheTTL time.Duration
	// SessionTTL is the lifetime of a session opened by authenticate.
	SessionTTL time.Duration
	// PollInterval is how often Watch looks for changes other processes
	// (the CLI) made.
	PollInterval time.Duration
	// Limits slow down repeated failed authenticate calls; zero fields
	// take the defaults of DefaultLimits.
	Limits Limits
	Logger *slog.Logger
}

// Service is Airlock's identity and authorization service: who a caller is
// (tokens, sessions, MCP session bindings), what it may use (permission
// levels, grants, toggles, the cache), the help tool, and the management
// of agents, projects and roles.
type Service struct {
	store Store
	reg   *Registry
	opts  Options
	now   func() time.Time
	log   *slog.Logger

	// mu serialises management changes and reloads.
	mu        sync.Mutex
	dbVersion int64 // the store's AgentsVersion last seen

	cacheMu sync.RWMutex
	cache   map[string]*entry
	// gen is bumped by every invalidation, so that an entry loaded while
	// an invalidation ran is not kept (it may hold the old state).
	gen atomic.Uint64

	tokMu    sync.RWMutex
	tokens   map[[32]byte]TokenRecord
	tokenIDs map[string]bool // the ids of the tokens in tokens

	sessMu     sync.RWMutex
	sessions   map[string]*liveSession   // by session id
	sessByHash map[[32]byte]*liveSession // by token hash
	mcp        map[string]*mcpState      // by MCP session id

	limiter *limiter

	hookMu sync.Mutex
	hooks  []func(agentIDs []string)
}

// entry is an agent's cached state and its memoised decisions (seed 003's
// cache entry: allowed + reason per target, computed once).
type entry struct {
	agent     Agent
	superuser bool
	grants    map[string]bool
	toolPerms map[ToolRef]bool
	disabled  map[ToolRef]bool
	// projects maps the id and the name of each assigned project to its id.
	projects map[string]string
	expires  time.Time

	mu        sync.RWMutex
	decisions map[decKey]decision
}

// New returns the service over st. It loads the agent tokens; everything
// else is read when first needed.
func New(st Store, opts Options) (*Service, error) {
	if opts.Registry == nil {
		opts.Registry = DefaultRegistry()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.CacheTTL <= 0 {
		opts.CacheTTL = DefaultCacheTTL
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = DefaultSessionTTL
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{
		store: st, reg: opts.Registry, opts: opts, now: opts.Now, log: opts.Logger,
		cache:      map[string]*entry{},
		sessions:   map[string]*liveSession{},
		sessByHash: map[[32]byte]*liveSession{},
		mcp:        map[string]*mcpState{},
		limiter:    newLimiter(opts.Limits),
	}
	v, err := st.AgentsVersion()
	if err != nil {
		return nil, fmt.Errorf("read agents version: %w", err)
	}
	s.dbVersion = v
	if err := s.loadTokens(); err != nil {
		return nil, err
	}
	// A tool registered later changes what its name means: drop every
	// memoised decision.
	s.reg.onRegister(func() { s.InvalidateAll() })
	return s, nil
}

// Registry returns the table of Airlock's own tools.
func (s *Service) Registry() *Registry { return s.reg }

// OnChange registers fn to run after a change that may alter what the
// given agents may see or call (role, grants, tool permissions, toggles,
// status, parent, projects, compact mode, deletion), with their ids. The
// gateway sends notifications/tools/list_changed to their MCP sessions
// (MCPSessions says which). fn must not block.
func (s *Service) OnChange(fn func(agentIDs []string)) {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	s.hooks = append(s.hooks, fn)
}

func (s *Service) notify(ids []string) {
	if len(ids) == 0 {
		return
	}
	s.hookMu.Lock()
	hooks := append([]func([]string){}, s.hooks...)
	s.hookMu.Unlock()
	for _, h := range hooks {
		h(append([]string(nil), ids...))
	}
}

// Invalidate drops the cached permissions of the given agents and tells
// the OnChange hooks.
func (s *Service) Invalidate(agentIDs ...string) {
	s.drop(agentIDs)
	s.notify(dedupe(agentIDs))
}

func (s *Service) drop(agentIDs []string) {
	s.cacheMu.Lock()
	s.gen.Add(1)
	for _, id := range agentIDs {
		delete(s.cache, id)
	}
	s.cacheMu.Unlock()
}

// InvalidateAll drops every cached permission and tells the OnChange hooks
// about every agent.
func (s *Service) InvalidateAll() {
	s.cacheMu.Lock()
	s.gen.Add(1)
	ids := make([]string, 0, len(s.cache))
	for id := range s.cache {
		ids = append(ids, id)
	}
	s.cache = map[string]*entry{}
	s.cacheMu.Unlock()
	if agents, err := s.store.ListAgents(); err == nil {
		for _, a := range agents {
			ids = append(ids, a.ID)
		}
	} else {
		s.log.Warn("list agents after invalidating the permission cache", "err", err)
	}
	s.notify(dedupe(ids))
}

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// entry returns the agent's cache entry, loading it when missing or
// expired. Errors are refusals: an agent that no longer exists is
// unauthorized; a store failure refuses (fail closed).
func (s *Service) entry(agentID string) (*entry, *core.Error) {
	now := s.now()
	s.cacheMu.RLock()
	e := s.cache[agentID]
	s.cacheMu.RUnlock()
	if e != nil && now.Before(e.expires) {
		return e, nil
	}
	gen := s.gen.Load()
	e, err := s.load(agentID, now)
	if err != nil {
		var ce *core.Error
		if errors.As(err, &ce) && ce.Code == core.ENotFound {
			return nil, core.Errorf(core.EUnauthorized, "Agent not found: %s", agentID).
				WithHint("the agent was deleted; connect as an existing agent")
		}
		s.log.Error("load agent permissions; refusing", "agent", agentID, "err", err)
		return nil, core.Errorf(core.EInternal, "Airlock cannot read the permissions of agent %s, so it refuses: %v", agentID, core.ErrorMessage(err))
	}
	s.cacheMu.Lock()
	if s.gen.Load() == gen {
		s.cache[agentID] = e
	}
	s.cacheMu.Unlock()
	return e, nil
}

func (s *Service) load(agentID string, now time.Time) (*entry, error) {
	a, err := s.store.GetAgent(agentID)
	if err != nil {
		return nil, err
	}
	r, err := s.store.GetRole(a.Role)
	if err != nil {
		return nil, fmt.Errorf("role %s of agent %s: %w", a.Role, a.ID, err)
	}
	e := &entry{
		agent: a, superuser: r.IsSuperuser,
		grants: map[string]bool{}, toolPerms: map[ToolRef]bool{}, disabled: map[ToolRef]bool{},
		projects: map[string]string{}, expires: now.Add(s.opts.CacheTTL), decisions: map[decKey]decision{},
	}
	for _, srv := range r.Servers {
		e.grants[srv] = true
	}
	for _, t := range r.Tools {
		e.toolPerms[ToolRef{Server: t.Server, Tool: t.Tool}] = t.Allowed
	}
	for _, t := range a.DisabledTools {
		e.disabled[t] = true
	}
	if len(a.Projects) > 0 {
		projects, err := s.store.ListProjects()
		if err != nil {
			return nil, err
		}
		assigned := map[string]bool{}
		for _, p := range a.Projects {
			assigned[p] = true
		}
		for _, p := range projects {
			if assigned[p.ID] {
				e.projects[p.ID] = p.ID
				e.projects[p.Name] = p.ID
			}
		}
	}
	return e, nil
}

func (s *Service) loadTokens() error {
	recs, err := s.store.ListTokens()
	if err != nil {
		return fmt.Errorf("load agent tokens: %w", err)
	}
	m := make(map[[32]byte]TokenRecord, len(recs))
	ids := make(map[string]bool, len(recs))
	for _, r := range recs {
		m[r.Hash] = r
		ids[r.ID] = true
	}
	s.tokMu.Lock()
	s.tokens, s.tokenIDs = m, ids
	s.tokMu.Unlock()
	return nil
}

// noteVersionLocked records the store's version after a change this
// process made, so Reload does not take it for another process's.
func (s *Service) noteVersionLocked() {
	if v, err := s.store.AgentsVersion(); err == nil {
		s.dbVersion = v
	}
}

// Reload picks up changes another process (the CLI) made to agents, roles
// or tokens, and reports whether there were any: it reloads the tokens and
// invalidates every cached permission (the OnChange hooks hear of every
// agent). Watch calls it on every poll.
func (s *Service) Reload() (bool, error) {
	s.mu.Lock()
	v, err := s.store.AgentsVersion()
	if err != nil || v == s.dbVersion {
		s.mu.Unlock()
		return false, err
	}
	if err := s.loadTokens(); err != nil {
		s.mu.Unlock()
		return false, err
	}
	s.dbVersion = v
	s.mu.Unlock()
	// Sessions another process ended (a passkey rotated from the CLI)
	// are read again from the store at their next use.
	s.sessMu.Lock()
	clear(s.sessions)
	clear(s.sessByHash)
	s.sessMu.Unlock()
	s.InvalidateAll()
	return true, nil
}

// Watch keeps the service current until ctx ends: it polls for changes
// other processes made (Reload), and now and then forgets ended sessions
// and MCP sessions unused for a day.
func (s *Service) Watch(ctx context.Context) error {
	poll := time.NewTicker(s.opts.PollInterval)
	defer poll.Stop()
	sweep := time.NewTicker(10 * time.Minute)
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-poll.C:
			if _, err := s.Reload(); err != nil {
				s.log.Warn("reload agents", "err", err)
			}
		case <-sweep.C:
			if err := s.Sweep(); err != nil {
				s.log.Warn("sweep sessions", "err", err)
			}
		}
	}
}

// AdoptLegacyToken makes tok, the agent token of earlier versions (the
// agent-token file of the data directory), a token of the agent "default"
// that migration 0006 created. Call it at start and whenever the file
// changes (`airlock token --rotate`): it is idempotent, replaces the
// previous legacy token, and does nothing when the user deleted the agent
// "default" (the old token then stops working, as they asked).
func (s *Service) AdoptLegacyToken(tok string) error {
	if !wellFormed(tok, TokenPrefix) {
		return core.Errorf(core.EInvalid, "the legacy agent token is not an Airlock token").
			WithHint("run 'airlock token --rotate' to replace it")
	}
	h := HashSecret(tok)
	s.mu.Lock()
	s.tokMu.RLock()
	cur, ok := s.tokens[h]
	s.tokMu.RUnlock()
	if ok && cur.AgentID == DefaultAgentID && cur.Legacy {
		s.mu.Unlock()
		return nil
	}
	if _, err := s.store.GetAgent(DefaultAgentID); err != nil {
		s.mu.Unlock()
		if core.ErrorCode(err) == core.ENotFound {
			return nil
		}
		return err
	}
	rec := TokenRecord{ID: newID("tk_"), AgentID: DefaultAgentID, Hash: h, Prefix: displayPrefix(tok), Legacy: true, CreatedAt: s.now().UTC()}
	if err := s.store.ReplaceTokens(rec); err != nil {
		s.mu.Unlock()
		return err
	}
	err := s.loadTokens()
	s.noteVersionLocked()
	s.mu.Unlock()
	s.Invalidate(DefaultAgentID)
	return err
}

// tokenLive reports whether the agent token with id still exists (it was
// not rotated or deleted since a connection presented it).
func (s *Service) tokenLive(id string) bool {
	s.tokMu.RLock()
	defer s.tokMu.RUnlock()
	return s.tokenIDs[id]
}
