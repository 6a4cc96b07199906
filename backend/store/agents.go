package store

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
)

var _ authz.Store = (*Agents)(nil)

// SettingAgentsVersion is bumped in the transaction of every change of
// agents, projects, roles, grants, toggles or tokens, so a running Airlock
// notices changes another process made (the CLI).
const SettingAgentsVersion = "agents_version"

type agentRow struct {
	ID          string `gorm:"primaryKey"`
	Name        string
	Kind        string
	Human       bool
	ParentID    *string
	Status      string
	PasskeyHash string
	RoleName    string
	Compact     bool
	CreatedAt   time.Time `gorm:"autoCreateTime:false"`
	UpdatedAt   time.Time `gorm:"autoUpdateTime:false"`
}

func (agentRow) TableName() string { return "agents" }

type projectRow struct {
	ID          string `gorm:"primaryKey"`
	Name        string
	Description string
	CreatedAt   time.Time `gorm:"autoCreateTime:false"`
	UpdatedAt   time.Time `gorm:"autoUpdateTime:false"`
}

func (projectRow) TableName() string { return "projects" }

type projectAgentRow struct {
	ProjectID string    `gorm:"primaryKey"`
	AgentID   string    `gorm:"primaryKey"`
	CreatedAt time.Time `gorm:"autoCreateTime:false"`
}

func (projectAgentRow) TableName() string { return "project_agents" }

type toggleRow struct {
	AgentID  string `gorm:"primaryKey"`
	ServerID string `gorm:"primaryKey"`
	ToolName string `gorm:"primaryKey"`
}

func (toggleRow) TableName() string { return "agent_tool_toggles" }

type roleRow struct {
	Name        string `gorm:"primaryKey"`
	Description string
	IsDefault   bool
	IsSuperuser bool
	CreatedAt   time.Time `gorm:"autoCreateTime:false"`
	UpdatedAt   time.Time `gorm:"autoUpdateTime:false"`
}

func (roleRow) TableName() string { return "roles" }

type roleGrantRow struct {
	RoleName string `gorm:"primaryKey"`
	ServerID string `gorm:"primaryKey"`
}

func (roleGrantRow) TableName() string { return "role_server_grants" }

type roleToolRow struct {
	RoleName string `gorm:"primaryKey"`
	ServerID string `gorm:"primaryKey"`
	ToolName string `gorm:"primaryKey"`
	Allowed  bool
}

func (roleToolRow) TableName() string { return "role_tool_permissions" }

type tokenRow struct {
	ID        string `gorm:"primaryKey"`
	AgentID   string
	TokenHash string
	Prefix    string
	Legacy    bool
	CreatedAt time.Time `gorm:"autoCreateTime:false"`
}

func (tokenRow) TableName() string { return "agent_tokens" }

type sessionRow struct {
	ID        string `gorm:"primaryKey"`
	TokenHash string
	AgentID   string
	ProjectID *string
	Purpose   string
	CreatedAt time.Time `gorm:"autoCreateTime:false"`
	ExpiresAt time.Time
	RevokedAt *time.Time
}

func (sessionRow) TableName() string { return "agent_sessions" }

// Agents is the repository of agents, projects, roles, tokens and sessions.
type Agents struct{ db *DB }

// NewAgents returns the repository over db.
func NewAgents(db *DB) *Agents { return &Agents{db: db} }

func hashHex(h [32]byte) string { return hex.EncodeToString(h[:]) }

