package teams

import (
	"fmt"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
)

// Error codes of the team tools. The first four are seed 001's; the others
// name the other refusals the seeds imply (seed 001's
// MCPError.executionLogNotFound is ECodeExecutionNotFound).
const (
	// ECodeUnauthorized: the requester is not above the caller, or the
	// caller may not act on the task or conversation.
	ECodeUnauthorized = core.EUnauthorized
	// ECodeNotAssigned: an agent is not assigned to the project.
	ECodeNotAssigned = "agent_not_assigned_to_project"
	// ECodeAgentNotFound: no agent has that id or name.
	ECodeAgentNotFound = "agent_not_found"
	// ECodeTaskNotFound: no task of the project has that id.
	ECodeTaskNotFound = "task_not_found"

	ECodeConversationNotFound = "conversation_not_found"
	ECodeConversationEnded    = "conversation_ended"
	ECodeExecutionNotFound    = "execution_log_not_found"
	ECodeLogUnavailable       = "log_file_unavailable"
	ECodeInvalidTransition    = "invalid_status_transition"
	// ECodeTaskBlocked: the task has open dependencies.
	ECodeTaskBlocked     = "task_blocked"
	ECodeDependencyCycle = "dependency_cycle"
	// ECodeProjectRequired: the session names no project and the agent is
	// not assigned to exactly one.
	ECodeProjectRequired = "project_required"
	ECodeProjectNotFound = "project_not_found"
)

func errTaskNotFound(id string) *core.Error {
	return core.Errorf(ECodeTaskNotFound, "Task not found: %s", id).
		WithHint("call get_my_tasks to see your tasks and their ids")
}

func errAgentNotFound(ref string) *core.Error {
	return core.Errorf(ECodeAgentNotFound, "Agent not found: %s", ref)
}

func errNotAssigned(a authz.Agent, projectID string) *core.Error {
	return core.Errorf(ECodeNotAssigned, "Agent '%s' (%s) is not assigned to project '%s'", a.Name, a.ID, projectID).
		WithHint(fmt.Sprintf("put agent '%s' on the project: Agents screen, Projects tab (or 'airlock agents update %s --project P', which lists all its projects)", a.Name, a.Name))
}

func errConversationNotFound(id string) *core.Error {
	return core.Errorf(ECodeConversationNotFound, "Conversation not found: %s", id)
}

// notFoundAs turns the store's ENotFound into the given refusal and passes
// every other error on.
func notFoundAs(err error, e *core.Error) error {
	if core.ErrorCode(err) == core.ENotFound {
		return e
	}
	return err
}
