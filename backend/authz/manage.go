package authz

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/backend/core"
)

// The management API: what the Agents screen and the CLI call. Every
// method validates before it writes (bad input changes nothing and is a
// *core.Error saying why), serialises with the other changes, and then
// invalidates the cached permissions of exactly the agents the change
// affects, which tells the OnChange hooks.

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// validName checks an agent, project or role name: short, without spaces,
// and not shaped like a generated id, so that "id or name" is never
// ambiguous.
func validName(what, name string) error {
	if !nameRE.MatchString(name) {
		// A name far too long is shown by its start and its length: the
		// whole of it made an error nobody reads (new-user test).
		if n := utf8.RuneCountInString(name); n > 64 {
			return core.Errorf(core.EInvalid, "%s name %q (%d characters) must be 1-64 ASCII letters (a-z, A-Z), digits, '.', '_' or '-', starting with a letter or digit",
				what, string([]rune(name)[:32])+"…", n)
		}
		return core.Errorf(core.EInvalid, "%s name %q must be 1-64 ASCII letters (a-z, A-Z), digits, '.', '_' or '-', starting with a letter or digit", what, name)
	}
	for _, p := range []string{"ag_", "pj_", "tk_", "ses_"} {
		if strings.HasPrefix(name, p) {
			return core.Errorf(core.EInvalid, "%s name %q must not start with %q (that is how ids start)", what, name, p)
		}
	}
	return nil
}

func validRef(what, s string) error {
	if s == "" || len(s) > 256 || strings.ContainsAny(s, "\x00\n\r") {
		return core.Errorf(core.EInvalid, "%s %q must be 1-256 characters on one line", what, s)
	}
	return nil
}

// AgentInput is a new agent.
type AgentInput struct {
	Name string `json:"name"`
	// Kind is coordinator, manager or worker (default worker); there is
	// only one owner.
	Kind  string `json:"kind"`
	Human bool   `json:"human"`
	// Parent is the id or name of the agent above; default the owner.
	Parent string `json:"parent"`
	// Role is the permission role; default the role marked default.
	Role string `json:"role"`
	// Projects are project ids or names.
	Projects []string `json:"projects"`
	Compact  bool     `json:"compact"`
}

// AgentUpdate changes the fields that are set.
type AgentUpdate struct {
	Name     *string   `json:"name,omitempty"`
	Kind     *string   `json:"kind,omitempty"`
	Human    *bool     `json:"human,omitempty"`
	Parent   *string   `json:"parent,omitempty"`
	Role     *string   `json:"role,omitempty"`
	Status   *string   `json:"status,omitempty"`
	Projects *[]string `json:"projects,omitempty"`
	Compact  *bool     `json:"compact,omitempty"`
}

// CreatedAgent is a new agent with its secrets, shown this once: only
// their hashes are stored.
type CreatedAgent struct {
	Agent Agent `json:"agent"`
	// Token is the agent token for Authorization: Bearer.
	Token string `json:"token"`
	// Passkey is the secret authenticate takes with the agent's id.
	Passkey string `json:"passkey"`
}

// Agents returns every agent, oldest first.
func (s *Service) Agents() ([]Agent, error) { return s.store.ListAgents() }

// Agent returns the agent with id or name ref.
func (s *Service) Agent(ref string) (Agent, error) { return s.findAgent(ref) }

