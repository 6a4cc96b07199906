package api

import "github.com/airlock-dev/airlock/backend/hitl"

// Approvals is the Approvals screen and the approval dialog: the calls
// waiting for a person, and the person's decisions.
type Approvals struct{ d Deps }

// Pending returns the calls waiting for a person, oldest first.
func (a *Approvals) Pending() ([]hitl.Approval, error) {
	p := a.d.Broker.Pending()
	if p == nil {
		p = []hitl.Approval{}
	}
	return p, nil
}

// uiDecider names who decided in the UI, as the agent and Activity read it.
const uiDecider = "the user in Airlock"

// Approve lets a waiting call through, once.
func (a *Approvals) Approve(id string) error { return a.d.Broker.Approve(id, uiDecider) }

// Decline refuses a waiting call; reason goes back to the agent.
func (a *Approvals) Decline(id, reason string) error {
	return a.d.Broker.Decline(id, reason, uiDecider)
}

// ApproveAndAddRule approves a waiting call and adds an auto-approve rule of
// the given breadth (tool, tool_args, server), expiry (none, 1h, 8h, 24h)
// and scope (agent: only the agent that made the call; session: only the
// MCP session it came on; everyone).
func (a *Approvals) ApproveAndAddRule(id, breadth, expiry, scope string) error {
	_, err := a.d.Broker.ApproveAndAddRule(id, breadth, expiry, scope, uiDecider)
	return err
}
