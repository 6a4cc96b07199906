package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0006Agents creates the tables of identity and authorization (SPEC §5):
// roles with their server grants and tool permissions, agents in a
// hierarchy, projects and assignments, per-agent tool toggles, agent tokens
// and agent sessions. Tokens and passkeys are stored as SHA-256 hashes only.
//
// It also creates what an existing setup needs to keep working: the roles
// "superuser" and "default" (the one new agents get, granting nothing), the
// human owner at the top of the hierarchy, and the agent "default" that
// takes over the single agent token of earlier versions with the superuser
// role, so it sees every tool it saw before. The token itself lives in the
// data directory, which a migration cannot see: authz.Service's
// AdoptLegacyToken attaches its hash at start.
func m0006Agents() *gormigrate.Migration {
	type Role struct {
		Name        string    `gorm:"primaryKey;size:64"`
		Description string    `gorm:"not null;default:''"`
		IsDefault   bool      `gorm:"not null;default:false"`
		IsSuperuser bool      `gorm:"not null;default:false"`
		CreatedAt   time.Time `gorm:"not null;autoCreateTime:false"`
		UpdatedAt   time.Time `gorm:"not null;autoUpdateTime:false"`
	}
	type RoleServerGrant struct {
		RoleName string `gorm:"primaryKey;size:64"`
		ServerID string `gorm:"primaryKey"`
		Role     *Role  `gorm:"foreignKey:RoleName;references:Name;constraint:OnUpdate:CASCADE,OnDelete:CASCADE"`
	}
	type RoleToolPermission struct {
		RoleName string `gorm:"primaryKey;size:64"`
		ServerID string `gorm:"primaryKey"`
		ToolName string `gorm:"primaryKey"`
		Allowed  bool   `gorm:"not null"`
		Role     *Role  `gorm:"foreignKey:RoleName;references:Name;constraint:OnUpdate:CASCADE,OnDelete:CASCADE"`
	}
	type Agent struct {
		ID          string    `gorm:"primaryKey;size:64"`
		Name        string    `gorm:"uniqueIndex;not null"`
		Kind        string    `gorm:"not null;check:chk_agents_kind,kind IN ('owner','coordinator','manager','worker')"`
		Human       bool      `gorm:"not null;default:false"`
		ParentID    *string   `gorm:"index;size:64"`
		Parent      *Agent    `gorm:"foreignKey:ParentID;constraint:OnDelete:RESTRICT"`
		Status      string    `gorm:"not null;default:'active';check:chk_agents_status,status IN ('active','suspended','disabled')"`
		PasskeyHash string    `gorm:"not null;default:''"` // hex SHA-256; empty: no passkey yet
		RoleName    string    `gorm:"not null;size:64;index"`
		Role        *Role     `gorm:"foreignKey:RoleName;references:Name;constraint:OnUpdate:CASCADE,OnDelete:RESTRICT"`
		Compact     bool      `gorm:"not null;default:false"`
		CreatedAt   time.Time `gorm:"not null;autoCreateTime:false"`
		UpdatedAt   time.Time `gorm:"not null;autoUpdateTime:false"`
	}
	type Project struct {
		ID          string    `gorm:"primaryKey;size:64"`
		Name        string    `gorm:"uniqueIndex;not null"`
		Description string    `gorm:"not null;default:''"`
		CreatedAt   time.Time `gorm:"not null;autoCreateTime:false"`
		UpdatedAt   time.Time `gorm:"not null;autoUpdateTime:false"`
	}
	type ProjectAgent struct {
		ProjectID string    `gorm:"primaryKey;size:64"`
		AgentID   string    `gorm:"primaryKey;size:64;index"`
		CreatedAt time.Time `gorm:"not null;autoCreateTime:false"`
		Project   *Project  `gorm:"foreignKey:ProjectID;constraint:OnDelete:CASCADE"`
		Agent     *Agent    `gorm:"foreignKey:AgentID;constraint:OnDelete:CASCADE"`
	}
	// A row switches one downstream tool off for one agent (user_disabled).
	type AgentToolToggle struct {
		AgentID  string `gorm:"primaryKey;size:64"`
		ServerID string `gorm:"primaryKey"`
		ToolName string `gorm:"primaryKey"`
		Agent    *Agent `gorm:"foreignKey:AgentID;constraint:OnDelete:CASCADE"`
	}
	type AgentToken struct {
		ID        string    `gorm:"primaryKey;size:64"`
		AgentID   string    `gorm:"not null;size:64;index"`
		TokenHash string    `gorm:"not null;uniqueIndex;size:64"` // hex SHA-256
		Prefix    string    `gorm:"not null;default:''"`
		Legacy    bool      `gorm:"not null;default:false"`
		CreatedAt time.Time `gorm:"not null;autoCreateTime:false"`
		Agent     *Agent    `gorm:"foreignKey:AgentID;constraint:OnDelete:CASCADE"`
	}
	type AgentSession struct {
		ID        string    `gorm:"primaryKey;size:64"`
		TokenHash string    `gorm:"not null;uniqueIndex;size:64"` // hex SHA-256
		AgentID   string    `gorm:"not null;size:64;index"`
		ProjectID *string   `gorm:"size:64;index"`
		Purpose   string    `gorm:"not null;check:chk_agent_sessions_purpose,purpose IN ('task','chat')"`
		CreatedAt time.Time `gorm:"not null;autoCreateTime:false"`
		ExpiresAt time.Time `gorm:"not null;index"`
		RevokedAt *time.Time
		Agent     *Agent   `gorm:"foreignKey:AgentID;constraint:OnDelete:CASCADE"`
		Project   *Project `gorm:"foreignKey:ProjectID;constraint:OnDelete:CASCADE"`
	}
	return &gormigrate.Migration{
		ID: "0006_agents",
		Migrate: func(tx *gorm.DB) error {
			if err := tx.AutoMigrate(&Role{}, &RoleServerGrant{}, &RoleToolPermission{}, &Agent{}, &Project{},
				&ProjectAgent{}, &AgentToolToggle{}, &AgentToken{}, &AgentSession{}); err != nil {
				return err
			}
			// At most one role is the default: a partial unique index says so
			// to every writer, the CLI included.
			if err := tx.Exec("CREATE UNIQUE INDEX idx_roles_one_default ON roles (is_default) WHERE is_default").Error; err != nil {
				return err
			}
			now := nowUTC()
			roles := []Role{
				{Name: "superuser", Description: "Every tool of every server.", IsSuperuser: true, CreatedAt: now, UpdatedAt: now},
				{Name: "default", Description: "Given to new agents. Grants no server until you add one.", IsDefault: true, CreatedAt: now, UpdatedAt: now},
			}
			if err := tx.Create(&roles).Error; err != nil {
				return err
			}
			owner := "ag_owner"
			agents := []Agent{
				{ID: owner, Name: "owner", Kind: "owner", Human: true, Status: "active", RoleName: "superuser", CreatedAt: now, UpdatedAt: now},
				// The agent every holder of the old single token was: it
				// keeps seeing every tool.
				{ID: "ag_default", Name: "default", Kind: "manager", ParentID: &owner, Status: "active", RoleName: "superuser", CreatedAt: now, UpdatedAt: now},
			}
			return tx.Create(&agents).Error
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("agent_sessions", "agent_tokens", "agent_tool_toggles", "project_agents",
				"projects", "agents", "role_tool_permissions", "role_server_grants", "roles")
		},
	}
}