// CreateAgent adds an agent and returns it with its token and passkey.
func (s *Service) CreateAgent(in AgentInput) (CreatedAgent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := validName("agent", in.Name); err != nil {
		return CreatedAgent{}, err
	}
	if in.Kind == "" {
		in.Kind = KindWorker
	}
	if err := validKind(in.Kind); err != nil {
		return CreatedAgent{}, err
	}
	if in.Kind == KindOwner {
		return CreatedAgent{}, core.Errorf(core.EInvalid, "there is only one owner; choose kind coordinator, manager or worker")
	}
	if _, err := s.findAgent(in.Name); err == nil {
		return CreatedAgent{}, core.Errorf(core.EConflict, "an agent named %q exists already", in.Name)
	}
	parent := in.Parent
	if parent == "" {
		parent = OwnerID
	}
	p, err := s.findAgent(parent)
	if err != nil {
		return CreatedAgent{}, refErr(err, "parent agent %q", parent)
	}
	if err := s.checkHierarchy(Agent{}, in.Kind, p); err != nil {
		return CreatedAgent{}, err
	}
	role, err := s.roleOrDefault(in.Role)
	if err != nil {
		return CreatedAgent{}, err
	}
	projects, err := s.projectIDs(in.Projects)
	if err != nil {
		return CreatedAgent{}, err
	}
	token, err := newSecret(TokenPrefix)
	if err != nil {
		return CreatedAgent{}, err
	}
	passkey, err := newSecret(PasskeyPrefix)
	if err != nil {
		return CreatedAgent{}, err
	}
	now := s.now().UTC()
	a := Agent{ID: newID("ag_"), Name: in.Name, Kind: in.Kind, Human: in.Human, ParentID: p.ID, Status: StatusActive,
		Role: role, Compact: in.Compact, Projects: projects, DisabledTools: []ToolRef{}, CreatedAt: now, UpdatedAt: now}
	tok := TokenRecord{ID: newID("tk_"), AgentID: a.ID, Hash: HashSecret(token), Prefix: displayPrefix(token), CreatedAt: now}
	if err := s.store.CreateAgent(a, HashSecret(passkey), &tok); err != nil {
		return CreatedAgent{}, err
	}
	s.addToken(tok)
	s.noteVersionLocked()
	return CreatedAgent{Agent: a, Token: token, Passkey: passkey}, nil
}

func validKind(k string) error {
	for _, v := range Kinds {
		if k == v {
			return nil
		}
	}
	return core.Errorf(core.EInvalid, "unknown agent kind %q (want %s)", k, strings.Join(Kinds, ", "))
}

// rank orders the kinds from the top of the hierarchy: Kinds' order.
func rank(kind string) int { return slices.Index(Kinds, kind) }

// CanReportTo reports why an agent of kind may not be placed under parent,
// or nil: the hierarchy goes owner → coordinators → managers → workers, an
// agent reports to one of its own kind or above, and a worker has nobody
// under it (found by a new-user test: a manager could be put under a
// worker).
func CanReportTo(kind string, parent Agent) error {
	switch {
	case parent.Kind == KindWorker:
		return core.Errorf(core.EInvalid, "'%s' is a worker, and a worker has no agents under it", parent.Name).
			WithHint("put it under a manager, a coordinator or the owner, or make '" + parent.Name + "' a manager first")
	case rank(parent.Kind) > rank(kind):
		return core.Errorf(core.EInvalid, "a %s cannot report to a %s ('%s'): the hierarchy goes owner → coordinators → managers → workers", kind, parent.Kind, parent.Name).
			WithHint("put it under a " + kind + " or an agent above that kind")
	}
	return nil
}

// checkHierarchy refuses to make a of kind report to parent, or to leave
// an agent below a unable to report to it.
func (s *Service) checkHierarchy(a Agent, kind string, parent Agent) error {
	if err := CanReportTo(kind, parent); err != nil {
		return err
	}
	if a.ID == "" || kind == a.Kind {
		return nil
	}
	agents, err := s.store.ListAgents()
	if err != nil {
		return err
	}
	for _, c := range agents {
		if c.ParentID != a.ID {
			continue
		}
		if err := CanReportTo(c.Kind, Agent{Name: a.Name, Kind: kind}); err != nil {
			return core.Errorf(core.EInvalid, "'%s' cannot become a %s: '%s' (a %s) reports to it", a.Name, kind, c.Name, c.Kind).
				WithHint("move the agents under '" + a.Name + "' to another parent first")
		}
	}
	return nil
}

func validStatus(st string) error {
	for _, v := range Statuses {
		if st == v {
			return nil
		}
	}
	return core.Errorf(core.EInvalid, "unknown agent status %q (want %s)", st, strings.Join(Statuses, ", "))
}

