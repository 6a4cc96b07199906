package api

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/teams"
)

// Agents is the Agents screen: the hierarchy of agents, their status,
// roles, projects and tokens; the roles with their server grants; and the
// snippets that connect an agent.
type Agents struct{ d Deps }

// AgentView is an agent with what the screen shows beside it.
type AgentView struct {
	authz.Agent
	// Tokens are the agent's connection tokens (their first characters
	// only: a token is shown whole once, when it is made).
	Tokens []authz.TokenRecord `json:"tokens"`
}

// List returns every agent, the owner first.
func (a *Agents) List() ([]AgentView, error) {
	list, err := a.d.Authz.Agents()
	if err != nil {
		return nil, err
	}
	out := make([]AgentView, 0, len(list))
	for _, ag := range list {
		toks, err := a.d.Authz.Tokens(ag.ID)
		if err != nil {
			return nil, err
		}
		if toks == nil {
			toks = []authz.TokenRecord{}
		}
		out = append(out, AgentView{Agent: ag, Tokens: toks})
	}
	return out, nil
}

// Create adds an agent and returns it with its token and passkey, shown
// this once.
func (a *Agents) Create(in authz.AgentInput) (authz.CreatedAgent, error) {
	v, err := a.d.Authz.CreateAgent(in)
	return v, a.announce(err)
}

// announce tells every open Agents screen about a change authz may not
// announce itself: authz emits agents:changed only for agents whose
// permissions changed, so a new agent, role or project, or a change to a
// role nobody has yet, would otherwise reach only the window that made it.
// The event names no agent ("possibly all").
// It returns err unchanged.
func (a *Agents) announce(err error) error {
	if err == nil && a.d.Events != nil {
		a.d.Events.Emit(core.EventAgentsChanged, core.AgentsChanged{AgentIDs: []string{}})
	}
	return err
}

