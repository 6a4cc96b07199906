package authz

import (
	"context"
	"fmt"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
)

var _ pipeline.Gate = (*Service)(nil)

// Deny reasons for downstream targets (seed 003), in the order they are
// checked: an inactive agent is refused everything; then a server its role
// does not grant; then a tool switched off for the agent. They are the
// codes of the *core.Error a refusal carries.
const (
	ReasonSuspended     = "suspended"
	ReasonNotSubscribed = "not_subscribed"
	ReasonUserDisabled  = "user_disabled"
)

// Authorize implements pipeline.Gate: it refuses a request its caller may
// not make, for every request kind, with the reason Check gives.
func (s *Service) Authorize(_ context.Context, r *core.Request) error {
	return s.Check(&r.Caller, r.Target())
}

// Check decides whether caller may use target now: nil when it may, else
// the refusal, a *core.Error with its reason code and a hint. The gateway
// filters listings with it and the gate refuses calls with it, so a target
// hidden from a listing and called by name is refused for the same reason;
// help reads it too. Airlock's own tools are core.Target{Server: Server}.
func (s *Service) Check(caller *core.Caller, t core.Target) error {
	if err := s.Refusal(caller, t); err != nil {
		return err
	}
	return nil // never a typed nil in an error
}

// Refusal is Check with the refusal's concrete type: nil when caller may
// use target.
//
// Decisions for an identified agent are computed once per target and
// session purpose and kept in the agent's cache entry until it expires or
// a change invalidates it.
func (s *Service) Refusal(caller *core.Caller, t core.Target) *core.Error {
	if t.Kind == "" {
		t.Kind = core.KindToolCall
	}
	if caller == nil || caller.AgentID == "" {
		return s.decideUnauthenticated(t)
	}
	e, err := s.entry(caller.AgentID)
	if err != nil {
		return err
	}
	if caller.AuthSession != "" {
		if err := s.sessionAlive(caller.AuthSession, caller.AgentID); err != nil {
			return err
		}
	}
	k := decKey{Target: t}
	if t.Server == Server {
		k.purpose = purposeOf(caller)
	}
	e.mu.RLock()
	d, ok := e.decisions[k]
	e.mu.RUnlock()
	if !ok {
		d = decision{err: e.decide(s.reg, t, k.purpose)}
		e.mu.Lock()
		// A caller naming ever new resources must not grow the entry
		// without bound: past the cap, decisions are computed each time.
		if len(e.decisions) < maxDecisions {
			e.decisions[k] = d
		}
		e.mu.Unlock()
	}
	if d.err == nil {
		return nil
	}
	c := *d.err // callers may keep or change what they get
	return &c
}

// Allowed reports whether caller may use target now (Check without the
// reason, for listings).
func (s *Service) Allowed(caller *core.Caller, t core.Target) bool {
	return s.Refusal(caller, t) == nil
}

// maxDecisions bounds the memoised decisions of one agent.
const maxDecisions = 8192

func purposeOf(c *core.Caller) string {
	if c.Purpose == "" {
		return core.PurposeTask // a session without a stated purpose is a task session
	}
	return c.Purpose
}

type decKey struct {
	core.Target
	purpose string
}

type decision struct{ err *core.Error }

// decide is the whole decision for an identified agent whose entry is e.
func (e *entry) decide(reg *Registry, t core.Target, purpose string) *core.Error {
	if err := e.statusErr(); err != nil {
		return err
	}
	if t.Server == Server {
		def := reg.lookup(t.Name)
		if def == nil || t.Kind != core.KindToolCall {
			return notRegistered(t)
		}
		if err := levelDecision(def, caller{agent: &e.agent, purpose: purpose}); err != nil {
			return err
		}
		if def.Compact && !e.agent.Compact {
			return core.Errorf(core.EForbidden, "Tool '%s' is available only in compact mode", def.Name).
				WithHint(fmt.Sprintf("switch compact mode on for agent '%s': %s", e.agent.Name, uiLink(e.agent, "Tools", "tools")))
		}
		return nil
	}
	return e.decideDownstream(t)
}

// statusErr is the refusal of an agent that is not active (seed 003:
// suspended and disabled both refuse everything, reason "suspended").
func (e *entry) statusErr() *core.Error {
	if e.agent.Status == StatusActive {
		return nil
	}
	return accountErr(e.agent)
}

func accountErr(a Agent) *core.Error {
	return (&core.Error{Code: ReasonSuspended, Message: "account is " + a.Status}).
		WithHint(fmt.Sprintf("resume agent '%s': %s", a.Name, uiLink(a, "Status", "status")))
}