// refErr turns a lookup's ENotFound into an EInvalid naming the input.
func refErr(err error, format string, args ...any) error {
	if core.ErrorCode(err) == core.ENotFound {
		return core.Errorf(core.EInvalid, "%s does not exist", fmt.Sprintf(format, args...))
	}
	return err
}

func (s *Service) roleOrDefault(name string) (string, error) {
	roles, err := s.store.ListRoles()
	if err != nil {
		return "", err
	}
	for _, r := range roles {
		if (name == "" && r.IsDefault) || (name != "" && r.Name == name) {
			return r.Name, nil
		}
	}
	if name == "" {
		return "", core.Errorf(core.EInvalid, "no role is marked default; give the agent a role")
	}
	return "", core.Errorf(core.EInvalid, "role %q does not exist", name)
}

func (s *Service) projectIDs(refs []string) ([]string, error) {
	out := []string{}
	if len(refs) == 0 {
		return out, nil
	}
	projects, err := s.store.ListProjects()
	if err != nil {
		return nil, err
	}
	for _, ref := range refs {
		found := ""
		for _, p := range projects {
			if p.ID == ref || p.Name == ref {
				found = p.ID
			}
		}
		if found == "" {
			return nil, core.Errorf(core.EInvalid, "project %q does not exist", ref)
		}
		if !contains(out, found) {
			out = append(out, found)
		}
	}
	return out, nil
}

func (s *Service) addToken(t TokenRecord) {
	s.tokMu.Lock()
	s.tokens[t.Hash] = t
	s.tokenIDs[t.ID] = true
	s.tokMu.Unlock()
}

// UpdateAgent changes the given fields of agent ref. The hierarchy stays a
// tree with the owner at the top: a parent must exist and must not be the
// agent or below it.
func (s *Service) UpdateAgent(ref string, up AgentUpdate) (Agent, error) {
	s.mu.Lock()
	a, err := s.updateAgentLocked(ref, up)
	if err == nil {
		s.endSessionsOutsideLocked(a)
	}
	s.mu.Unlock()
	if err != nil {
		return Agent{}, err
	}
	s.Invalidate(a.ID)
	return a, nil
}

func (s *Service) updateAgentLocked(ref string, up AgentUpdate) (Agent, error) {
	a, err := s.findAgent(ref)
	if err != nil {
		return Agent{}, err
	}
	before := a
	if up.Name != nil && *up.Name != a.Name {
		if err := validName("agent", *up.Name); err != nil {
			return Agent{}, err
		}
		if other, err := s.findAgent(*up.Name); err == nil && other.ID != a.ID {
			return Agent{}, core.Errorf(core.EConflict, "an agent named %q exists already", *up.Name)
		}
		a.Name = *up.Name
	}
	if up.Kind != nil && *up.Kind != a.Kind {
		if err := validKind(*up.Kind); err != nil {
			return Agent{}, err
		}
		if a.Kind == KindOwner || *up.Kind == KindOwner {
			return Agent{}, core.Errorf(core.EInvalid, "the owner's kind cannot change, and there is only one owner")
		}
		a.Kind = *up.Kind
	}
	if up.Human != nil {
		a.Human = *up.Human
	}
	if up.Parent != nil {
		if a.Kind == KindOwner {
			if *up.Parent != "" {
				return Agent{}, core.Errorf(core.EInvalid, "the owner is the top of the hierarchy and has no parent")
			}
		} else {
			p, err := s.findAgent(*up.Parent)
			if err != nil {
				return Agent{}, refErr(err, "parent agent %q", *up.Parent)
			}
			if err := s.checkNoCycle(a, p); err != nil {
				return Agent{}, err
			}
			a.ParentID = p.ID
		}
	}
	if a.Kind != KindOwner && (a.Kind != before.Kind || a.ParentID != before.ParentID) {
		p, err := s.findAgent(a.ParentID)
		if err != nil {
			return Agent{}, refErr(err, "parent agent %q", a.ParentID)
		}
		if err := s.checkHierarchy(before, a.Kind, p); err != nil {
			return Agent{}, err
		}
	}
	if up.Role != nil {
		if _, err := s.store.GetRole(*up.Role); err != nil {
			return Agent{}, refErr(err, "role %q", *up.Role)
		}
		if a.Kind == KindOwner && *up.Role != a.Role {
			// The owner is the person at the UI; a narrower role would
			// show limits that the UI and the CLI do not have.
			return Agent{}, core.Errorf(core.EInvalid, "the owner's role cannot change: it is you, acting through the UI and the CLI").
				WithHint("give roles to the agents instead (airlock agents update NAME --role R)")
		}
		a.Role = *up.Role
	}
	if up.Status != nil {
		if err := validStatus(*up.Status); err != nil {
			return Agent{}, err
		}
		if a.Kind == KindOwner && *up.Status != StatusActive {
			// The owner is the person at the UI and CLI: a suspended owner
			// would be shown as cut off while nothing is.
			return Agent{}, core.Errorf(core.EInvalid, "the owner cannot be %s: it is you, acting through the UI and the CLI", *up.Status).
				WithHint("suspend the agents instead (airlock agents suspend NAME)")
		}
		a.Status = *up.Status
	}
	if up.Projects != nil {
		ids, err := s.projectIDs(*up.Projects)
		if err != nil {
			return Agent{}, err
		}
		a.Projects = ids
	}
	if up.Compact != nil {
		a.Compact = *up.Compact
	}
	return s.saveAgentLocked(a)
}