// ToolAccess is whether an agent may call one tool now, and if not, why:
// the same decision the gate makes, so the screen cannot disagree with it.
type ToolAccess struct {
	Server      string `json:"server"`
	Tool        string `json:"tool"`
	ExposedName string `json:"exposedName"`
	Allowed     bool   `json:"allowed"`
	// Code is the deny reason (suspended, not_subscribed, user_disabled).
	Code   string `json:"code,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Hint names the setting that would change the decision.
	Hint string `json:"hint,omitempty"`
}

// Access returns, for every tool of the servers (downstream and built-in,
// not Airlock's own), whether the agent may call it in a task session now
// and, when not, the gate's reason and hint.
func (a *Agents) Access(id string) ([]ToolAccess, error) {
	ag, err := a.d.Authz.Agent(id)
	if err != nil {
		return nil, err
	}
	caller := &core.Caller{AgentID: ag.ID, AgentName: ag.Name, Kind: ag.Kind, Role: ag.Role, Purpose: core.PurposeTask}
	out := []ToolAccess{}
	for _, t := range a.d.Catalog.Tools() {
		if t.ServerID == authz.Server {
			continue
		}
		acc := ToolAccess{Server: t.ServerID, Tool: t.Name, ExposedName: t.ExposedName, Allowed: true}
		if e := a.d.Authz.Refusal(caller, core.Target{Kind: core.KindToolCall, Server: t.ServerID, Name: t.Name}); e != nil {
			acc.Allowed, acc.Code, acc.Reason, acc.Hint = false, e.Code, e.Message, e.Hint
		}
		out = append(out, acc)
	}
	return out, nil
}

// Update changes the given fields of an agent.
func (a *Agents) Update(id string, up authz.AgentUpdate) (authz.Agent, error) {
	return a.d.Authz.UpdateAgent(id, up)
}

// Delete removes an agent (one with agents under it is refused).
func (a *Agents) Delete(id string) error {
	// Refused before its runs are stopped (found by a code review: an
	// agent with agents under it lost its runs, and stayed).
	ag, err := a.d.Authz.CanDelete(id)
	if err != nil {
		return err
	}
	if a.d.Runner != nil {
		// Its runs end first, while their records still exist.
		a.d.Runner.StopAgentRuns(ag.ID, "Airlock, as its agent was deleted")
	}
	return a.d.Authz.DeleteAgent(ag.ID)
}

// OpenTasks returns the open tasks assigned to an agent: deleting the agent
// leaves them on the board without an assignee.
func (a *Agents) OpenTasks(id string) ([]teams.Task, error) {
	ag, err := a.d.Authz.Agent(id)
	if err != nil {
		return nil, err
	}
	list, err := a.d.Teams.OpenTasksOf(ag.ID)
	if list == nil {
		list = []teams.Task{}
	}
	return list, err
}

// Suspend cuts an agent off at once: its sessions lose their tools and its
// next request is refused.
func (a *Agents) Suspend(id string) (authz.Agent, error) { return a.d.Authz.Suspend(id) }

// Resume lets a suspended agent in again.
func (a *Agents) Resume(id string) (authz.Agent, error) { return a.d.Authz.Resume(id) }

// RotateToken replaces an agent's connection token and returns the new one,
// shown this once; the old one stops working at once.
func (a *Agents) RotateToken(id string) (string, error) { return a.d.Authz.RotateToken(id) }

// RotatePasskey replaces the passkey authenticate takes, shown this once.
func (a *Agents) RotatePasskey(id string) (string, error) { return a.d.Authz.RotatePasskey(id) }

// SetCompact turns compact mode (the meta-tools instead of every tool) on
// or off for an agent.
func (a *Agents) SetCompact(id string, on bool) (authz.Agent, error) {
	return a.d.Authz.SetCompact(id, on)
}

// SetToolEnabled switches one tool off (or on again) for one agent.
func (a *Agents) SetToolEnabled(id, server, tool string, enabled bool) (authz.Agent, error) {
	return a.d.Authz.SetToolEnabled(id, server, tool, enabled)
}

// Projects returns every project.
func (a *Agents) Projects() ([]authz.Project, error) { return nonNil(a.d.Authz.Projects()) }

// CreateProject adds a project.
func (a *Agents) CreateProject(name, description string) (authz.Project, error) {
	v, err := a.d.Authz.CreateProject(name, description)
	return v, a.announce(err)
}

// DeleteProject removes a project; one with tasks or conversations only
// with withContent (they go with it), else project_not_empty says how many.
func (a *Agents) DeleteProject(id string, withContent bool) error {
	return a.announce(a.d.Authz.DeleteProject(id, withContent))
}

// Assign puts an agent on a project.
func (a *Agents) Assign(agent, project string) (authz.Agent, error) {
	return a.d.Authz.Assign(agent, project)
}

// Unassign takes an agent off a project.
func (a *Agents) Unassign(agent, project string) (authz.Agent, error) {
	return a.d.Authz.Unassign(agent, project)
}

// Roles returns every role with its grants.
func (a *Agents) Roles() ([]authz.Role, error) { return nonNil(a.d.Authz.Roles()) }

// CreateRole adds a role.
func (a *Agents) CreateRole(in authz.RoleInput) (authz.Role, error) {
	v, err := a.d.Authz.CreateRole(in)
	return v, a.announce(err)
}

// DeleteRole removes a role no agent has.
func (a *Agents) DeleteRole(name string) error {
	return a.announce(a.d.Authz.DeleteRole(name))
}

// Grant lets a role use a server's tools, prompts and resources.
func (a *Agents) Grant(role, server string) (authz.Role, error) {
	v, err := a.d.Authz.GrantServer(role, server)
	return v, a.announce(err)
}

// Revoke takes a server away from a role.
func (a *Agents) Revoke(role, server string) (authz.Role, error) {
	v, err := a.d.Authz.RevokeServer(role, server)
	return v, a.announce(err)
}

// SetRoleTool allows or denies one tool for a role (nil: follow the
// server's grant).
func (a *Agents) SetRoleTool(role, server, tool string, allowed *bool) (authz.Role, error) {
	v, err := a.d.Authz.SetRoleTool(role, server, tool, allowed)
	return v, a.announce(err)
}

// SetDefaultRole makes a role the one new agents get.
func (a *Agents) SetDefaultRole(name string) (authz.Role, error) {
	v, err := a.d.Authz.SetDefaultRole(name)
	return v, a.announce(err)
}

func nonNil[T any](list []T, err error) ([]T, error) {
	if list == nil {
		list = []T{}
	}
	return list, err
}

// Snippet is how one MCP client connects an agent to Airlock.
type Snippet struct {
	Client string `json:"client"` // "Claude Code", "Cursor", ...
	// Where says where the text goes: a command to run, or a file.
	Where string `json:"where"`
	Text  string `json:"text"`
}

// Snippets returns the ways to connect with token (an agent token just
// made or rotated), for Claude Code, Claude Desktop (through airlock
// bridge), Cursor, Codex CLI and Gemini CLI. purpose is "task" or "chat"
// ("" is a task session).
func (a *Agents) Snippets(token, purpose string) ([]Snippet, error) {
	if !strings.HasPrefix(token, authz.TokenPrefix) {
		return nil, core.Errorf(core.EInvalid, "that is not an agent token (they start with %s)", authz.TokenPrefix)
	}
	url := a.d.Info.MCPURL
	bridgeArgs := []string{"--url", url}
	switch purpose {
	case "", core.PurposeTask:
	case core.PurposeChat:
		url += "?purpose=chat"
		// The bridge's own flag: the entry reads as what it is for.
		bridgeArgs = append(bridgeArgs, "--purpose", core.PurposeChat)
	default:
		return nil, core.Errorf(core.EInvalid, "purpose is task or chat, not %q", purpose)
	}
	// The small airlock-bridge when it is there; else `airlock bridge`. The
	// token goes in the environment: on the command line other users of
	// the machine could read it in the process list.
	bin, args := a.d.Info.Bridge, bridgeArgs
	if bin == "" {
		bin = a.d.Info.Binary
		if bin == "" {
			bin = "airlock"
		}
		args = append([]string{"bridge"}, args...)
	}
	argsJSON, _ := json.Marshal(args)
	// A chat session is a second server entry beside the task one: its
	// own name, so that adding both keeps both.
	name := "airlock"
	if purpose == core.PurposeChat {
		name = "airlock-chat"
	}
	return []Snippet{
		{Client: "Claude Code", Where: "run in a terminal",
			Text: fmt.Sprintf("claude mcp add --transport http %s %s \\\n  --header \"Authorization: Bearer %s\"", name, shellWord(url), token)},
		{Client: "Claude Desktop", Where: "claude_desktop_config.json (it starts only stdio servers: the bridge relays)",
			Text: fmt.Sprintf(`{
  "mcpServers": {
    %q: {
      "command": %q,
      "args": %s,
      "env": { "AIRLOCK_TOKEN": %q }
    }
  }
}`, name, bin, argsJSON, token)},
		{Client: "Cursor", Where: "~/.cursor/mcp.json",
			Text: fmt.Sprintf(`{
  "mcpServers": {
    %q: {
      "url": %q,
      "headers": { "Authorization": "Bearer %s" }
    }
  }
}`, name, url, token)},
		{Client: "Codex CLI", Where: "~/.codex/config.toml",
			Text: fmt.Sprintf(`[mcp_servers.%s]
url = %q
http_headers = { "Authorization" = "Bearer %s" }`, name, url, token)},
		{Client: "Gemini CLI", Where: "~/.gemini/settings.json",
			Text: fmt.Sprintf(`{
  "mcpServers": {
    %q: {
      "httpUrl": %q,
      "headers": { "Authorization": "Bearer %s" }
    }
  }
}`, name, url, token)},
	}, nil
}

// shellWord quotes s for a POSIX shell (and zsh) when it holds anything
// but plain URL characters: a ? or & unquoted is a glob ("no matches
// found" in zsh) or sends the command to the background (found by a
// new-user test).
func shellWord(s string) string {
	if strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(":/._-", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
