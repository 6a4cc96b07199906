package authz

import (
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
)

// How a connection identified itself.
const (
	// ViaAgentToken: Authorization: Bearer with an agent token (alk_…).
	ViaAgentToken = "agent_token"
	// ViaSessionToken: Authorization: Bearer with a session token (als_…).
	ViaSessionToken = "session_token"
)

// Identity is who a credential identifies. The gateway gets one from
// IdentifyToken for a connection's bearer token and may set Purpose and
// ProjectID from the connection's URL (?purpose=chat&project=X), which
// Resolve then checks; the zero Identity is an unauthenticated connection.
type Identity struct {
	AgentID   string `json:"agentId,omitempty"`
	AgentName string `json:"agentName,omitempty"`
	// Via is ViaAgentToken or ViaSessionToken.
	Via string `json:"via,omitempty"`
	// TokenID is the agent token's id (ViaAgentToken).
	TokenID string `json:"tokenId,omitempty"`
	// AuthSession is the session's id (ViaSessionToken).
	AuthSession string `json:"authSession,omitempty"`
	// Purpose is the session purpose: the session's own for a session
	// token; for an agent token the connection's choice, task by default.
	Purpose string `json:"purpose,omitempty"`
	// ProjectID is the project the session works in (an id, or for an
	// agent token also a name the connection gave).
	ProjectID string `json:"projectId,omitempty"`
}

// liveSession is a session opened by authenticate, as the running Airlock
// keeps it.
type liveSession struct {
	rec     SessionRecord
	revoked atomic.Bool
}

// mcpState is what the service knows of one MCP session.
type mcpState struct {
	// owner is the agent that opened the MCP session ("" for a
	// connection without credentials); ownerSet once known.
	owner    string
	ownerSet bool
	// bound is the agent session authenticate bound to it.
	bound    string
	client   core.ClientInfo
	agent    string // the agent the last request resolved to
	lastSeen atomic.Int64
}

func errInvalidSession() *core.Error {
	return core.Errorf(core.EUnauthorized, "Invalid session_token. Please re-authenticate.").
		WithHint("call authenticate(agent_id, passkey, project_id, purpose) for a new session token")
}

func errExpiredSession() *core.Error {
	return core.Errorf(core.EUnauthorized, "Session token has expired. Please re-authenticate.").
		WithHint("call authenticate(agent_id, passkey, project_id, purpose) for a new session token")
}

func errUnknownToken() *core.Error {
	return core.Errorf(core.EUnauthorized, "Unknown agent token").
		WithHint("the token may have been replaced: 'airlock token' prints the shared agent token as it is now; an agent's own token is on Airlock's Agents screen, or a new one from 'airlock agents token NAME --rotate'")
}

// IdentifyToken says whose token tok is: an agent token (alk_…) or a
// session token (als_…). An unknown, malformed, expired or revoked token
// is a core.EUnauthorized error; the token of a suspended or disabled
// agent is the gate-1 refusal (code "suspended", "account is suspended"),
// returned together with the identity so the refusal can be audited under
// the agent's name.
func (s *Service) IdentifyToken(tok string) (Identity, error) {
	switch {
	case strings.HasPrefix(tok, TokenPrefix):
		if !wellFormed(tok, TokenPrefix) {
			return Identity{}, errUnknownToken()
		}
		h := HashSecret(tok)
		s.tokMu.RLock()
		rec, ok := s.tokens[h]
		s.tokMu.RUnlock()
		if !ok || !hashMatches(rec.Hash, h) {
			return Identity{}, errUnknownToken()
		}
		e, err := s.entry(rec.AgentID)
		if err != nil {
			return Identity{}, err
		}
		id := Identity{AgentID: rec.AgentID, AgentName: e.agent.Name, Via: ViaAgentToken, TokenID: rec.ID, Purpose: core.PurposeTask}
		if err := e.statusErr(); err != nil {
			return id, err
		}
		return id, nil
	case strings.HasPrefix(tok, SessionPrefix):
		ls, err := s.sessionByToken(tok)
		if err != nil {
			return Identity{}, err
		}
		e, cerr := s.entry(ls.rec.AgentID)
		if cerr != nil {
			return Identity{}, cerr
		}
		id := Identity{AgentID: ls.rec.AgentID, AgentName: e.agent.Name, Via: ViaSessionToken, AuthSession: ls.rec.ID,
			Purpose: ls.rec.Purpose, ProjectID: ls.rec.ProjectID}
		if err := e.statusErr(); err != nil {
			return id, err
		}
		return id, nil
	}
	return Identity{}, core.Errorf(core.EUnauthorized, "Unknown token").
		WithHint("present an agent token (alk_…) or a session token (als_…) from authenticate")
}