func (s *Service) saveAgentLocked(a Agent) (Agent, error) {
	a.UpdatedAt = s.now().UTC()
	if err := s.store.UpdateAgent(a); err != nil {
		return Agent{}, err
	}
	s.noteVersionLocked()
	return a, nil
}

// checkNoCycle refuses to put a under p when p is a or below a.
func (s *Service) checkNoCycle(a, p Agent) error {
	if p.ID == a.ID {
		return core.Errorf(core.EInvalid, "agent '%s' cannot be its own parent", a.Name)
	}
	agents, err := s.store.ListAgents()
	if err != nil {
		return err
	}
	parent := map[string]string{}
	for _, x := range agents {
		parent[x.ID] = x.ParentID
	}
	seen := map[string]bool{}
	for cur := p.ID; cur != ""; cur = parent[cur] {
		if cur == a.ID {
			return core.Errorf(core.EInvalid, "agent '%s' cannot be placed under '%s': '%s' is below '%s', which would make a cycle",
				a.Name, p.Name, p.Name, a.Name)
		}
		if seen[cur] {
			break // a cycle already stored; the check above still fails closed for a
		}
		seen[cur] = true
	}
	return nil
}

// CanDelete returns agent ref, or why DeleteAgent would refuse it: the
// owner cannot be deleted, nor an agent that still has child agents.
func (s *Service) CanDelete(ref string) (Agent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.canDeleteLocked(ref)
}

func (s *Service) canDeleteLocked(ref string) (Agent, error) {
	a, err := s.findAgent(ref)
	if err != nil {
		return Agent{}, err
	}
	if a.Kind == KindOwner {
		return Agent{}, core.Errorf(core.EInvalid, "the owner cannot be deleted")
	}
	agents, err := s.store.ListAgents()
	if err != nil {
		return Agent{}, err
	}
	var children []string
	for _, x := range agents {
		if x.ParentID == a.ID {
			children = append(children, x.Name)
		}
	}
	if len(children) > 0 {
		return Agent{}, core.Errorf(core.EConflict, "agent '%s' has %d child agent(s) (%s); move or delete them first",
			a.Name, len(children), strings.Join(children, ", "))
	}
	return a, nil
}

// DeleteAgent deletes agent ref with its tokens and sessions. The owner
// cannot be deleted, nor an agent that still has child agents.
func (s *Service) DeleteAgent(ref string) error {
	s.mu.Lock()
	a, err := s.canDeleteLocked(ref)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	if err := s.store.DeleteAgent(a.ID); err != nil {
		s.mu.Unlock()
		return err
	}
	err = s.loadTokens()
	s.noteVersionLocked()
	s.sessMu.Lock()
	for id, ls := range s.sessions {
		if ls.rec.AgentID == a.ID {
			ls.revoked.Store(true)
			delete(s.sessions, id)
			delete(s.sessByHash, ls.rec.Hash)
		}
	}
	s.sessMu.Unlock()
	s.mu.Unlock()
	s.Invalidate(a.ID)
	return err
}