func hashFromHex(s string) [32]byte {
	var h [32]byte
	if b, err := hex.DecodeString(s); err == nil && len(b) == len(h) {
		copy(h[:], b)
	}
	return h
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (r agentRow) agent() authz.Agent {
	return authz.Agent{
		ID: r.ID, Name: r.Name, Kind: r.Kind, Human: r.Human, ParentID: deref(r.ParentID), Status: r.Status,
		Role: r.RoleName, Compact: r.Compact, Projects: []string{}, DisabledTools: []authz.ToolRef{},
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}
}

func toAgentRow(a authz.Agent) agentRow {
	return agentRow{
		ID: a.ID, Name: a.Name, Kind: a.Kind, Human: a.Human, ParentID: strPtr(a.ParentID), Status: a.Status,
		RoleName: a.Role, Compact: a.Compact, CreatedAt: a.CreatedAt.UTC(), UpdatedAt: a.UpdatedAt.UTC(),
	}
}

// translate maps constraint violations to errors a user can act on.
func translate(err error, what string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gorm.ErrDuplicatedKey):
		return core.Errorf(core.EConflict, "%s exists already", what)
	case errors.Is(err, gorm.ErrForeignKeyViolated):
		return core.Errorf(core.EConflict, "%s refers to something that does not exist or is still in use", what)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// ListAgents returns every agent, the owner first and then oldest first, with its projects and
// disabled tools.
func (s *Agents) ListAgents() ([]authz.Agent, error) {
	var rows []agentRow
	// The owner (the only agent without a parent) first, then by age.
	if err := s.db.Order("parent_id IS NULL DESC, created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	var assigns []projectAgentRow
	if err := s.db.Order("created_at, project_id").Find(&assigns).Error; err != nil {
		return nil, fmt.Errorf("list project assignments: %w", err)
	}
	var toggles []toggleRow
	if err := s.db.Order("server_id, tool_name").Find(&toggles).Error; err != nil {
		return nil, fmt.Errorf("list tool toggles: %w", err)
	}
	out := make([]authz.Agent, len(rows))
	idx := make(map[string]int, len(rows))
	for i, r := range rows {
		out[i] = r.agent()
		idx[r.ID] = i
	}
	for _, a := range assigns {
		if i, ok := idx[a.AgentID]; ok {
			out[i].Projects = append(out[i].Projects, a.ProjectID)
		}
	}
	for _, t := range toggles {
		if i, ok := idx[t.AgentID]; ok {
			out[i].DisabledTools = append(out[i].DisabledTools, authz.ToolRef{Server: t.ServerID, Tool: t.ToolName})
		}
	}
	return out, nil
}

// GetAgent returns agent id with its projects and disabled tools.
func (s *Agents) GetAgent(id string) (authz.Agent, error) {
	var row agentRow
	err := s.db.Where("id = ?", id).Take(&row).Error
	if isNotFound(err) {
		return authz.Agent{}, core.Errorf(core.ENotFound, "Agent not found: %s", id)
	}
	if err != nil {
		return authz.Agent{}, fmt.Errorf("read agent %s: %w", id, err)
	}
	a := row.agent()
	var assigns []projectAgentRow
	if err := s.db.Where("agent_id = ?", id).Order("created_at, project_id").Find(&assigns).Error; err != nil {
		return authz.Agent{}, fmt.Errorf("read projects of agent %s: %w", id, err)
	}
	for _, p := range assigns {
		a.Projects = append(a.Projects, p.ProjectID)
	}
	var toggles []toggleRow
	if err := s.db.Where("agent_id = ?", id).Order("server_id, tool_name").Find(&toggles).Error; err != nil {
		return authz.Agent{}, fmt.Errorf("read tool toggles of agent %s: %w", id, err)
	}
	for _, t := range toggles {
		a.DisabledTools = append(a.DisabledTools, authz.ToolRef{Server: t.ServerID, Tool: t.ToolName})
	}
	return a, nil
}

// CreateAgent inserts a with its passkey hash, assignments, toggles and,
// when given, its first token.
func (s *Agents) CreateAgent(a authz.Agent, passkeyHash [32]byte, token *authz.TokenRecord) error {
	row := toAgentRow(a)
	row.PasskeyHash = hashHex(passkeyHash)
	return s.db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			return translate(err, fmt.Sprintf("agent %q", a.Name))
		}
		if err := checkPlaceTx(tx, a); err != nil {
			return err
		}
		if err := writeAgentLinks(tx, a); err != nil {
			return err
		}
		if token != nil {
			if err := tx.Create(toTokenRow(*token)).Error; err != nil {
				return translate(err, "agent token")
			}
		}
		return bumpAgentsVersion(tx)
	})
}