// Key names the identity an MCP session belongs to: a request on a session
// with another Key is refused. It is the agent (any token of the same
// agent is the same identity), "" for a connection without credentials.
func (id Identity) Key() string {
	if id.AgentID == "" {
		return ""
	}
	return "agent:" + id.AgentID
}

// IdentifyRequest identifies an HTTP request to the MCP endpoint (gate 1):
// its "Authorization: Bearer" token, and for an agent token the
// connection's ?purpose=task|chat and ?project=ID-or-name, which MCP
// clients can put in the URL of their config files. No Authorization
// header is the zero Identity (unauthenticated). A bad header, token,
// purpose or project is a *core.Error; a suspended agent's token is the
// refusal together with the identity, as IdentifyToken returns it.
func (s *Service) IdentifyRequest(r *http.Request) (Identity, error) {
	raw := r.Header.Get("Authorization")
	q := r.URL.Query()
	purpose, project := q.Get("purpose"), q.Get("project")
	if raw == "" {
		if purpose != "" || project != "" {
			return Identity{}, core.Errorf(core.EUnauthorized, "?purpose and ?project need an agent token").
				WithHint("send Authorization: Bearer <agent token>, or call authenticate with purpose and project_id")
		}
		if q.Has("token") || q.Has("access_token") {
			// Left unsaid, the client would get an unauthenticated session
			// and wonder where its tools went.
			return Identity{}, core.Errorf(core.EUnauthorized, "a token in the URL is not read (URLs end up in logs and histories)").
				WithHint("send it as a header: Authorization: Bearer <agent token>")
		}
		return Identity{}, nil
	}
	// The scheme is case-insensitive (RFC 9110 §11.1).
	scheme, tok, ok := strings.Cut(strings.TrimSpace(raw), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return Identity{}, core.Errorf(core.EUnauthorized, "the Authorization header is not a bearer token").
			WithHint("send Authorization: Bearer <token>")
	}
	id, err := s.IdentifyToken(strings.TrimSpace(tok))
	if err != nil {
		return id, err
	}
	if id.Via == ViaSessionToken {
		if (purpose != "" && purpose != id.Purpose) || (project != "" && project != id.ProjectID) {
			return Identity{}, core.Errorf(core.EInvalid, "a session token carries its own purpose (%s) and project; the URL cannot change them", id.Purpose).
				WithHint("authenticate again with the purpose and project you need")
		}
		return id, nil
	}
	if purpose != "" {
		if purpose != core.PurposeTask && purpose != core.PurposeChat {
			return Identity{}, core.Errorf(core.EInvalid, "Invalid purpose: %s. Valid values: task, chat", purpose)
		}
		id.Purpose = purpose
	}
	if project != "" {
		e, cerr := s.entry(id.AgentID)
		if cerr != nil {
			return Identity{}, cerr
		}
		pid, ok := e.projects[project]
		if !ok {
			p, err := s.findProject(project)
			if err != nil {
				return Identity{}, core.Errorf(EProjectNotFound, "Project not found: %s", project)
			}
			// Who it is stays known: a session opened while the agent was
			// in the project is refused inside, call by call, as a
			// suspended agent's is, not at the door (found by a new-user
			// test: every request got HTTP 403, which clients take for a
			// broken server).
			id.ProjectID = p.ID
			return id, notAssigned(e.agent, project)
		}
		id.ProjectID = pid
	}
	return id, nil
}