// SetStatus sets agent ref's status. Suspending cuts the agent off at its
// next request (the OnChange hooks hear of it at once).
func (s *Service) SetStatus(ref, status string) (Agent, error) {
	return s.UpdateAgent(ref, AgentUpdate{Status: &status})
}

// Suspend suspends agent ref.
func (s *Service) Suspend(ref string) (Agent, error) { return s.SetStatus(ref, StatusSuspended) }

// Resume makes agent ref active again.
func (s *Service) Resume(ref string) (Agent, error) { return s.SetStatus(ref, StatusActive) }

// SetCompact turns compact mode on or off for agent ref.
func (s *Service) SetCompact(ref string, on bool) (Agent, error) {
	return s.UpdateAgent(ref, AgentUpdate{Compact: &on})
}

// SetToolEnabled switches one downstream tool on or off for agent ref
// (seed 003's user_disabled).
func (s *Service) SetToolEnabled(ref, server, tool string, enabled bool) (Agent, error) {
	if err := validRef("server", server); err != nil {
		return Agent{}, err
	}
	if err := validRef("tool", tool); err != nil {
		return Agent{}, err
	}
	s.mu.Lock()
	a, err := s.findAgent(ref)
	if err == nil {
		t := ToolRef{Server: server, Tool: tool}
		var kept []ToolRef
		for _, d := range a.DisabledTools {
			if d != t {
				kept = append(kept, d)
			}
		}
		if !enabled {
			kept = append(kept, t)
		}
		if kept == nil {
			kept = []ToolRef{}
		}
		a.DisabledTools = kept
		a, err = s.saveAgentLocked(a)
	}
	s.mu.Unlock()
	if err != nil {
		return Agent{}, err
	}
	s.Invalidate(a.ID)
	return a, nil
}

// Tokens returns agent ref's tokens (never the tokens themselves).
func (s *Service) Tokens(ref string) ([]TokenRecord, error) {
	a, err := s.findAgent(ref)
	if err != nil {
		return nil, err
	}
	s.tokMu.RLock()
	defer s.tokMu.RUnlock()
	out := []TokenRecord{}
	for _, t := range s.tokens {
		if t.AgentID == a.ID {
			out = append(out, t)
		}
	}
	return out, nil
}

// RotateToken gives agent ref a new token, returned this once; its
// previous one stops working at once. (The legacy token of the agent
// "default" follows the agent-token file instead; see AdoptLegacyToken.)
func (s *Service) RotateToken(ref string) (string, error) {
	s.mu.Lock()
	a, err := s.findAgent(ref)
	if err != nil {
		s.mu.Unlock()
		return "", err
	}
	token, err := newSecret(TokenPrefix)
	if err != nil {
		s.mu.Unlock()
		return "", err
	}
	rec := TokenRecord{ID: newID("tk_"), AgentID: a.ID, Hash: HashSecret(token), Prefix: displayPrefix(token), CreatedAt: s.now().UTC()}
	if err := s.store.ReplaceTokens(rec); err != nil {
		s.mu.Unlock()
		return "", err
	}
	err = s.loadTokens()
	s.noteVersionLocked()
	s.mu.Unlock()
	s.Invalidate(a.ID)
	return token, err
}

// RotatePasskey gives agent ref a new passkey, returned this once. The
// sessions opened with the old one end: a passkey is rotated because it
// leaked, and its sessions' tokens would otherwise work on for a day
// (found by a new-user test). A connection bound to one is told at its
// next request, and calls of theirs waiting for a person are declined.
func (s *Service) RotatePasskey(ref string) (string, error) {
	s.mu.Lock()
	a, err := s.findAgent(ref)
	if err != nil {
		s.mu.Unlock()
		return "", err
	}
	passkey, err := newSecret(PasskeyPrefix)
	if err != nil {
		s.mu.Unlock()
		return "", err
	}
	if err := s.store.SetPasskeyHash(a.ID, HashSecret(passkey)); err != nil {
		s.mu.Unlock()
		return "", err
	}
	ended, err := s.endSessionsLocked(a.ID)
	s.noteVersionLocked()
	s.mu.Unlock()
	if ended > 0 {
		s.Invalidate(a.ID)
	}
	return passkey, err
}

