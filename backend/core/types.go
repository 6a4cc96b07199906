package core

import (
	"encoding/json"
	"strings"
	"time"
)

// ServerConfig is one downstream MCP server, as in the `mcpServers` object of
// Claude Desktop / Cursor configs. The map key there is ID here.
type ServerConfig struct {
	ID      string            `json:"id"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// URL selects an HTTP transport instead of a process.
	URL string `json:"url,omitempty"`
	// Type is "stdio", "http" (Streamable HTTP) or "sse"; empty means stdio
	// with a command and http with a URL.
	Type     string            `json:"type,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
	Disabled bool              `json:"disabled,omitempty"`
	// NoPrefix exposes the server's tools, prompts and resources under their
	// own names instead of server__name, as long as none collides with
	// another server's.
	NoPrefix bool `json:"noPrefix,omitempty"`
	// TrustNewTools accepts tools the server adds after its first listing
	// without asking; otherwise each new tool asks until the user accepts it.
	TrustNewTools bool `json:"trustNewTools,omitempty"`
	// Sandbox starts the server's process in the kernel sandbox shell_exec
	// runs in, which keeps it out of Airlock's data directory (Linux with
	// Landlock; elsewhere the server does not start). Only for a command.
	Sandbox bool `json:"sandbox,omitempty"`
	// StartTimeout is how many seconds the server may take to start and
	// list its tools (0: Airlock's default, 30 s). A command such as
	// `npx -y` that downloads its package on the first start may need more.
	StartTimeout int `json:"startTimeout,omitempty"`
	// CallTimeout is how many seconds one request to the server may run
	// without an answer (0: Airlock's default, 10 minutes). A progress
	// notification from the server starts the count again.
	CallTimeout int `json:"callTimeout,omitempty"`
	// Extra keeps every field of the entry Airlock does not know, so that an
	// import followed by an export loses nothing.
	Extra map[string]json.RawMessage `json:"extra,omitempty"`
}

// Transports of a source.
const (
	TransportStdio     = "stdio"
	TransportHTTP      = "http"
	TransportSSE       = "sse"
	TransportInProcess = "in-process" // Airlock's own servers
)

// Transport returns the effective transport: "stdio", "http" or "sse" (or
// "in-process" for Airlock's own servers).
func (c ServerConfig) Transport() string {
	switch c.Type {
	case TransportInProcess:
		return TransportInProcess
	case "sse":
		return "sse"
	case "http", "streamable-http", "streamableHttp":
		return "http"
	case "stdio":
		return "stdio"
	}
	if c.URL != "" {
		return "http"
	}
	return "stdio"
}

// ReservedServerIDs are the ids of Airlock's own in-process servers: its
// own tools and the built-in file and shell servers. No configured server
// may take them.
var ReservedServerIDs = []string{"airlock", "file-read", "file-write", "shell-exec"}

// Reserved reports whether id belongs to one of Airlock's own servers.
func Reserved(id string) bool {
	for _, r := range ReservedServerIDs {
		if strings.EqualFold(r, id) {
			return true
		}
	}
	return false
}

// Server states.
const (
	StateStarting   = "starting"
	StateRunning    = "running"
	StateRestarting = "restarting" // crashed, waiting for the backoff to pass
	StateFailed     = "failed"     // crashed too often; needs a manual restart
	StateStopped    = "stopped"    // disabled or removed
)

// ServerStatus is what the Servers screen shows of one downstream server.
type ServerStatus struct {
	ID        string `json:"id"`
	Transport string `json:"transport"`
	// BuiltIn is set for Airlock's own in-process servers.
	BuiltIn    bool       `json:"builtIn,omitempty"`
	State      string     `json:"state"`
	PID        int        `json:"pid,omitempty"`
	Restarts   int        `json:"restarts"`
	LastError  string     `json:"lastError,omitempty"`
	StderrTail []string   `json:"stderrTail"`
	Tools      []ToolInfo `json:"tools"`
	Since      time.Time  `json:"since"`
	// Warnings are problems that do not stop the server, e.g. tool names
	// hidden because they collide with another server's.
	Warnings []string `json:"warnings,omitempty"`
	// Instructions are what the server tells its clients about using it
	// (MCP's InitializeResult.instructions), as it gave them when Airlock
	// last connected to it; "" when it gave none.
	Instructions string `json:"instructions,omitempty"`
	// InstructionsChanged is set when they differ from the instructions
	// the user accepted (first seen, or accepted since): agents get the
	// accepted ones until the user accepts the change.
	InstructionsChanged *InstructionsChange `json:"instructionsChanged,omitempty"`
}

// InstructionsChange is how a server's instructions differ from those the
// user accepted.
type InstructionsChange struct {
	Accepted string    `json:"accepted"` // what agents get meanwhile; "" for none
	Given    string    `json:"-"`        // what the server gives now (ServerStatus.Instructions)
	Since    time.Time `json:"since"`    // when the server started giving them
}

// ToolInfo is a downstream tool as Airlock exposes it.
type ToolInfo struct {
	ServerID     string           `json:"serverId"`
	Name         string           `json:"name"`        // the downstream name
	ExposedName  string           `json:"exposedName"` // server__tool, sanitised
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	// Meta and Icons pass through as the server lists them (MCP Apps put
	// their UI's resource in _meta; found by an interop test: both were
	// dropped). Icons is the JSON array.
	Meta  map[string]any  `json:"_meta,omitempty"`
	Icons json.RawMessage `json:"icons,omitempty"`
	// Execution is the tool's execution properties (MCP 2025-11-25, such
	// as {"taskSupport":"optional"}) as the server lists them (found by an
	// interop test: it was dropped).
	Execution json.RawMessage `json:"execution,omitempty"`
	// Changed is set when the server now describes the tool differently
	// from the definition the user accepted (first seen, or accepted since).
	Changed *ToolChange `json:"changed,omitempty"`
}

