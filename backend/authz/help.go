package authz

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
)

// HelpContext says who help answered for (seed 000). It never holds a
// token.
type HelpContext struct {
	// CallerType is "unauthenticated" or the agent's kind.
	CallerType     string `json:"caller_type"`
	SessionPurpose string `json:"session_purpose,omitempty"`
	AgentID        string `json:"agent_id,omitempty"`
	AgentName      string `json:"agent_name,omitempty"`
	ProjectID      string `json:"project_id,omitempty"`
}

// HelpTool is one tool in help's listing.
type HelpTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Category is the tool's permission level.
	Category string `json:"category"`
}

// HelpListing is help's answer without a tool name (seed 000).
type HelpListing struct {
	Context        HelpContext `json:"context"`
	AvailableTools []HelpTool  `json:"available_tools"`
	// UnavailableInfo explains, per group, why the other tools are not
	// available: chat_tools, task_tools, manager_tools, ...
	UnavailableInfo map[string]string `json:"unavailable_info"`
	TotalAvailable  int               `json:"total_available"`
}

// HelpDetail is help's answer for one tool (seed 000). A tool the caller
// may not use shows available false and the reason, and hides its
// parameters and example.
type HelpDetail struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Category    string          `json:"category"`
	Available   bool            `json:"available"`
	Parameters  []HelpParam     `json:"parameters"`
	Example     json.RawMessage `json:"example,omitempty"`
	// Reason is the gate's own message; Code and Hint are its code and
	// hint.
	Reason string `json:"reason,omitempty"`
	Code   string `json:"code,omitempty"`
	Hint   string `json:"hint,omitempty"`
}

// MarshalJSON leaves parameters and example out of an unavailable tool's
// detail, as the seed's shape has it.
func (d HelpDetail) MarshalJSON() ([]byte, error) {
	type plain HelpDetail
	if d.Available {
		if d.Parameters == nil {
			d.Parameters = []HelpParam{}
		}
		return json.Marshal(plain(d))
	}
	return json.Marshal(struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Category    string `json:"category"`
		Available   bool   `json:"available"`
		Reason      string `json:"reason"`
		Code        string `json:"code,omitempty"`
		Hint        string `json:"hint,omitempty"`
	}{d.Name, d.Description, d.Category, false, d.Reason, d.Code, d.Hint})
}

func helpContext(c *core.Caller) HelpContext {
	if c == nil || !c.Authenticated() {
		return HelpContext{CallerType: core.Unauthenticated}
	}
	return HelpContext{CallerType: c.Kind, SessionPurpose: purposeOf(c), AgentID: c.AgentID, AgentName: c.AgentName, ProjectID: c.ProjectID}
}

// HelpList is help without a tool name: the Airlock tools caller may use
// now, and why the others are not available. Every entry comes from Check,
// the function the gate uses, so help cannot disagree with a refusal.
func (s *Service) HelpList(caller *core.Caller) HelpListing {
	out := HelpListing{Context: helpContext(caller), AvailableTools: []HelpTool{}, UnavailableInfo: map[string]string{}}
	if out.Context.ProjectID == "" && out.Context.AgentID != "" {
		// A session that named no project works in the agent's only
		// project (the team tools use it), so that is its project.
		if a, err := s.findAgent(out.Context.AgentID); err == nil && len(a.Projects) == 1 {
			out.Context.ProjectID = a.Projects[0]
		}
	}
	groups := map[string][]string{}
	var order []string
	first := map[string]*core.Error{}
	left := s.leftProject(caller)
	for _, def := range s.reg.Tools() {
		err := s.helpRefusal(caller, def, left)
		if err == nil {
			out.AvailableTools = append(out.AvailableTools, HelpTool{Name: def.Name, Description: def.Description, Category: string(def.Level)})
			continue
		}
		g := helpGroup(def, err)
		if _, ok := groups[g]; !ok {
			order = append(order, g)
			first[g] = err
		}
		groups[g] = append(groups[g], def.Name)
	}
	for _, g := range order {
		out.UnavailableInfo[g] = groupText(g, groups[g], first[g], caller)
	}
	out.TotalAvailable = len(out.AvailableTools)
	return out
}

// ToolHelp is the name of the help tool. It answers on a session of a
// project its agent has left, where every other call is refused: it is
// harmless, and it says why the rest is refused.
const ToolHelp = "help"

// leftProject is the refusal of a caller whose session works in a project
// its agent is no longer in, else nil.
func (s *Service) leftProject(c *core.Caller) *core.Error {
	if c == nil || c.AgentID == "" || c.ProjectID == "" {
		return nil
	}
	e, err := s.entry(c.AgentID)
	if err != nil {
		return err
	}
	if _, ok := e.projects[c.ProjectID]; !ok {
		return notAssigned(e.agent, c.ProjectID)
	}
	return nil
}