// sessionByToken finds the live session of a session token.
func (s *Service) sessionByToken(tok string) (*liveSession, *core.Error) {
	if !wellFormed(tok, SessionPrefix) {
		return nil, errInvalidSession()
	}
	h := HashSecret(tok)
	s.sessMu.RLock()
	ls := s.sessByHash[h]
	s.sessMu.RUnlock()
	if ls == nil {
		rec, err := s.store.SessionByHash(h)
		if err != nil {
			if core.ErrorCode(err) == core.ENotFound {
				return nil, errInvalidSession()
			}
			return nil, core.Errorf(core.EInternal, "Airlock cannot read sessions, so it refuses: %v", core.ErrorMessage(err))
		}
		ls = s.remember(rec)
	}
	if !hashMatches(ls.rec.Hash, h) {
		return nil, errInvalidSession()
	}
	if err := s.liveErr(ls); err != nil {
		return nil, err
	}
	return ls, nil
}

// remember keeps rec in memory and returns its live session.
func (s *Service) remember(rec SessionRecord) *liveSession {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	if ls := s.sessions[rec.ID]; ls != nil {
		return ls
	}
	ls := &liveSession{rec: rec}
	if rec.RevokedAt != nil {
		ls.revoked.Store(true)
	}
	s.sessions[rec.ID] = ls
	s.sessByHash[rec.Hash] = ls
	return ls
}

func (s *Service) liveErr(ls *liveSession) *core.Error {
	if ls.revoked.Load() {
		return errInvalidSession()
	}
	if !s.now().Before(ls.rec.ExpiresAt) {
		return errExpiredSession()
	}
	return nil
}

// sessionByID returns the live session id, reading the store when it is
// not in memory.
func (s *Service) sessionByID(id string) (*liveSession, *core.Error) {
	s.sessMu.RLock()
	ls := s.sessions[id]
	s.sessMu.RUnlock()
	if ls != nil {
		return ls, nil
	}
	rec, err := s.store.SessionByID(id)
	if err != nil {
		if core.ErrorCode(err) == core.ENotFound {
			return nil, errInvalidSession()
		}
		return nil, core.Errorf(core.EInternal, "Airlock cannot read sessions, so it refuses: %v", core.ErrorMessage(err))
	}
	return s.remember(rec), nil
}

// sessionAlive refuses a caller whose agent session ended since it was
// resolved (logout, expiry) or that claims another agent's session.
func (s *Service) sessionAlive(id, agentID string) *core.Error {
	ls, err := s.sessionByID(id)
	if err != nil {
		return err
	}
	if ls.rec.AgentID != agentID {
		return errInvalidSession()
	}
	return s.liveErr(ls)
}

// Session is what authenticate returns: the token, shown once, and the
// session it opens.
type Session struct {
	Token     string        `json:"token"`
	Record    SessionRecord `json:"session"`
	AgentName string        `json:"agentName"`
}

// Error codes of authenticate (seed 001's names where it has them).
const (
	EAgentNotFound            = "agent_not_found"
	EProjectNotFound          = "project_not_found"
	EAgentNotAssigned         = "agent_not_assigned_to_project"
	ETooManyAttempts          = "too_many_attempts"
	errCredentials            = "Invalid agent_id or passkey"
	errCredentialsHintPasskey = "the passkey was shown once when the agent was created; make a new one on the Agents screen or with 'airlock agents passkey NAME'"
)

// Authenticate opens an agent session (seed 000's authenticate): agentRef
// is the agent's id or name, purpose task (the default) or chat, and
// projectRef, when given, a project (id or name) the agent is assigned to.
// It returns the session token, shown once; only its hash is stored.
// Repeated failures for one agent id, or overall, are refused for a while
// (see Limits).
func (s *Service) Authenticate(agentRef, passkey, projectRef, purpose string) (Session, error) {
	now := s.now()
	if purpose == "" {
		purpose = core.PurposeTask
	}
	if purpose != core.PurposeTask && purpose != core.PurposeChat {
		return Session{}, core.Errorf(core.EInvalid, "Invalid purpose: %s. Valid values: task, chat", purpose)
	}
	// Failures count per agent (by id, however it was named) and overall;
	// while a delay runs, a wrong passkey is refused as too many attempts.
	// The right one is always let in: passkeys are 256 random bits, which
	// no rate of guessing finds, while a delay that held it back too let
	// anyone who can reach Airlock keep an agent, or every agent, from
	// logging in by failing on purpose (found by a red-team review).
	a, err := s.findAgent(agentRef)
	key := agentRef
	if err == nil {
		key = a.ID
	}
	w := s.limiter.wait(key, now)
	refuse := func() (Session, error) {
		if w > 0 {
			return Session{}, core.Errorf(ETooManyAttempts, "Too many failed authentication attempts; try again in %s", (w + time.Second - 1).Truncate(time.Second)).
				WithHint("check agent_id and passkey before trying again")
		}
		s.limiter.fail(key, now)
		return Session{}, core.Errorf(core.EUnauthorized, errCredentials).WithHint(errCredentialsHintPasskey)
	}
	if err != nil {
		if core.ErrorCode(err) == core.ENotFound {
			// The same answer, after the same work, as a wrong passkey:
			// authenticate must not tell who exists (found in a security
			// review: agent names could be listed without a credential).
			SecretMatches(HashSecret(agentRef), passkey)
			return refuse()
		}
		return Session{}, err
	}
	hash, err := s.store.PasskeyHash(a.ID)
	if err != nil {
		return Session{}, err
	}
	if hash == ([32]byte{}) || !SecretMatches(hash, passkey) {
		return refuse()
	}
	s.limiter.succeed(key)
	return s.openSession(a, projectRef, purpose, now, s.opts.SessionTTL)
}