// writeAgentLinks replaces the agent's project assignments and toggles.
func writeAgentLinks(tx *gorm.DB, a authz.Agent) error {
	if err := tx.Where("agent_id = ?", a.ID).Delete(&projectAgentRow{}).Error; err != nil {
		return fmt.Errorf("write projects of agent %s: %w", a.ID, err)
	}
	for _, p := range a.Projects {
		if err := tx.Create(&projectAgentRow{ProjectID: p, AgentID: a.ID, CreatedAt: nowUTC()}).Error; err != nil {
			return translate(err, fmt.Sprintf("assignment of agent %s to project %s", a.ID, p))
		}
	}
	if err := tx.Where("agent_id = ?", a.ID).Delete(&toggleRow{}).Error; err != nil {
		return fmt.Errorf("write tool toggles of agent %s: %w", a.ID, err)
	}
	for _, t := range a.DisabledTools {
		if err := tx.Create(&toggleRow{AgentID: a.ID, ServerID: t.Server, ToolName: t.Tool}).Error; err != nil {
			return translate(err, fmt.Sprintf("toggle of tool %s/%s for agent %s", t.Server, t.Tool, a.ID))
		}
	}
	return nil
}

// UpdateAgent replaces the stored agent a.ID (not its passkey or tokens).
func (s *Agents) UpdateAgent(a authz.Agent) error {
	row := toAgentRow(a)
	return s.db.Transaction(func(tx *gorm.DB) error {
		var was agentRow
		if err := tx.Select("kind", "parent_id").Where("id = ?", a.ID).Take(&was).Error; err != nil {
			return translate(err, fmt.Sprintf("agent %q", a.Name))
		}
		res := tx.Model(&agentRow{}).Where("id = ?", a.ID).
			Select("name", "kind", "human", "parent_id", "status", "role_name", "compact", "updated_at").Updates(&row)
		if res.Error != nil {
			return translate(res.Error, fmt.Sprintf("agent %q", a.Name))
		}
		if res.RowsAffected == 0 {
			return core.Errorf(core.ENotFound, "Agent not found: %s", a.ID)
		}
		if was.Kind != a.Kind || deref(was.ParentID) != a.ParentID {
			if err := checkPlaceTx(tx, a); err != nil {
				return err
			}
		}
		if err := writeAgentLinks(tx, a); err != nil {
			return err
		}
		return bumpAgentsVersion(tx)
	})
}

// checkPlaceTx checks, inside the transaction that wrote agent a, that its
// place in the hierarchy is one (authz.CanReportTo, no cycle) with what
// the database holds now: the service checks first, but another process
// (the CLI and the app at once) may have moved a parent or a child
// between that check and this write (found by a regression test: two
// processes made a worker under a worker, and a cycle).
func checkPlaceTx(tx *gorm.DB, a authz.Agent) error {
	var children []agentRow
	if err := tx.Where("parent_id = ?", a.ID).Find(&children).Error; err != nil {
		return fmt.Errorf("read the agents under %s: %w", a.ID, err)
	}
	for _, c := range children {
		if err := authz.CanReportTo(c.Kind, a); err != nil {
			return core.Errorf(core.EInvalid, "'%s' cannot become a %s: '%s' (a %s) reports to it", a.Name, a.Kind, c.Name, c.Kind).
				WithHint("move the agents under '" + a.Name + "' to another parent first")
		}
	}
	if a.ParentID == "" {
		return nil
	}
	var parent agentRow
	if err := tx.Where("id = ?", a.ParentID).Take(&parent).Error; err != nil {
		return translate(err, fmt.Sprintf("parent agent %q", a.ParentID))
	}
	if err := authz.CanReportTo(a.Kind, parent.agent()); err != nil {
		return err
	}
	seen := map[string]bool{a.ID: true}
	for cur := a.ParentID; cur != ""; {
		if seen[cur] {
			return core.Errorf(core.EInvalid, "agent '%s' cannot be placed under '%s': '%s' is below '%s', which would make a cycle",
				a.Name, parent.Name, parent.Name, a.Name)
		}
		seen[cur] = true
		var up agentRow
		if err := tx.Select("id", "parent_id").Where("id = ?", cur).Take(&up).Error; err != nil {
			return translate(err, fmt.Sprintf("agent %q", cur))
		}
		cur = deref(up.ParentID)
	}
	return nil
}

// DeleteAgent deletes agent id; its tokens, sessions, assignments and
// toggles go with it (ON DELETE CASCADE).
func (s *Agents) DeleteAgent(id string) error {
	return s.db.Transaction(func(tx *gorm.DB) error {
		var children int64
		if err := tx.Model(&agentRow{}).Where("parent_id = ?", id).Count(&children).Error; err != nil {
			return fmt.Errorf("count children of agent %s: %w", id, err)
		}
		if children > 0 {
			return core.Errorf(core.EConflict, "agent %s has %d child agent(s)", id, children)
		}
		res := tx.Where("id = ?", id).Delete(&agentRow{})
		if res.Error != nil {
			return translate(res.Error, "agent "+id)
		}
		if res.RowsAffected == 0 {
			return core.Errorf(core.ENotFound, "Agent not found: %s", id)
		}
		return bumpAgentsVersion(tx)
	})
}