// ToolChange says how a tool's definition differs from the accepted one.
type ToolChange struct {
	// New is set for a tool the server added after its first listing; it
	// asks until the user accepts it. Fields is then empty.
	New      bool     `json:"new,omitempty"`
	Fields   []string `json:"fields"`   // title, description, inputSchema, outputSchema, annotations, _meta, icons, execution
	Accepted string   `json:"accepted"` // the accepted definition, as JSON
	// Shown names the definition the server lists now, as the Servers
	// screen shows it: accepting takes that one only.
	Shown string    `json:"shown"`
	Since time.Time `json:"since"` // when the change was first seen
}

// ToolAnnotations are the MCP hints that tell how risky a tool is.
type ToolAnnotations struct {
	// Title is a display name (a client shows it when the tool has no
	// title of its own).
	Title       string `json:"title,omitempty"`
	ReadOnly    *bool  `json:"readOnlyHint,omitempty"`
	Destructive *bool  `json:"destructiveHint,omitempty"`
	Idempotent  *bool  `json:"idempotentHint,omitempty"`
	OpenWorld   *bool  `json:"openWorldHint,omitempty"`
}

// Decisions recorded in the audit log.
const (
	DecisionAllow    = "allow"    // no approval needed (auto-approve rule)
	DecisionApproved = "approved" // a person approved
	DecisionDeclined = "declined" // a person declined
	DecisionTimeout  = "timeout"  // nobody decided in time
	DecisionExpired  = "expired"  // the app stopped while the call waited
	DecisionDenied   = "denied"   // a policy refused the call
	DecisionError    = "error"    // refused before any decision (bad request, unknown tool)
)

// Result statuses recorded in the audit log.
const (
	StatusRunning   = "running"    // begun; not finished yet (or Airlock stopped while it ran)
	StatusOK        = "ok"         // the tool ran and did not report an error
	StatusToolError = "tool_error" // the tool ran and reported isError
	StatusError     = "error"      // the request never produced a result
)

// AuditRecord is one request through the pipeline. Its id is assigned when
// the request arrives, so ids order records by arrival.
type AuditRecord struct {
	ID   int64     `json:"id"`
	Time time.Time `json:"time"` // when the request arrived
	// Kind is the MCP method: tools/call, prompts/get or resources/read.
	Kind    string `json:"kind"`
	Agent   string `json:"agent"`             // the caller's label: agent name, id, or "unauthenticated"
	AgentID string `json:"agentId,omitempty"` // empty when nobody was identified
	// Client and ClientVersion are what the MCP client says it is, e.g.
	// "claude-code" and "2.1.0": shown, never used to decide.
	Client        string `json:"client,omitempty"`
	ClientVersion string `json:"clientVersion,omitempty"`
	Session       string `json:"session"`
	// AuthSession is the agent session the caller used (Caller.AuthSession),
	// for Airlock's own use while it runs (the runner tells a run's calls
	// from its agent's other calls by it); neither stored nor shown.
	AuthSession string `json:"-" gorm:"-"`
	Purpose     string `json:"purpose,omitempty"` // the session purpose, task or chat
	Server      string `json:"server"`
	// Tool is the target at its server: the tool or prompt name, or the
	// resource URI.
	Tool           string `json:"tool"`
	Arguments      string `json:"arguments"`  // JSON with secrets redacted
	ArgsDigest     string `json:"argsDigest"` // sha256 of the raw arguments
	Decision       string `json:"decision"`
	Reason         string `json:"reason"`
	RuleID         string `json:"ruleId,omitempty"`
	RuleSetVersion int64  `json:"ruleSetVersion,omitempty"`
	Approver       string `json:"approver,omitempty"`
	WaitMs         int64  `json:"waitMs,omitempty"`
	Status         string `json:"status"`
	ErrorCode      string `json:"errorCode,omitempty"`
	Error          string `json:"error,omitempty"`
	LatencyUs      int64  `json:"latencyUs"`
}

// ActivityFilter selects audit records; empty fields match everything.
type ActivityFilter struct {
	Agent    string `json:"agent,omitempty"`
	Server   string `json:"server,omitempty"`
	Tool     string `json:"tool,omitempty"`
	Kind     string `json:"kind,omitempty"`
	Decision string `json:"decision,omitempty"`
	// Since and Until bound the request's arrival time, Since inclusive and
	// Until exclusive, to the millisecond; a zero time is no bound. The
	// Activity chart sets them when a bar is picked.
	Since    time.Time `json:"since,omitzero"`
	Until    time.Time `json:"until,omitzero"`
	BeforeID int64     `json:"beforeId,omitempty"` // page backwards from this id
	Limit    int       `json:"limit,omitempty"`
	// Full returns whole records (exports); lists cut long arguments.
	Full bool `json:"-"`
}

// KeptSession is what is kept of an agent's MCP session for after a
// restart of Airlock (store.MCPSessions; the gateway carries it on).
type KeptSession struct {
	// Credential is the gateway's hash of the credential that opened it.
	Credential string
	// State is the protocol's session state, as JSON.
	State []byte
	// Bound is the agent session authenticate bound to it ("": none).
	Bound string
	// Subs are the resources it is subscribed to: server, URI.
	Subs [][2]string
}