// endSessionsLocked ends every live session of agent id, in the store
// (another process's sessions too: the running Airlock's, when the CLI
// rotates) and here, as a logout from elsewhere would: bound connections
// are told at their next request. It returns how many ended. s.mu is held.
func (s *Service) endSessionsLocked(id string) (int, error) {
	ended, err := s.store.RevokeAgentSessions(id, s.now())
	if err != nil {
		return 0, err
	}
	s.markRevoked(ended)
	return len(ended), nil
}

// markRevoked marks the live sessions with these ids, ended in the store,
// ended here too: bound connections are told at their next request.
func (s *Service) markRevoked(ids []string) {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	for _, sid := range ids {
		if ls := s.sessions[sid]; ls != nil {
			ls.revoked.Store(true)
		}
	}
}

// Projects returns every project.
func (s *Service) Projects() ([]Project, error) { return s.store.ListProjects() }

// CreateProject adds a project.
func (s *Service) CreateProject(name, description string) (Project, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := validName("project", name); err != nil {
		return Project{}, err
	}
	if _, err := s.findProject(name); err == nil {
		return Project{}, core.Errorf(core.EConflict, "a project named %q exists already", name)
	}
	now := s.now().UTC()
	p := Project{ID: newID("pj_"), Name: name, Description: description, CreatedAt: now, UpdatedAt: now}
	if err := s.store.CreateProject(p); err != nil {
		return Project{}, err
	}
	s.noteVersionLocked()
	return p, nil
}

// UpdateProject renames project ref and sets its description.
func (s *Service) UpdateProject(ref, name, description string) (Project, error) {
	s.mu.Lock()
	p, err := s.findProject(ref)
	if err == nil && name != p.Name {
		if err = validName("project", name); err == nil {
			if other, ferr := s.findProject(name); ferr == nil && other.ID != p.ID {
				err = core.Errorf(core.EConflict, "a project named %q exists already", name)
			}
		}
	}
	if err == nil {
		p.Name, p.Description, p.UpdatedAt = name, description, s.now().UTC()
		err = s.store.UpdateProject(p)
	}
	if err == nil {
		s.noteVersionLocked()
	}
	s.mu.Unlock()
	if err != nil {
		return Project{}, err
	}
	s.Invalidate(s.assignedTo(p.ID)...)
	return p, nil
}

// EProjectNotEmpty: a project with tasks or conversations is deleted only
// when the request says to delete them too.
const EProjectNotEmpty = "project_not_empty"

// DeleteProject deletes project ref, its assignments and its sessions. A
// project that holds tasks or conversations is refused unless withContent
// is set: they, their history, messages and runs go with it (found by a
// new-user test: "Delete tmpdel?" deleted its tasks without a word).
func (s *Service) DeleteProject(ref string, withContent bool) error {
	s.mu.Lock()
	p, err := s.findProject(ref)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	if !withContent {
		tasks, convs, err := s.store.ProjectContent(p.ID)
		if err != nil {
			s.mu.Unlock()
			return err
		}
		if tasks+convs > 0 {
			s.mu.Unlock()
			var held []string
			if tasks > 0 {
				held = append(held, plural(tasks, "task"))
			}
			if convs > 0 {
				held = append(held, plural(convs, "conversation"))
			}
			return core.Errorf(EProjectNotEmpty, "Project %s holds %s; deleting it deletes them too, with their history, messages and runs", p.Name, strings.Join(held, " and ")).
				WithHint("confirm that they go too, or move the work elsewhere first")
		}
	}
	affected := s.assignedTo(p.ID)
	if err := s.store.DeleteProject(p.ID); err != nil {
		s.mu.Unlock()
		return err
	}
	s.noteVersionLocked()
	s.sessMu.Lock()
	for id, ls := range s.sessions {
		if ls.rec.ProjectID == p.ID {
			ls.revoked.Store(true)
			delete(s.sessions, id)
			delete(s.sessByHash, ls.rec.Hash)
		}
	}
	s.sessMu.Unlock()
	s.mu.Unlock()
	s.Invalidate(affected...)
	return nil
}