// PasskeyHash returns the agent's passkey hash (all zero when it has none).
func (s *Agents) PasskeyHash(agentID string) ([32]byte, error) {
	var row agentRow
	err := s.db.Select("id", "passkey_hash").Where("id = ?", agentID).Take(&row).Error
	if isNotFound(err) {
		return [32]byte{}, core.Errorf(core.ENotFound, "Agent not found: %s", agentID)
	}
	if err != nil {
		return [32]byte{}, fmt.Errorf("read passkey of agent %s: %w", agentID, err)
	}
	return hashFromHex(row.PasskeyHash), nil
}

// SetPasskeyHash replaces the agent's passkey hash.
func (s *Agents) SetPasskeyHash(agentID string, hash [32]byte) error {
	return s.db.Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&agentRow{}).Where("id = ?", agentID).
			Updates(map[string]any{"passkey_hash": hashHex(hash), "updated_at": nowUTC()})
		if res.Error != nil {
			return fmt.Errorf("write passkey of agent %s: %w", agentID, res.Error)
		}
		if res.RowsAffected == 0 {
			return core.Errorf(core.ENotFound, "Agent not found: %s", agentID)
		}
		return bumpAgentsVersion(tx)
	})
}

func toTokenRow(t authz.TokenRecord) *tokenRow {
	return &tokenRow{ID: t.ID, AgentID: t.AgentID, TokenHash: hashHex(t.Hash), Prefix: t.Prefix, Legacy: t.Legacy, CreatedAt: t.CreatedAt.UTC()}
}

// ListTokens returns every agent token (hashes only).
func (s *Agents) ListTokens() ([]authz.TokenRecord, error) {
	var rows []tokenRow
	if err := s.db.Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list agent tokens: %w", err)
	}
	out := make([]authz.TokenRecord, len(rows))
	for i, r := range rows {
		out[i] = authz.TokenRecord{ID: r.ID, AgentID: r.AgentID, Hash: hashFromHex(r.TokenHash), Prefix: r.Prefix,
			Legacy: r.Legacy, CreatedAt: r.CreatedAt.UTC()}
	}
	return out, nil
}

// ReplaceTokens deletes the agent's tokens of rec's kind (legacy or not)
// and inserts rec, in one transaction.
func (s *Agents) ReplaceTokens(rec authz.TokenRecord) error {
	return s.db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("agent_id = ? AND legacy = ?", rec.AgentID, rec.Legacy).Delete(&tokenRow{}).Error; err != nil {
			return fmt.Errorf("delete tokens of agent %s: %w", rec.AgentID, err)
		}
		if err := tx.Create(toTokenRow(rec)).Error; err != nil {
			return translate(err, "token of agent "+rec.AgentID)
		}
		return bumpAgentsVersion(tx)
	})
}

func (r projectRow) project() authz.Project {
	return authz.Project{ID: r.ID, Name: r.Name, Description: r.Description, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

// ListProjects returns every project, oldest first.
func (s *Agents) ListProjects() ([]authz.Project, error) {
	var rows []projectRow
	if err := s.db.Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	out := make([]authz.Project, len(rows))
	for i, r := range rows {
		out[i] = r.project()
	}
	return out, nil
}

// CreateProject inserts p.
func (s *Agents) CreateProject(p authz.Project) error {
	row := projectRow{ID: p.ID, Name: p.Name, Description: p.Description, CreatedAt: p.CreatedAt.UTC(), UpdatedAt: p.UpdatedAt.UTC()}
	return s.db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			return translate(err, fmt.Sprintf("project %q", p.Name))
		}
		return bumpAgentsVersion(tx)
	})
}

// UpdateProject replaces the name and description of project p.ID.
func (s *Agents) UpdateProject(p authz.Project) error {
	return s.db.Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&projectRow{}).Where("id = ?", p.ID).
			Updates(map[string]any{"name": p.Name, "description": p.Description, "updated_at": p.UpdatedAt.UTC()})
		if res.Error != nil {
			return translate(res.Error, fmt.Sprintf("project %q", p.Name))
		}
		if res.RowsAffected == 0 {
			return core.Errorf(core.ENotFound, "Project not found: %s", p.ID)
		}
		return bumpAgentsVersion(tx)
	})
}

