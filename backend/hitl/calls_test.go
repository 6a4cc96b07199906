package hitl

import (
	"encoding/json"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
)

// Call is the tests' shorthand for a tool call made at a time.
type Call struct {
	Agent, Session, Server, Tool string
	Args                         json.RawMessage
	Now                          time.Time
}

// Request is the call as the pipeline hands it to the rules.
func (c Call) Request() *core.Request {
	return &core.Request{Kind: core.KindToolCall, Caller: core.Caller{AgentID: c.Agent, Session: c.Session},
		Server: c.Server, Name: c.Tool, Exposed: c.Server + "__" + c.Tool, Args: c.Args}
}

// At is the call's time: Now, or the present when it is unset.
func (c Call) At() time.Time {
	if c.Now.IsZero() {
		return time.Now()
	}
	return c.Now
}