func (s *Service) assignedTo(projectID string) []string {
	agents, err := s.store.ListAgents()
	if err != nil {
		return nil
	}
	var out []string
	for _, a := range agents {
		if contains(a.Projects, projectID) {
			out = append(out, a.ID)
		}
	}
	return out
}

// Assign assigns agent ref to project.
func (s *Service) Assign(agentRef, projectRef string) (Agent, error) {
	return s.changeProjects(agentRef, projectRef, true)
}

// Unassign removes agent ref from project.
func (s *Service) Unassign(agentRef, projectRef string) (Agent, error) {
	return s.changeProjects(agentRef, projectRef, false)
}

// endSessionsOutsideLocked ends agent a's sessions opened for a project it
// is no longer assigned to, as logout would: the connections they were
// bound to fall back to what they carry, so the agent can still call help,
// logout and authenticate (into a project it is in). s.mu is held.
func (s *Service) endSessionsOutsideLocked(a Agent) {
	now := s.now()
	var ended []string
	s.sessMu.Lock()
	for id, ls := range s.sessions {
		if ls.rec.AgentID == a.ID && ls.rec.ProjectID != "" && !contains(a.Projects, ls.rec.ProjectID) && !ls.revoked.Load() {
			ls.revoked.Store(true)
			ended = append(ended, id)
		}
	}
	for _, st := range s.mcp {
		if slices.Contains(ended, st.bound) {
			st.bound = ""
		}
	}
	s.sessMu.Unlock()
	for _, id := range ended {
		if err := s.store.RevokeSession(id, now); err != nil {
			s.log.Error("end a session of a project the agent left", "session", id, "err", err)
		}
	}
}

func (s *Service) changeProjects(agentRef, projectRef string, add bool) (Agent, error) {
	s.mu.Lock()
	a, err := s.findAgent(agentRef)
	var p Project
	if err == nil {
		p, err = s.findProject(projectRef)
		err = refErr(err, "project %q", projectRef)
	}
	if err == nil {
		var ids []string
		for _, id := range a.Projects {
			if id != p.ID {
				ids = append(ids, id)
			}
		}
		if add {
			ids = append(ids, p.ID)
		}
		if ids == nil {
			ids = []string{}
		}
		a.Projects = ids
		a, err = s.saveAgentLocked(a)
	}
	if err == nil {
		s.endSessionsOutsideLocked(a)
	}
	s.mu.Unlock()
	if err != nil {
		return Agent{}, err
	}
	s.Invalidate(a.ID)
	return a, nil
}

// RoleInput is a new role.
type RoleInput struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Superuser   bool     `json:"superuser"`
	Default     bool     `json:"default"`
	Servers     []string `json:"servers"`
}

// Roles returns every role.
func (s *Service) Roles() ([]Role, error) { return s.store.ListRoles() }

// Role returns role name.
func (s *Service) Role(name string) (Role, error) { return s.store.GetRole(name) }

// CreateRole adds a role.
func (s *Service) CreateRole(in RoleInput) (Role, error) {
	if err := validName("role", in.Name); err != nil {
		return Role{}, err
	}
	servers := []string{}
	for _, srv := range in.Servers {
		if err := validRef("server", srv); err != nil {
			return Role{}, err
		}
		if !contains(servers, srv) {
			servers = append(servers, srv)
		}
	}
	s.mu.Lock()
	if _, err := s.store.GetRole(in.Name); err == nil {
		s.mu.Unlock()
		return Role{}, core.Errorf(core.EConflict, "a role named %q exists already", in.Name)
	}
	now := s.now().UTC()
	r := Role{Name: in.Name, Description: in.Description, IsDefault: in.Default, IsSuperuser: in.Superuser,
		Servers: servers, Tools: []ToolPermission{}, CreatedAt: now, UpdatedAt: now}
	err := s.store.CreateRole(r)
	if err == nil {
		s.noteVersionLocked()
	}
	s.mu.Unlock()
	return r, err
}