// DeleteProject deletes project id with its assignments and sessions.
func (s *Agents) DeleteProject(id string) error {
	return s.db.Transaction(func(tx *gorm.DB) error {
		res := tx.Where("id = ?", id).Delete(&projectRow{})
		if res.Error != nil {
			return translate(res.Error, "project "+id)
		}
		if res.RowsAffected == 0 {
			return core.Errorf(core.ENotFound, "Project not found: %s", id)
		}
		return bumpAgentsVersion(tx)
	})
}

// ProjectContent counts the tasks and conversations of project id, which
// deleting it deletes with it.
func (s *Agents) ProjectContent(id string) (tasks, conversations int, err error) {
	var n struct{ Tasks, Conversations int }
	err = s.db.Raw(`SELECT (SELECT COUNT(*) FROM tasks WHERE project_id = ?) AS tasks,
		(SELECT COUNT(*) FROM conversations WHERE project_id = ?) AS conversations`, id, id).Scan(&n).Error
	if err != nil {
		return 0, 0, fmt.Errorf("count the content of project %s: %w", id, err)
	}
	return n.Tasks, n.Conversations, nil
}

// ListRoles returns every role by name, with its grants and tool
// permissions.
func (s *Agents) ListRoles() ([]authz.Role, error) {
	var rows []roleRow
	if err := s.db.Order("name").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list roles: %w", err)
	}
	var grants []roleGrantRow
	if err := s.db.Order("server_id").Find(&grants).Error; err != nil {
		return nil, fmt.Errorf("list role grants: %w", err)
	}
	var tools []roleToolRow
	if err := s.db.Order("server_id, tool_name").Find(&tools).Error; err != nil {
		return nil, fmt.Errorf("list role tool permissions: %w", err)
	}
	out := make([]authz.Role, len(rows))
	idx := make(map[string]int, len(rows))
	for i, r := range rows {
		out[i] = r.role()
		idx[r.Name] = i
	}
	for _, g := range grants {
		if i, ok := idx[g.RoleName]; ok {
			out[i].Servers = append(out[i].Servers, g.ServerID)
		}
	}
	for _, t := range tools {
		if i, ok := idx[t.RoleName]; ok {
			out[i].Tools = append(out[i].Tools, authz.ToolPermission{Server: t.ServerID, Tool: t.ToolName, Allowed: t.Allowed})
		}
	}
	return out, nil
}

