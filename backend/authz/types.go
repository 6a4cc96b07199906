package authz

import "time"

// Agent kinds: an agent's place in the hierarchy (SPEC §5). There is one
// owner, the person using the app, at the top; every other agent has a
// parent.
const (
	KindOwner       = "owner"
	KindCoordinator = "coordinator"
	KindManager     = "manager"
	KindWorker      = "worker"
)

// Kinds lists the agent kinds, top of the hierarchy first.
var Kinds = []string{KindOwner, KindCoordinator, KindManager, KindWorker}

// Agent statuses (seed 003). Only an active agent may do anything.
const (
	StatusActive    = "active"
	StatusSuspended = "suspended"
	StatusDisabled  = "disabled"
)

// Statuses lists the agent statuses.
var Statuses = []string{StatusActive, StatusSuspended, StatusDisabled}

// Ids of the two agents every database has from migration 0006 on: the
// owner, and the agent that took over the single agent token of earlier
// versions.
const (
	OwnerID        = "ag_owner"
	DefaultAgentID = "ag_default"
)

// Role names every database has from migration 0006 on.
const (
	RoleSuperuser = "superuser"
	RoleDefault   = "default"
)

// Agent is one agent: an AI or a person calling tools through Airlock.
// Secrets (passkey, tokens) are never part of it.
type Agent struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Kind is KindOwner, KindCoordinator, KindManager or KindWorker.
	Kind string `json:"kind"`
	// Human is set for a person, clear for an AI agent.
	Human bool `json:"human"`
	// ParentID is the agent above this one; empty only for the owner.
	ParentID string `json:"parentId,omitempty"`
	// Status is StatusActive, StatusSuspended or StatusDisabled.
	Status string `json:"status"`
	// Role is the name of the agent's permission role.
	Role string `json:"role"`
	// Compact is set when the agent sees the meta-tools get_module_schema,
	// call and batch instead of every downstream tool (seed 003).
	Compact bool `json:"compact"`
	// Projects are the ids of the projects the agent is assigned to.
	Projects []string `json:"projects"`
	// DisabledTools are the downstream tools switched off for this agent.
	DisabledTools []ToolRef `json:"disabledTools"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
}

// ToolRef names one downstream tool: its server id and its name there.
type ToolRef struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
}

// Project is a unit of work agents are assigned to.
type Project struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// Role is a permission role: which downstream servers (and tools) its
// agents may use (seed 003's subscriptions, as grants).
type Role struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// IsDefault marks the role new agents get. Exactly one role has it.
	IsDefault bool `json:"isDefault"`
	// IsSuperuser grants every server and every tool, through the same
	// decision as any other role (no bypass).
	IsSuperuser bool `json:"isSuperuser"`
	// Servers are the ids of the servers the role grants: all their tools,
	// prompts and resources.
	Servers []string `json:"servers"`
	// Tools are per-tool exceptions: Allowed grants one tool of a server
	// the role does not grant, !Allowed withholds one tool of a server it
	// does grant.
	Tools     []ToolPermission `json:"tools"`
	CreatedAt time.Time        `json:"createdAt"`
	UpdatedAt time.Time        `json:"updatedAt"`
}

// ToolPermission is a role's exception for one tool.
type ToolPermission struct {
	Server  string `json:"server"`
	Tool    string `json:"tool"`
	Allowed bool   `json:"allowed"`
}

// TokenRecord is a stored agent token: only its SHA-256 is kept.
type TokenRecord struct {
	ID      string   `json:"id"`
	AgentID string   `json:"agentId"`
	Hash    [32]byte `json:"-"`
	// Prefix is the token's first characters, enough to recognise it in
	// a list without revealing it.
	Prefix string `json:"prefix"`
	// Legacy marks the token of the agent-token file of earlier versions,
	// kept in step with that file by AdoptLegacyToken.
	Legacy    bool      `json:"legacy"`
	CreatedAt time.Time `json:"createdAt"`
}

// SessionRecord is a stored agent session opened by authenticate: only its
// token's SHA-256 is kept.
type SessionRecord struct {
	ID        string     `json:"id"`
	Hash      [32]byte   `json:"-"`
	AgentID   string     `json:"agentId"`
	ProjectID string     `json:"projectId,omitempty"`
	Purpose   string     `json:"purpose"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt time.Time  `json:"expiresAt"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
}

// Store persists agents, projects, roles, tokens and sessions. Every change
// of agents, projects or roles bumps a counter (AgentsVersion) in the same
// transaction, so that a running Airlock notices changes another process
// (the CLI) made. Errors a user should see are *core.Error values: ENotFound
// for an unknown id, EConflict for a taken name or a row still referenced.
type Store interface {
	ListAgents() ([]Agent, error)
	GetAgent(id string) (Agent, error)
	// CreateAgent inserts a, its passkey hash and, when given, its first
	// token, in one transaction.
	CreateAgent(a Agent, passkeyHash [32]byte, token *TokenRecord) error
	// UpdateAgent replaces every field of the stored agent a.ID, including
	// its project assignments and disabled tools.
	UpdateAgent(a Agent) error
	// DeleteAgent deletes an agent with its tokens, sessions, assignments
	// and toggles; EConflict while other agents have it as their parent.
	DeleteAgent(id string) error
	PasskeyHash(agentID string) ([32]byte, error)
	SetPasskeyHash(agentID string, hash [32]byte) error

	ListTokens() ([]TokenRecord, error)
	// ReplaceTokens deletes the agent's tokens whose Legacy flag equals
	// rec.Legacy and inserts rec.
	ReplaceTokens(rec TokenRecord) error

	ListProjects() ([]Project, error)
	CreateProject(p Project) error
	UpdateProject(p Project) error
	DeleteProject(id string) error
	// ProjectContent counts what deleting project id deletes with it.
	ProjectContent(id string) (tasks, conversations int, err error)

	ListRoles() ([]Role, error)
	GetRole(name string) (Role, error)
	CreateRole(r Role) error
	// UpdateRole replaces the stored role r.Name, its grants and tool
	// permissions; when r.IsDefault it clears the flag on every other role.
	UpdateRole(r Role) error
	// DeleteRole deletes a role; EConflict while agents have it.
	DeleteRole(name string) error

	CreateSession(s SessionRecord) error
	SessionByHash(hash [32]byte) (SessionRecord, error)
	SessionByID(id string) (SessionRecord, error)
	RevokeSession(id string, at time.Time) error
	// RevokeAgentSessions revokes every live session of an agent and
	// returns their ids.
	RevokeAgentSessions(agentID string, at time.Time) ([]string, error)
	// RevokeSessionsWithPrefix revokes every live session whose id starts
	// with prefix and returns their ids.
	RevokeSessionsWithPrefix(prefix string, at time.Time) ([]string, error)
	// PurgeSessions deletes sessions that expired or were revoked before t.
	PurgeSessions(before time.Time) (int64, error)

	AgentsVersion() (int64, error)
}
