package core

// Event names, `area:verb`. The payload types are listed in
// backend/api/events.go, from which frontend/src/lib/api/generated.ts is
// generated.
const (
	EventActivity          = "activity:new"       // payload: []AuditRecord (batched; a record appears when it begins and again when it ends)
	EventAuditFailed       = "audit:failed"       // payload: activity.Failure
	EventAuditRecovered    = "audit:recovered"    // payload: activity.Recovery
	EventServerStatus      = "server:status"      // payload: ServerStatus
	EventServersChanged    = "servers:changed"    // payload: ConfigState
	EventApprovalRequested = "approval:requested" // payload: Approval
	EventApprovalResolved  = "approval:resolved"  // payload: Approval
	EventRulesChanged      = "rules:changed"      // payload: RulesChanged
	EventAgentsChanged     = "agents:changed"     // payload: AgentsChanged
	EventBuiltinChanged    = "builtin:changed"    // payload: builtin.Overview
)

// EventSink receives events for the UI. The desktop app forwards them to
// Wails, `serve` to its SSE clients, tests record them. Emit must not block.
type EventSink interface {
	Emit(name string, payload any)
}

// EventSinkFunc adapts a function to EventSink.
type EventSinkFunc func(name string, payload any)

// Emit calls f.
func (f EventSinkFunc) Emit(name string, payload any) { f(name, payload) }

// Discard is an EventSink that drops everything.
var Discard EventSink = EventSinkFunc(func(string, any) {})

// AgentsChanged says which agents changed (their status, role, grants,
// toggles, hierarchy or projects); empty means possibly all of them.
type AgentsChanged struct {
	AgentIDs []string `json:"agentIds"`
}