func (r roleRow) role() authz.Role {
	return authz.Role{Name: r.Name, Description: r.Description, IsDefault: r.IsDefault, IsSuperuser: r.IsSuperuser,
		Servers: []string{}, Tools: []authz.ToolPermission{}, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

// GetRole returns role name with its grants and tool permissions.
func (s *Agents) GetRole(name string) (authz.Role, error) {
	var row roleRow
	err := s.db.Where("name = ?", name).Take(&row).Error
	if isNotFound(err) {
		return authz.Role{}, core.Errorf(core.ENotFound, "Role not found: %s", name)
	}
	if err != nil {
		return authz.Role{}, fmt.Errorf("read role %s: %w", name, err)
	}
	r := row.role()
	var grants []roleGrantRow
	if err := s.db.Where("role_name = ?", name).Order("server_id").Find(&grants).Error; err != nil {
		return authz.Role{}, fmt.Errorf("read grants of role %s: %w", name, err)
	}
	for _, g := range grants {
		r.Servers = append(r.Servers, g.ServerID)
	}
	var tools []roleToolRow
	if err := s.db.Where("role_name = ?", name).Order("server_id, tool_name").Find(&tools).Error; err != nil {
		return authz.Role{}, fmt.Errorf("read tool permissions of role %s: %w", name, err)
	}
	for _, t := range tools {
		r.Tools = append(r.Tools, authz.ToolPermission{Server: t.ServerID, Tool: t.ToolName, Allowed: t.Allowed})
	}
	return r, nil
}

// CreateRole inserts r with its grants and tool permissions.
func (s *Agents) CreateRole(r authz.Role) error {
	row := roleRow{Name: r.Name, Description: r.Description, IsDefault: r.IsDefault, IsSuperuser: r.IsSuperuser,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	return s.db.Transaction(func(tx *gorm.DB) error {
		if r.IsDefault {
			if err := tx.Model(&roleRow{}).Where("is_default").Update("is_default", false).Error; err != nil {
				return fmt.Errorf("clear default role: %w", err)
			}
		}
		if err := tx.Create(&row).Error; err != nil {
			return translate(err, fmt.Sprintf("role %q", r.Name))
		}
		if err := writeRoleLinks(tx, r); err != nil {
			return err
		}
		return bumpAgentsVersion(tx)
	})
}

func writeRoleLinks(tx *gorm.DB, r authz.Role) error {
	if err := tx.Where("role_name = ?", r.Name).Delete(&roleGrantRow{}).Error; err != nil {
		return fmt.Errorf("write grants of role %s: %w", r.Name, err)
	}
	for _, srv := range r.Servers {
		if err := tx.Create(&roleGrantRow{RoleName: r.Name, ServerID: srv}).Error; err != nil {
			return translate(err, fmt.Sprintf("grant of server %s to role %s", srv, r.Name))
		}
	}
	if err := tx.Where("role_name = ?", r.Name).Delete(&roleToolRow{}).Error; err != nil {
		return fmt.Errorf("write tool permissions of role %s: %w", r.Name, err)
	}
	for _, t := range r.Tools {
		if err := tx.Create(&roleToolRow{RoleName: r.Name, ServerID: t.Server, ToolName: t.Tool, Allowed: t.Allowed}).Error; err != nil {
			return translate(err, fmt.Sprintf("permission of tool %s/%s in role %s", t.Server, t.Tool, r.Name))
		}
	}
	return nil
}

// UpdateRole replaces role r.Name, its grants and tool permissions.
func (s *Agents) UpdateRole(r authz.Role) error {
	return s.db.Transaction(func(tx *gorm.DB) error {
		if r.IsDefault {
			if err := tx.Model(&roleRow{}).Where("is_default AND name <> ?", r.Name).Update("is_default", false).Error; err != nil {
				return fmt.Errorf("clear default role: %w", err)
			}
		}
		res := tx.Model(&roleRow{}).Where("name = ?", r.Name).Updates(map[string]any{
			"description": r.Description, "is_default": r.IsDefault, "is_superuser": r.IsSuperuser, "updated_at": r.UpdatedAt.UTC(),
		})
		if res.Error != nil {
			return translate(res.Error, fmt.Sprintf("role %q", r.Name))
		}
		if res.RowsAffected == 0 {
			return core.Errorf(core.ENotFound, "Role not found: %s", r.Name)
		}
		if err := writeRoleLinks(tx, r); err != nil {
			return err
		}
		return bumpAgentsVersion(tx)
	})
}

// DeleteRole deletes role name with its grants; EConflict while an agent
// has it.
func (s *Agents) DeleteRole(name string) error {
	return s.db.Transaction(func(tx *gorm.DB) error {
		var users int64
		if err := tx.Model(&agentRow{}).Where("role_name = ?", name).Count(&users).Error; err != nil {
			return fmt.Errorf("count agents of role %s: %w", name, err)
		}
		if users > 0 {
			return core.Errorf(core.EConflict, "role %s is the role of %d agent(s)", name, users)
		}
		res := tx.Where("name = ?", name).Delete(&roleRow{})
		if res.Error != nil {
			return translate(res.Error, "role "+name)
		}
		if res.RowsAffected == 0 {
			return core.Errorf(core.ENotFound, "Role not found: %s", name)
		}
		return bumpAgentsVersion(tx)
	})
}

func (r sessionRow) record() authz.SessionRecord {
	return authz.SessionRecord{ID: r.ID, Hash: hashFromHex(r.TokenHash), AgentID: r.AgentID, ProjectID: deref(r.ProjectID),
		Purpose: r.Purpose, CreatedAt: r.CreatedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC(), RevokedAt: utcPtr(r.RevokedAt)}
}

// CreateSession inserts a session. Sessions do not bump the agents
// version: they are the running Airlock's own business.
func (s *Agents) CreateSession(rec authz.SessionRecord) error {
	row := sessionRow{ID: rec.ID, TokenHash: hashHex(rec.Hash), AgentID: rec.AgentID, ProjectID: strPtr(rec.ProjectID),
		Purpose: rec.Purpose, CreatedAt: rec.CreatedAt.UTC(), ExpiresAt: rec.ExpiresAt.UTC()}
	if err := s.db.Create(&row).Error; err != nil {
		return translate(err, "session "+rec.ID)
	}
	return nil
}

// SessionByHash returns the session whose token has the given hash.
func (s *Agents) SessionByHash(hash [32]byte) (authz.SessionRecord, error) {
	return s.session("token_hash = ?", hashHex(hash))
}

// SessionByID returns session id.
func (s *Agents) SessionByID(id string) (authz.SessionRecord, error) {
	return s.session("id = ?", id)
}

func (s *Agents) session(where string, arg any) (authz.SessionRecord, error) {
	var row sessionRow
	err := s.db.Where(where, arg).Take(&row).Error
	if isNotFound(err) {
		return authz.SessionRecord{}, core.Errorf(core.ENotFound, "session not found")
	}
	if err != nil {
		return authz.SessionRecord{}, fmt.Errorf("read session: %w", err)
	}
	return row.record(), nil
}

// RevokeSession marks session id revoked at the given time (once).
func (s *Agents) RevokeSession(id string, at time.Time) error {
	res := s.db.Model(&sessionRow{}).Where("id = ? AND revoked_at IS NULL", id).Update("revoked_at", at.UTC())
	if res.Error != nil {
		return fmt.Errorf("revoke session %s: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		var n int64
		if err := s.db.Model(&sessionRow{}).Where("id = ?", id).Count(&n).Error; err != nil {
			return fmt.Errorf("revoke session %s: %w", id, err)
		}
		if n == 0 {
			return core.Errorf(core.ENotFound, "session %s not found", id)
		}
	}
	return nil
}

// RevokeAgentSessions marks every live session of agent agentID revoked at
// the given time and returns their ids.
func (s *Agents) RevokeAgentSessions(agentID string, at time.Time) ([]string, error) {
	var ids []string
	err := s.db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&sessionRow{}).Where("agent_id = ? AND revoked_at IS NULL", agentID).Pluck("id", &ids).Error; err != nil {
			return err
		}
		return tx.Model(&sessionRow{}).Where("agent_id = ? AND revoked_at IS NULL", agentID).Update("revoked_at", at.UTC()).Error
	})
	if err != nil {
		return nil, fmt.Errorf("revoke the sessions of agent %s: %w", agentID, err)
	}
	return ids, nil
}

// RevokeSessionsWithPrefix revokes every live session whose id starts
// with prefix and returns their ids.
func (s *Agents) RevokeSessionsWithPrefix(prefix string, at time.Time) ([]string, error) {
	var ids []string
	like := strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(prefix) + "%"
	err := s.db.Transaction(func(tx *gorm.DB) error {
		q := func() *gorm.DB {
			return tx.Model(&sessionRow{}).Where(`id LIKE ? ESCAPE '\' AND revoked_at IS NULL`, like)
		}
		if err := q().Pluck("id", &ids).Error; err != nil {
			return err
		}
		return q().Update("revoked_at", at.UTC()).Error
	})
	if err != nil {
		return nil, fmt.Errorf("revoke sessions %s*: %w", prefix, err)
	}
	return ids, nil
}

// PurgeSessions deletes sessions that expired or were revoked before t.
func (s *Agents) PurgeSessions(before time.Time) (int64, error) {
	res := s.db.Where("expires_at < ? OR revoked_at < ?", before.UTC(), before.UTC()).Delete(&sessionRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("purge sessions: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// AgentsVersion returns the counter every change bumps (0 before the
// first one).
func (s *Agents) AgentsVersion() (int64, error) {
	v, ok, err := s.db.Setting(SettingAgentsVersion)
	if err != nil || !ok {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("setting %s is not a number: %q", SettingAgentsVersion, v)
	}
	return n, nil
}

func bumpAgentsVersion(tx *gorm.DB) error {
	err := tx.Exec(`INSERT INTO settings (key, value, updated_at) VALUES (?, '1', ?)
		ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(settings.value AS INTEGER) + 1 AS TEXT), updated_at = excluded.updated_at`,
		SettingAgentsVersion, nowUTC()).Error
	if err != nil {
		return fmt.Errorf("bump agents version: %w", err)
	}
	return nil
}