// openSession opens a session of agent a, which must be active and, when
// projectRef is given, assigned to that project.
func (s *Service) openSession(a Agent, projectRef, purpose string, now time.Time, ttl time.Duration) (Session, error) {
	return s.openSessionAs(sessionIDPrefix, a, projectRef, purpose, now, ttl)
}

// Session record ids: an agent's own (authenticate) and a run's.
const (
	sessionIDPrefix    = "ses_"
	runSessionIDPrefix = "run_"
)

func (s *Service) openSessionAs(idPrefix string, a Agent, projectRef, purpose string, now time.Time, ttl time.Duration) (Session, error) {
	if a.Status != StatusActive {
		return Session{}, accountErr(a)
	}
	var projectID string
	if projectRef != "" {
		p, err := s.findProject(projectRef)
		if err != nil {
			if core.ErrorCode(err) == core.ENotFound {
				return Session{}, core.Errorf(EProjectNotFound, "Project not found: %s", projectRef)
			}
			return Session{}, err
		}
		if !contains(a.Projects, p.ID) {
			return Session{}, notAssigned(a, p.ID)
		}
		projectID = p.ID
	}
	tok, err := newSecret(SessionPrefix)
	if err != nil {
		return Session{}, err
	}
	rec := SessionRecord{ID: newID(idPrefix), Hash: HashSecret(tok), AgentID: a.ID, ProjectID: projectID, Purpose: purpose,
		CreatedAt: now.UTC(), ExpiresAt: now.Add(ttl).UTC()}
	if err := s.store.CreateSession(rec); err != nil {
		return Session{}, err
	}
	s.remember(rec)
	return Session{Token: tok, Record: rec, AgentName: a.Name}, nil
}