// DeleteRole deletes role name; the default role and a role agents have
// cannot be deleted.
func (s *Service) DeleteRole(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.store.GetRole(name)
	if err != nil {
		return err
	}
	if r.IsDefault {
		return core.Errorf(core.EConflict, "role %s is the default role; make another role the default first", name)
	}
	if err := s.store.DeleteRole(name); err != nil {
		return err
	}
	s.noteVersionLocked()
	return nil
}

// GrantServer grants server to role: its agents may use all its tools,
// prompts and resources (except tools the role withholds).
func (s *Service) GrantServer(role, server string) (Role, error) {
	return s.changeRole(role, func(r *Role) error {
		if err := validRef("server", server); err != nil {
			return err
		}
		if !contains(r.Servers, server) {
			r.Servers = append(r.Servers, server)
		}
		return nil
	})
}

// RevokeServer withdraws role's grant of server, and its exceptions for
// the server's tools.
func (s *Service) RevokeServer(role, server string) (Role, error) {
	return s.changeRole(role, func(r *Role) error {
		// Everything the role has of the server goes: its grant and its
		// per-tool exceptions (there was no other way to remove one).
		var tools []ToolPermission
		for _, t := range r.Tools {
			if t.Server != server {
				tools = append(tools, t)
			}
		}
		if !contains(r.Servers, server) && len(tools) == len(r.Tools) {
			return core.Errorf(core.ENotFound, "role %s has no grant for server %s", r.Name, server)
		}
		var kept []string
		for _, x := range r.Servers {
			if x != server {
				kept = append(kept, x)
			}
		}
		if kept == nil {
			kept = []string{}
		}
		if tools == nil {
			tools = []ToolPermission{}
		}
		r.Servers, r.Tools = kept, tools
		return nil
	})
}

// SetRoleTool sets role's permission for one tool: allowed true grants it
// even without its server, false withholds it from a granted server, nil
// removes the exception (the server grant decides again).
func (s *Service) SetRoleTool(role, server, tool string, allowed *bool) (Role, error) {
	return s.changeRole(role, func(r *Role) error {
		if err := validRef("server", server); err != nil {
			return err
		}
		if err := validRef("tool", tool); err != nil {
			return err
		}
		var kept []ToolPermission
		for _, t := range r.Tools {
			if t.Server != server || t.Tool != tool {
				kept = append(kept, t)
			}
		}
		if allowed != nil {
			kept = append(kept, ToolPermission{Server: server, Tool: tool, Allowed: *allowed})
		}
		if kept == nil {
			kept = []ToolPermission{}
		}
		r.Tools = kept
		return nil
	})
}

// SetDefaultRole makes role name the one new agents get.
func (s *Service) SetDefaultRole(name string) (Role, error) {
	return s.changeRole(name, func(r *Role) error { r.IsDefault = true; return nil })
}

// SetSuperuser marks role name as superuser (every server and tool) or
// not.
func (s *Service) SetSuperuser(name string, on bool) (Role, error) {
	return s.changeRole(name, func(r *Role) error { r.IsSuperuser = on; return nil })
}

// changeRole applies change to role name and invalidates its agents.
func (s *Service) changeRole(name string, change func(*Role) error) (Role, error) {
	s.mu.Lock()
	r, err := s.store.GetRole(name)
	if err == nil {
		err = change(&r)
	}
	if err == nil {
		r.UpdatedAt = s.now().UTC()
		err = s.store.UpdateRole(r)
	}
	if err == nil {
		s.noteVersionLocked()
	}
	var affected []string
	if err == nil {
		if agents, lerr := s.store.ListAgents(); lerr == nil {
			for _, a := range agents {
				if a.Role == name {
					affected = append(affected, a.ID)
				}
			}
		} else {
			s.mu.Unlock()
			s.InvalidateAll()
			return r, nil
		}
	}
	s.mu.Unlock()
	if err != nil {
		return Role{}, err
	}
	s.Invalidate(affected...)
	return r, nil
}

// plural is "1 task", "3 tasks".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
