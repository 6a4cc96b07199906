package authz

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
)

// Compact mode (seed 003): an agent with the compact flag sees the
// meta-tools get_module_schema(module), call(module, tool_name, params) and
// batch(calls) instead of every downstream tool; a module is a server. The
// gateway implements the three tools, because call and batch must take
// each inner call through the whole pipeline; these helpers give it the
// authorization side.

// Compact reports whether caller's agent is in compact mode.
func (s *Service) Compact(caller *core.Caller) bool {
	if caller == nil || caller.AgentID == "" {
		return false
	}
	e, err := s.entry(caller.AgentID)
	return err == nil && e.agent.Compact
}

// Denial is one refused call of a batch, in seed 003's shape.
type Denial struct {
	// Tool is "module:tool_name".
	Tool string `json:"tool"`
	// Reason is the refusal's code: suspended, not_subscribed,
	// user_disabled, ...
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

// CheckBatch checks every call of a batch before any runs and returns each
// refused one (all or nothing: the batch may run only when none is
// refused).
func (s *Service) CheckBatch(caller *core.Caller, calls []core.Target) []Denial {
	var out []Denial
	for _, t := range calls {
		if err := s.Refusal(caller, t); err != nil {
			out = append(out, Denial{Tool: t.Server + ":" + t.Name, Reason: err.Code, Message: err.Message, Hint: err.Hint})
		}
	}
	return out
}

// BatchError is the refusal of a whole batch, in seed 003's shape:
// {"error": {"message": "2 tool(s) not permitted", "denied_tools": [...]}}.
type BatchError struct {
	Message     string   `json:"message"`
	DeniedTools []Denial `json:"denied_tools"`
}

// NewBatchError returns the refusal of a batch with the given denials.
func NewBatchError(denied []Denial) *BatchError {
	return &BatchError{Message: fmt.Sprintf("%d tool(s) not permitted", len(denied)), DeniedTools: denied}
}

func (e *BatchError) Error() string { return e.Message }

// MarshalJSON wraps the refusal in the seed's "error" object.
func (e *BatchError) MarshalJSON() ([]byte, error) {
	type plain BatchError
	return json.Marshal(struct {
		Error plain `json:"error"`
	}{plain(*e)})
}

// CoreError is the refusal as the *core.Error the pipeline returns: code
// denied, the seed's message, and one line per refused tool in the hint.
func (e *BatchError) CoreError() *core.Error {
	lines := make([]string, len(e.DeniedTools))
	for i, d := range e.DeniedTools {
		lines[i] = fmt.Sprintf("%s: %s (%s)", d.Tool, d.Reason, d.Hint)
	}
	return &core.Error{Code: core.EDenied, Message: e.Message, Hint: strings.Join(lines, "; ")}
}

// ModuleTools returns the tools of module (a server) that caller may call,
// out of tools, for get_module_schema. A module with no allowed tool is
// refused (seed 003: "no access to module: X"), so an agent denied every
// tool cannot read an empty schema either. The reason and hint of the
// refusal are those of the module's first tool, or of the server grant
// when the module has none.
func (s *Service) ModuleTools(caller *core.Caller, module string, tools []core.Target) ([]core.Target, error) {
	var allowed []core.Target
	var first *core.Error
	for _, t := range tools {
		if t.Server != module {
			continue
		}
		err := s.Refusal(caller, t)
		if err == nil {
			allowed = append(allowed, t)
		} else if first == nil {
			first = err
		}
	}
	if len(allowed) > 0 {
		return allowed, nil
	}
	if first == nil {
		first = s.Refusal(caller, core.Target{Kind: core.KindPromptGet, Server: module, Name: ""})
	}
	e := &core.Error{Code: core.EForbidden, Message: "no access to module: " + module}
	if first != nil {
		e.Code, e.Hint = first.Code, first.Hint
	}
	return nil, e
}