// decideDownstream applies the role's grants and the agent's toggles.
// Prompts and resources follow their server's grant; tool permissions and
// toggles are about tools.
func (e *entry) decideDownstream(t core.Target) *core.Error {
	a := e.agent
	ref := ToolRef{Server: t.Server, Tool: t.Name}
	isTool := t.Kind == core.KindToolCall
	switch t.Kind {
	case core.KindToolCall, core.KindPromptGet, core.KindResourceRead:
	case core.KindSampling, core.KindElicitation:
		// A server asking the agent's client during the agent's own call:
		// allowed where the agent may use the server at all.
	default:
		return core.Errorf(core.EInvalid, "unknown request kind %q", t.Kind)
	}
	granted := e.superuser || e.grants[t.Server]
	if isTool && !e.superuser {
		if allowed, ok := e.toolPerms[ref]; ok {
			if !allowed {
				return (&core.Error{Code: ReasonNotSubscribed,
					Message: fmt.Sprintf("Role '%s' of agent '%s' does not permit tool '%s' of server '%s'", a.Role, a.Name, t.Name, t.Server)}).
					WithHint(fmt.Sprintf("allow tool '%s' of server '%s' in role '%s', or give agent '%s' another role: %s",
						t.Name, t.Server, a.Role, a.Name, uiLink(a, "Role", "role")))
			}
			granted = true
		}
	}
	if !granted {
		return (&core.Error{Code: ReasonNotSubscribed,
			Message: fmt.Sprintf("Role '%s' of agent '%s' has no grant for server '%s'", a.Role, a.Name, t.Server)}).
			WithHint(fmt.Sprintf("grant server '%s' to role '%s', or give agent '%s' another role: %s",
				t.Server, a.Role, a.Name, uiLink(a, "Role", "role")))
	}
	if isTool && e.disabled[ref] {
		return (&core.Error{Code: ReasonUserDisabled,
			Message: fmt.Sprintf("Tool '%s' of server '%s' is switched off for agent '%s'", t.Name, t.Server, a.Name)}).
			WithHint(fmt.Sprintf("switch it on: %s", uiLink(a, "Tools", "tools")))
	}
	return nil
}

// decideUnauthenticated decides for a caller nobody has identified: only
// Airlock's unauthenticated-level tools.
func (s *Service) decideUnauthenticated(t core.Target) *core.Error {
	if t.Server == Server {
		def := s.reg.lookup(t.Name)
		if def == nil || t.Kind != core.KindToolCall {
			return notRegistered(t)
		}
		return levelDecision(def, caller{})
	}
	return authRequired(fmt.Sprintf("%s '%s' of server '%s'", kindNoun(t.Kind), t.Name, t.Server))
}

func kindNoun(kind string) string {
	switch kind {
	case core.KindPromptGet:
		return "Prompt"
	case core.KindResourceRead:
		return "Resource"
	}
	return "Tool"
}

func notRegistered(t core.Target) *core.Error {
	return core.Errorf(core.ENotFound, "%s '%s' is not registered in authorization system", kindNoun(t.Kind), t.Name).
		WithHint("call help to list the tools available to you")
}

// caller is who levelDecision decides for: no agent means unauthenticated.
type caller struct {
	agent   *Agent
	purpose string
}

// levelDecision applies a tool's permission level (seed 000) to a caller,
// with the seed's messages. It is the only place that knows who passes
// which level.
func levelDecision(def *ToolDef, c caller) *core.Error {
	if def.Level == LevelUnauthenticated {
		return nil
	}
	if c.agent == nil {
		return authRequired(fmt.Sprintf("Tool '%s'", def.Name))
	}
	kind := c.agent.Kind
	switch def.Level {
	case LevelAuthenticated:
		return nil
	case LevelCoordinatorOnly:
		if kind == KindCoordinator || kind == KindOwner {
			return nil
		}
		return privilegeErr(def.Name, "Coordinator", *c.agent)
	case LevelManagerOnly:
		if kind == KindManager || kind == KindCoordinator || kind == KindOwner {
			return nil
		}
		return privilegeErr(def.Name, "Manager", *c.agent)
	case LevelWorkerOnly:
		if kind == KindWorker {
			return nil
		}
		return privilegeErr(def.Name, "Worker", *c.agent)
	case LevelChatOnly:
		if c.purpose == core.PurposeChat {
			return nil
		}
		return core.Errorf(core.EForbidden, "Tool '%s' requires a chat session. Current session purpose is '%s'.", def.Name, c.purpose).
			WithHint("authenticate with purpose 'chat' (or connect with ?purpose=chat); from a task session, hand the conversation over with delegate_to_chat_session")
	case LevelTaskOnly:
		if c.purpose == core.PurposeTask {
			return nil
		}
		return core.Errorf(core.EForbidden, "Tool '%s' requires a task session. Current session purpose is '%s'.", def.Name, c.purpose).
			WithHint("authenticate with purpose 'task' (or connect without ?purpose=chat)")
	}
	// An unknown level cannot be registered; refuse rather than guess.
	return core.Errorf(core.EInternal, "Tool '%s' has an unknown permission level %q", def.Name, def.Level)
}

func authRequired(what string) *core.Error {
	return core.Errorf(core.EUnauthorized, "%s requires authentication. Call authenticate first.", what).
		WithHint("call authenticate(agent_id, passkey, project_id, purpose), or connect with an agent token (Authorization: Bearer alk_…)")
}

func privilegeErr(tool, privilege string, a Agent) *core.Error {
	return core.Errorf(core.EForbidden, "Tool '%s' requires %s privilege", tool, privilege).
		WithHint(fmt.Sprintf("agent '%s' is a %s; to change an agent's kind, %s", a.Name, a.Kind, uiLink(a, "Profile", "profile")))
}

// uiLink names the setting that would change a decision, as the words a
// person follows and the UI route the Agents screen opens on.
func uiLink(a Agent, tabTitle, tab string) string {
	return fmt.Sprintf("open Airlock → Agents → %s → %s (#/agents/%s?tab=%s)", a.Name, tabTitle, a.ID, tab)
}