// helpRefusal is why caller may not use def, as help says it: the gate's
// refusal, or, on a session of a project left (left), that — for every
// tool but help.
func (s *Service) helpRefusal(caller *core.Caller, def ToolDef, left *core.Error) *core.Error {
	err := s.Refusal(caller, core.Target{Kind: core.KindToolCall, Server: Server, Name: def.Name})
	if err == nil && left != nil && def.Name != ToolHelp {
		return left
	}
	return err
}

// helpGroup names the group an unavailable tool is explained in.
func helpGroup(def ToolDef, err *core.Error) string {
	switch {
	case err.Code == ReasonSuspended:
		return "account"
	case err.Code == EAgentNotAssigned:
		return "project"
	case err.Code == core.EUnauthorized && def.Level != LevelUnauthenticated:
		return "authenticated_tools"
	case err.Code == core.EUnauthorized:
		return "session"
	case def.Compact && err.Code == core.EForbidden && def.Level == LevelAuthenticated:
		return "compact_tools"
	}
	switch def.Level {
	case LevelChatOnly:
		return "chat_tools"
	case LevelTaskOnly:
		return "task_tools"
	case LevelManagerOnly:
		return "manager_tools"
	case LevelCoordinatorOnly:
		return "coordinator_tools"
	case LevelWorkerOnly:
		return "worker_tools"
	}
	return "other_tools"
}

func groupText(group string, names []string, err *core.Error, c *core.Caller) string {
	list := strings.Join(names, ", ")
	switch group {
	case "account":
		return fmt.Sprintf("No tool is available: %s (%s)", err.Message, err.Hint)
	case "session":
		return fmt.Sprintf("No tool is available: %s", err.Message)
	case "project":
		return fmt.Sprintf("No tool but help is available in this session: %s (%s)", err.Message, err.Hint)
	case "authenticated_tools":
		return fmt.Sprintf("The other tools (%s) require authentication: call authenticate first, or connect with an agent token", list)
	case "compact_tools":
		return fmt.Sprintf("Compact-mode tools (%s) are available only while compact mode is on for this agent", list)
	case "chat_tools":
		return fmt.Sprintf("Chat tools (%s) are available only in a session with purpose=chat; this session's purpose is %s", list, purposeOf(c))
	case "task_tools":
		return fmt.Sprintf("Task-session tools (%s) are available only in a session with purpose=task; this session's purpose is %s", list, purposeOf(c))
	case "manager_tools":
		return fmt.Sprintf("Manager tools (%s) require Manager privilege; this agent is a %s", list, c.Kind)
	case "coordinator_tools":
		return fmt.Sprintf("Coordinator tools (%s) require Coordinator privilege; this agent is a %s", list, c.Kind)
	case "worker_tools":
		return fmt.Sprintf("Worker tools (%s) require Worker privilege; this agent is a %s", list, c.Kind)
	}
	return fmt.Sprintf("Not available (%s): %s", list, err.Message)
}

// HelpFor is help with a tool name: its details when caller may use it,
// else available false with the gate's reason and no parameters. An
// unknown name is the gate's not-registered refusal.
func (s *Service) HelpFor(caller *core.Caller, name string) (HelpDetail, error) {
	def, ok := s.reg.Lookup(name)
	if !ok {
		if server, _, found := strings.Cut(name, "__"); found && server != "" {
			// A tool of another server, as tools/list names it.
			return HelpDetail{}, core.Errorf(core.ENotFound, "help describes Airlock's own tools; '%s' is a tool of the server '%s'", name, server).
				WithHint("its description and input schema are in tools/list; call help without tool_name for Airlock's tools")
		}
		return HelpDetail{}, notRegistered(core.Target{Kind: core.KindToolCall, Server: Server, Name: name})
	}
	d := HelpDetail{Name: def.Name, Description: def.Description, Category: string(def.Level)}
	if err := s.helpRefusal(caller, def, s.leftProject(caller)); err != nil {
		d.Reason, d.Code, d.Hint = err.Message, err.Code, err.Hint
		// Seed 000 words the purpose of a session-bound tool this way in
		// help; the gate's words follow, as the call would be refused.
		if p := purposeOf(caller); err.Code == core.EForbidden && (def.Level == LevelChatOnly || def.Level == LevelTaskOnly) {
			need := core.PurposeChat
			if def.Level == LevelTaskOnly {
				need = core.PurposeTask
			}
			d.Reason = fmt.Sprintf("このツールはpurpose=%sのセッションでのみ利用可能です。現在のセッションはpurpose=%sです。 (%s)", need, p, err.Message)
		}
		return d, nil
	}
	params, err := schemaParams(def.InputSchema)
	if err != nil {
		return HelpDetail{}, err
	}
	d.Available, d.Parameters, d.Example = true, params, def.Example
	return d, nil
}