func notAssigned(a Agent, projectID string) *core.Error {
	return core.Errorf(EAgentNotAssigned, "Agent '%s' is not assigned to project '%s'. Assign the agent to the project first.", a.ID, projectID).
		WithHint(uiLink(a, "Projects", "projects"))
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// Logout ends the agent session id (only that one) and unbinds it from
// the MCP session that asked (from; "" for none). Other MCP sessions bound
// to it keep the binding until their next request, which is told the
// session ended (found by a regression test: one logged out from another
// connection went on as its connection's own agent without a word).
// Ending a session that already ended is not an error.
func (s *Service) Logout(authSessionID, from string) error {
	ls, err := s.sessionByID(authSessionID)
	if err != nil {
		return core.Errorf(core.ENotFound, "session %s not found", authSessionID)
	}
	if err := s.store.RevokeSession(authSessionID, s.now()); err != nil {
		return err
	}
	ls.revoked.Store(true)
	s.sessMu.Lock()
	if st := s.mcp[from]; st != nil && st.bound == authSessionID {
		st.bound = ""
	}
	s.sessMu.Unlock()
	// The connection that asked falls back to what it carries.
	s.notify([]string{ls.rec.AgentID})
	return nil
}

// Bind binds the agent session authSessionID (opened by authenticate) to
// the MCP session mcpSessionID: Resolve then prefers it to anything else
// the connection carries.
func (s *Service) Bind(mcpSessionID, authSessionID string) error {
	if mcpSessionID == "" {
		return core.Errorf(core.EInvalid, "no MCP session to bind to")
	}
	ls, err := s.sessionByID(authSessionID)
	if err != nil {
		return err
	}
	if err := s.liveErr(ls); err != nil {
		return err
	}
	s.sessMu.Lock()
	st := s.mcpStateLocked(mcpSessionID)
	st.bound = authSessionID
	st.lastSeen.Store(s.now().UnixNano())
	s.sessMu.Unlock()
	// The MCP session is now another identity: what it may see changed.
	s.notify([]string{ls.rec.AgentID})
	return nil
}

// RestoreBinding binds authSessionID to mcpSessionID again, as it was
// bound before Airlock restarted, without checking that it is still live:
// if it ended meanwhile (expired, logged out), the session's next request
// is refused saying so and the binding goes, as on a session that never
// stopped (found by a code review: it fell back to the connection's own
// agent without a word).
func (s *Service) RestoreBinding(mcpSessionID, authSessionID string) (live bool) {
	if mcpSessionID == "" || authSessionID == "" {
		return false
	}
	if ls, err := s.sessionByID(authSessionID); err == nil {
		live = s.liveErr(ls) == nil
	}
	s.sessMu.Lock()
	st := s.mcpStateLocked(mcpSessionID)
	st.bound = authSessionID
	st.lastSeen.Store(s.now().UnixNano())
	s.sessMu.Unlock()
	return live
}

// mcpStateLocked returns what is known of MCP session id, made on first
// use. s.sessMu is held.
func (s *Service) mcpStateLocked(id string) *mcpState {
	st := s.mcp[id]
	if st == nil {
		st = &mcpState{}
		s.mcp[id] = st
	}
	return st
}

// Binding returns the agent session bound to mcpSessionID ("" for none).
func (s *Service) Binding(mcpSessionID string) string {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	if st := s.mcp[mcpSessionID]; st != nil {
		return st.bound
	}
	return ""
}

// Unbind removes the agent session bound to mcpSessionID, if any.
func (s *Service) Unbind(mcpSessionID string) {
	s.sessMu.Lock()
	changed := false
	if st := s.mcp[mcpSessionID]; st != nil && st.bound != "" {
		st.bound, changed = "", true
	}
	s.sessMu.Unlock()
	if changed {
		s.notify([]string{""}) // someone's session became unauthenticated
	}
}

// SessionEnded forgets the MCP session: its owner, binding and client.
// The agent session that was bound to it stays valid until it expires or
// is logged out; its token still works elsewhere.
func (s *Service) SessionEnded(mcpSessionID string) {
	s.sessMu.Lock()
	delete(s.mcp, mcpSessionID)
	s.sessMu.Unlock()
}

// SessionClient records what the MCP client of mcpSessionID says it is
// (from initialize), for Resolve to put in the Caller. Display only.
func (s *Service) SessionClient(mcpSessionID string, info core.ClientInfo) {
	if mcpSessionID == "" {
		return
	}
	s.sessMu.Lock()
	st := s.mcpStateLocked(mcpSessionID)
	st.client = info
	s.sessMu.Unlock()
}

// MCPSessions returns the MCP sessions whose latest request resolved to
// one of the given agents: the sessions to send list_changed to after
// OnChange reported those agents.
func (s *Service) MCPSessions(agentIDs []string) []string {
	want := map[string]bool{}
	for _, id := range agentIDs {
		want[id] = true
	}
	s.sessMu.RLock()
	defer s.sessMu.RUnlock()
	var out []string
	for id, st := range s.mcp {
		if want[st.agent] || (st.owner != "" && want[st.owner]) {
			out = append(out, id)
		}
	}
	return dedupe(out)
}

// ErrSessionOwner is the code of a request on an MCP session made with
// another identity than the one that opened it.
const ErrSessionOwner = "session_owner_mismatch"

// Resolve says who makes a request on the MCP session mcpSessionID, where
// conn is the connection's identity (the zero Identity when it presented
// no token) and sessionToken the request's session_token argument, if any.
// In order: the agent session authenticate bound to the MCP session; else
// the session_token argument; else the connection's own identity (an
// agent token makes a task session unless conn.Purpose says chat); else
// the caller is unauthenticated (core.Caller with only Session and Client
// set).
//
// An MCP session belongs to the identity that opened it: a request with
// another agent's credentials on the connection, or none where there were
// some, is refused (ErrSessionOwner). A suspended or disabled agent gets
// the gate-1 refusal. On refusal the Caller holds as much as is known, so
// the refusal can be audited under the right name.
func (s *Service) Resolve(mcpSessionID string, conn Identity, sessionToken string) (core.Caller, error) {
	return s.resolve(mcpSessionID, conn, sessionToken, false)
}

// Peek is Resolve for a look at what session mcpSessionID may see (a
// listing's baseline): a binding that ended is taken as gone, as Resolve
// leaves it, but kept, so that the session's next request is told (found
// by a review: a list change dropped it without a word, and a session
// opened with a token was closed for it).
func (s *Service) Peek(mcpSessionID string, conn Identity) (core.Caller, error) {
	return s.resolve(mcpSessionID, conn, "", true)
}

func (s *Service) resolve(mcpSessionID string, conn Identity, sessionToken string, quiet bool) (core.Caller, error) {
	now := s.now()
	caller := core.Caller{Session: mcpSessionID}
	var st *mcpState
	var bound string
	if mcpSessionID != "" {
		s.sessMu.Lock()
		st = s.mcpStateLocked(mcpSessionID)
		if !st.ownerSet {
			st.owner, st.ownerSet = conn.AgentID, true
		}
		owner, client := st.owner, st.client
		bound = st.bound
		s.sessMu.Unlock()
		st.lastSeen.Store(now.UnixNano())
		caller.Client = client
		if owner != conn.AgentID {
			caller.AgentID = conn.AgentID
			return caller, core.Errorf(core.EForbidden, "MCP session %s belongs to another identity than this request's", mcpSessionID).
				WithHint("open a new MCP session with your own credentials; a session id cannot be shared")
		}
	}

	var boundLS *liveSession
	if bound != "" {
		ls, err := s.sessionByID(bound)
		if err == nil {
			err = s.liveErr(ls)
		}
		switch {
		case err == nil:
			boundLS = ls
		case quiet:
			bound = "" // as Resolve leaves it, without telling
		default:
			s.Unbind(mcpSessionID)
			return caller, err
		}
	}

	var agentID, authSession, purpose, project string
	switch {
	case bound != "":
		ls := boundLS
		agentID, authSession, purpose, project = ls.rec.AgentID, ls.rec.ID, ls.rec.Purpose, ls.rec.ProjectID
	case sessionToken != "":
		ls, err := s.sessionByToken(sessionToken)
		if err != nil {
			return caller, err
		}
		agentID, authSession, purpose, project = ls.rec.AgentID, ls.rec.ID, ls.rec.Purpose, ls.rec.ProjectID
	case conn.AgentID != "":
		if conn.Via == ViaAgentToken && conn.TokenID != "" && !s.tokenLive(conn.TokenID) {
			// Rotated or deleted since this connection presented it: an
			// event stream opened with it must not go on hearing.
			return caller, core.Errorf(core.EUnauthorized, "the agent token this connection was opened with was rotated or deleted").
				WithHint("connect again with the agent's current token")
		}
		agentID, authSession, purpose, project = conn.AgentID, conn.AuthSession, conn.Purpose, conn.ProjectID
		if authSession != "" {
			ls, err := s.sessionByID(authSession)
			if err == nil {
				err = s.liveErr(ls)
			}
			if err != nil {
				return caller, err
			}
			// A session's purpose and project are its own; the URL may
			// repeat them but not change them.
			if (purpose != "" && purpose != ls.rec.Purpose) || (project != "" && project != ls.rec.ProjectID) {
				return caller, core.Errorf(core.EInvalid, "this session's purpose is '%s' and its project '%s'; the connection cannot change them",
					ls.rec.Purpose, ls.rec.ProjectID).WithHint("authenticate again with the purpose and project you need")
			}
			purpose, project = ls.rec.Purpose, ls.rec.ProjectID
		}
	default:
		return caller, nil
	}

	caller.AgentID = agentID
	e, cerr := s.entry(agentID)
	if cerr != nil {
		return caller, cerr
	}
	if purpose == "" {
		purpose = core.PurposeTask
	}
	if purpose != core.PurposeTask && purpose != core.PurposeChat {
		return caller, core.Errorf(core.EInvalid, "Invalid purpose: %s. Valid values: task, chat", purpose)
	}
	var left *core.Error
	if project != "" {
		id, ok := e.projects[project]
		switch {
		case !ok && authSession != "":
			// A session opened for a project the agent has since left
			// works there no more.
			left = notAssigned(e.agent, project)
		case !ok:
			if _, err := s.findProject(project); err != nil {
				return caller, core.Errorf(EProjectNotFound, "Project not found: %s", project)
			}
			left = notAssigned(e.agent, project)
		default:
			project = id
		}
	}
	// A caller refused for a project it left is known whole all the same:
	// help still answers it (ToolHelp), and tells it why the rest is
	// refused.
	caller.AgentName, caller.Kind, caller.Role = e.agent.Name, e.agent.Kind, e.agent.Role
	caller.AuthSession, caller.Purpose, caller.ProjectID = authSession, purpose, project
	if left != nil {
		return caller, left
	}
	if authSession == "" && conn.Via == ViaAgentToken && conn.AgentID == agentID {
		caller.TokenID = conn.TokenID
	}
	if st != nil {
		s.sessMu.Lock()
		st.agent = agentID
		s.sessMu.Unlock()
	}
	if err := e.statusErr(); err != nil {
		return caller, err
	}
	return caller, nil
}

// Holds re-checks what a caller was resolved from, for a call that waited
// for a person: the agent token it came with is still the agent's, and the
// project its session works in is still one of the agent's (found by a
// new-user test: a waiting call ran when approved after the token was
// rotated, the agent taken off the project or the project deleted). Check
// covers the rest (suspension, grants, toggles, an ended agent session).
func (s *Service) Holds(c *core.Caller) error {
	if c.AgentID == "" {
		return nil
	}
	if c.AuthSession == "" && c.TokenID != "" && !s.tokenLive(c.TokenID) {
		return core.Errorf(core.EUnauthorized, "the agent token the call was made with was rotated or deleted").
			WithHint("connect again with the agent's current token")
	}
	if err := s.leftProject(c); err != nil {
		return err
	}
	return nil
}

// Sweep forgets sessions that ended more than an hour ago (in memory and
// in the store) and MCP sessions unused for a day. Watch runs it every ten
// minutes.
func (s *Service) Sweep() error {
	now := s.now()
	cut := now.Add(-time.Hour)
	if _, err := s.store.PurgeSessions(cut); err != nil {
		return err
	}
	stale := now.Add(-24 * time.Hour).UnixNano()
	s.sessMu.Lock()
	for id, ls := range s.sessions {
		if ls.rec.ExpiresAt.Before(cut) || (ls.revoked.Load() && (ls.rec.RevokedAt == nil || ls.rec.RevokedAt.Before(cut))) {
			delete(s.sessions, id)
			delete(s.sessByHash, ls.rec.Hash)
		}
	}
	for id, st := range s.mcp {
		if st.lastSeen.Load() < stale {
			delete(s.mcp, id)
		}
	}
	s.sessMu.Unlock()
	return nil
}

// findAgent returns the agent with id or name ref.
func (s *Service) findAgent(ref string) (Agent, error) {
	if ref == "" {
		return Agent{}, core.Errorf(core.ENotFound, "Agent not found: (empty)")
	}
	a, err := s.store.GetAgent(ref)
	if err == nil || core.ErrorCode(err) != core.ENotFound {
		return a, err
	}
	agents, lerr := s.store.ListAgents()
	if lerr != nil {
		return Agent{}, lerr
	}
	for _, a := range agents {
		if a.Name == ref {
			return a, nil
		}
	}
	return Agent{}, core.Errorf(core.ENotFound, "Agent not found: %s", ref)
}

// findProject returns the project with id or name ref.
func (s *Service) findProject(ref string) (Project, error) {
	projects, err := s.store.ListProjects()
	if err != nil {
		return Project{}, err
	}
	for _, p := range projects {
		if p.ID == ref || p.Name == ref {
			return p, nil
		}
	}
	return Project{}, core.Errorf(core.ENotFound, "Project not found: %s", ref)
}
