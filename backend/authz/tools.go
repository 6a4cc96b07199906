package authz

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sync"

	"github.com/airlock-dev/airlock/backend/core"
)

// Server is the server id of Airlock's own tools: they are authorized as
// core.Target{Kind: core.KindToolCall, Server: Server, Name: <tool>}.
const Server = "airlock"

// Level is the permission level of one of Airlock's own tools (seed 000).
type Level string

// Permission levels. Who passes which is decided in one place,
// levelDecision; the kinds above a level's kind in the hierarchy pass it
// too (coordinator and owner pass manager_only), except worker_only, which
// is about executing a task and belongs to workers alone.
const (
	// LevelUnauthenticated: anyone, identified or not (authenticate, help).
	LevelUnauthenticated Level = "unauthenticated"
	// LevelCoordinatorOnly: coordinators (and the owner).
	LevelCoordinatorOnly Level = "coordinator_only"
	// LevelManagerOnly: managers (and coordinators and the owner).
	LevelManagerOnly Level = "manager_only"
	// LevelWorkerOnly: workers.
	LevelWorkerOnly Level = "worker_only"
	// LevelAuthenticated: every identified agent, in any session.
	LevelAuthenticated Level = "authenticated"
	// LevelChatOnly: identified agents in a session with purpose chat.
	LevelChatOnly Level = "chat_only"
	// LevelTaskOnly: identified agents in a session with purpose task.
	LevelTaskOnly Level = "task_only"
)

// Levels lists every permission level.
var Levels = []Level{LevelUnauthenticated, LevelCoordinatorOnly, LevelManagerOnly, LevelWorkerOnly,
	LevelAuthenticated, LevelChatOnly, LevelTaskOnly}

func (l Level) valid() bool {
	for _, v := range Levels {
		if l == v {
			return true
		}
	}
	return false
}

// ToolDef declares one of Airlock's own tools: the single table the gate,
// the listings and the help tool all read.
type ToolDef struct {
	Name        string `json:"name"`
	Level       Level  `json:"level"`
	Description string `json:"description"`
	// InputSchema is the tool's JSON Schema (an object schema); help
	// derives the parameter list from its properties, in order.
	InputSchema json.RawMessage `json:"inputSchema"`
	// Example is a sample arguments object, shown by help.
	Example json.RawMessage `json:"example,omitempty"`
	// Compact marks the meta-tools (get_module_schema, call, batch) an
	// agent may use only while compact mode is on for it.
	Compact bool `json:"compact,omitempty"`
}

var toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func (d ToolDef) validate() error {
	if !toolNameRE.MatchString(d.Name) {
		return core.Errorf(core.EInvalid, "tool name %q must be 1-64 letters, digits, _ or -", d.Name)
	}
	if !d.Level.valid() {
		return core.Errorf(core.EInvalid, "tool %s: unknown permission level %q", d.Name, d.Level)
	}
	var schema struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(d.InputSchema, &schema); err != nil || schema.Type != "object" {
		return core.Errorf(core.EInvalid, "tool %s: the input schema must be a JSON object schema (type object)", d.Name)
	}
	if _, err := schemaParams(d.InputSchema); err != nil {
		return core.Errorf(core.EInvalid, "tool %s: %v", d.Name, err)
	}
	if len(d.Example) > 0 && !json.Valid(d.Example) {
		return core.Errorf(core.EInvalid, "tool %s: the example is not valid JSON", d.Name)
	}
	return nil
}

// Registry is the table of Airlock's own tools. Tools added by later
// features (tasks, chat) only declare themselves here; the gate, the
// listings and help follow. It is safe for concurrent use.
type Registry struct {
	mu       sync.RWMutex
	order    []string
	byName   map[string]*ToolDef
	onChange []func()
}

// NewRegistry returns a registry holding defs.
func NewRegistry(defs ...ToolDef) (*Registry, error) {
	r := &Registry{byName: map[string]*ToolDef{}}
	for _, d := range defs {
		if err := r.Register(d); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// DefaultRegistry returns a registry of every tool SPEC §6.2 names, each
// with its permission level from the seeds, and the compact-mode
// meta-tools. authenticate, logout, help, report_completed and the
// meta-tools are fully declared; the task and chat tools carry their level,
// a description and the session_token parameter, and the feature that
// implements them re-registers them with their full schema (Register keeps
// the level).
func DefaultRegistry() *Registry {
	r, err := NewRegistry(defaultTools()...)
	if err != nil {
		panic(fmt.Sprintf("authz: the built-in tool table is invalid: %v", err)) // a bug, caught by every test
	}
	return r
}

// Register adds d, or replaces the tool of the same name. A replacement
// must keep the level the table gives the tool: the level is the
// authorization table's to decide, not the implementing feature's.
func (r *Registry) Register(d ToolDef) error {
	if err := d.validate(); err != nil {
		return err
	}
	r.mu.Lock()
	if old, ok := r.byName[d.Name]; ok {
		if old.Level != d.Level || old.Compact != d.Compact {
			r.mu.Unlock()
			return core.Errorf(core.EConflict, "tool %s is declared with level %s (compact-only %v) in the authorization table; a new definition cannot change that",
				d.Name, old.Level, old.Compact)
		}
	} else {
		r.order = append(r.order, d.Name)
	}
	c := d
	r.byName[d.Name] = &c
	hooks := append([]func(){}, r.onChange...)
	r.mu.Unlock()
	for _, h := range hooks {
		h()
	}
	return nil
}

// Lookup returns the tool named name.
func (r *Registry) Lookup(name string) (ToolDef, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	d, ok := r.byName[name]
	if !ok {
		return ToolDef{}, false
	}
	return *d, true
}

// lookup returns the stored definition without copying (read-only).
func (r *Registry) lookup(name string) *ToolDef {
	r.mu.RLock()
	d := r.byName[name]
	r.mu.RUnlock()
	return d
}

// Tools returns every tool in registration order.
func (r *Registry) Tools() []ToolDef {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]ToolDef, len(r.order))
	for i, n := range r.order {
		out[i] = *r.byName[n]
	}
	return out
}

// onRegister registers fn to run after every Register (the Service drops
// its memoised decisions).
func (r *Registry) onRegister(fn func()) {
	r.mu.Lock()
	r.onChange = append(r.onChange, fn)
	r.mu.Unlock()
}

// Param describes one parameter for Schema.
type Param struct {
	Name        string
	Type        string // string, integer, number, boolean, object, array
	Description string
	Required    bool
	Enum        []string
	// Items is the schema of an array's elements.
	Items json.RawMessage
	// Default is the value assumed when the parameter is left out.
	Default any
}

// Schema builds an object schema from params, keeping their order (help
// lists parameters in it).
func Schema(params ...Param) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	var required []string
	for i, p := range params {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSON(&b, p.Name)
		b.WriteString(`:{"type":`)
		writeJSON(&b, p.Type)
		if p.Description != "" {
			b.WriteString(`,"description":`)
			writeJSON(&b, p.Description)
		}
		if len(p.Enum) > 0 {
			b.WriteString(`,"enum":`)
			writeJSON(&b, p.Enum)
		}
		if len(p.Items) > 0 {
			b.WriteString(`,"items":`)
			b.Write(p.Items)
		}
		if p.Default != nil {
			b.WriteString(`,"default":`)
			writeJSON(&b, p.Default)
		}
		b.WriteByte('}')
		if p.Required {
			required = append(required, p.Name)
		}
	}
	b.WriteString(`}`)
	if required == nil {
		required = []string{}
	}
	b.WriteString(`,"required":`)
	writeJSON(&b, required)
	b.WriteByte('}')
	return json.RawMessage(b.Bytes())
}

func writeJSON(b *bytes.Buffer, v any) {
	out, err := json.Marshal(v)
	if err != nil {
		panic(err) // only strings, string slices and plain defaults reach here
	}
	b.Write(out)
}

// HelpParam is one parameter as help shows it (seed 000).
type HelpParam struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Required    bool     `json:"required"`
	Enum        []string `json:"enum,omitempty"`
	Description string   `json:"description,omitempty"`
}

// schemaParams lists the properties of an object schema in the order the
// schema gives them, which a map would lose.
func schemaParams(schema json.RawMessage) ([]HelpParam, error) {
	var top struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	required := map[string]bool{}
	for _, n := range top.Required {
		required[n] = true
	}
	params := []HelpParam{}
	if len(top.Properties) == 0 {
		return params, nil
	}
	dec := json.NewDecoder(bytes.NewReader(top.Properties))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("input schema: properties is not an object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("input schema properties: %w", err)
		}
		name, _ := t.(string)
		var prop struct {
			Type        any      `json:"type"`
			Description string   `json:"description"`
			Enum        []string `json:"enum"`
		}
		if err := dec.Decode(&prop); err != nil {
			return nil, fmt.Errorf("input schema property %s: %w", name, err)
		}
		typ, _ := prop.Type.(string)
		if typ == "" {
			typ = "any"
		}
		params = append(params, HelpParam{Name: name, Type: typ, Required: required[name], Enum: prop.Enum, Description: prop.Description})
	}
	return params, nil
}

// SessionTokenParam is the seeds' way of naming a session in each call; a
// session bound by authenticate or an agent token on the connection makes
// it unnecessary. Every tool of the table takes it first.
func SessionTokenParam() Param {
	return Param{Name: "session_token", Type: "string",
		Description: "Session token from authenticate. Not needed when this connection is already authenticated (authenticate was called on it, or it uses an agent token)."}
}

// defaultTools is the table of SPEC §6.2 with the seeds' levels.
func defaultTools() []ToolDef {
	placeholder := func(name string, level Level, description string) ToolDef {
		return ToolDef{Name: name, Level: level, Description: description, InputSchema: Schema(SessionTokenParam())}
	}
	return []ToolDef{
		{
			Name:  "authenticate",
			Level: LevelUnauthenticated,
			Description: "Opens an agent session. Give your agent_id and passkey, optionally a project and the session purpose " +
				"(task, the default, or chat). Returns a session_token; the session is bound to this connection, and the token " +
				"also works as the session_token argument or as Authorization: Bearer on a new connection.",
			InputSchema: Schema(
				Param{Name: "agent_id", Type: "string", Required: true, Description: "Your agent id (or name)."},
				Param{Name: "passkey", Type: "string", Required: true, Description: "Your agent's passkey."},
				Param{Name: "project_id", Type: "string", Description: "The project to work in (id or name); you must be assigned to it."},
				Param{Name: "purpose", Type: "string", Enum: []string{core.PurposeTask, core.PurposeChat}, Default: core.PurposeTask,
					Description: "task: work on tasks; chat: answer conversations. It decides which tools you may use."},
			),
			Example: json.RawMessage(`{"agent_id":"worker-01","passkey":"alp_xxx","project_id":"proj-001","purpose":"task"}`),
		},
		{
			Name:        "logout",
			Level:       LevelAuthenticated,
			Description: "Ends this agent session, and only this one. A connection that uses an agent token has no session to end.",
			InputSchema: Schema(SessionTokenParam()),
			Example:     json.RawMessage(`{"session_token":"als_xxx"}`),
		},
		{
			Name:  ToolHelp,
			Level: LevelUnauthenticated,
			Description: "Lists the Airlock tools you can use right now, or shows one tool in detail (parameters, example). " +
				"Only tools your authentication state and session purpose allow are listed; for any other tool it says why not.",
			InputSchema: Schema(Param{Name: "tool_name", Type: "string",
				Description: "A tool's name, to see its details (parameters, example). Leave it out to list the tools available to you."}),
			Example: json.RawMessage(`{"tool_name":"report_completed"}`),
		},

		placeholder("health_check", LevelCoordinatorOnly, "Checks that Airlock's task services are up."),
		placeholder("list_managed_agents", LevelCoordinatorOnly, "Lists the agents Airlock manages, with their status."),
		placeholder("get_agent_action", LevelCoordinatorOnly, "Tells the coordinator what to do next for one agent (start it, keep it running, stop it)."),

		placeholder("get_my_task", LevelAuthenticated, "Returns the task assigned to you that is in progress."),
		placeholder("get_my_tasks", LevelAuthenticated, "Lists the tasks assigned to you."),
		placeholder("get_next_action", LevelAuthenticated, "Tells you what to do next."),
		{
			Name:        "report_completed",
			Level:       LevelAuthenticated,
			Description: "Reports that your task is finished. The result argument says how it ended.",
			InputSchema: Schema(
				SessionTokenParam(),
				Param{Name: "result", Type: "string", Required: true, Enum: []string{"success", "failed", "blocked"},
					Description: "How the task ended: success, failed, or blocked by something outside your control."},
				Param{Name: "summary", Type: "string", Description: "A summary of what was done (optional)."},
			),
			Example: json.RawMessage(`{"session_token":"als_xxx","result":"success","summary":"All subtasks are done."}`),
		},
		placeholder("create_tasks_batch", LevelTaskOnly, "Creates several tasks at once, with dependencies between them (from a task session)."),
		placeholder("assign_task", LevelManagerOnly, "Assigns a task to an agent below you."),
		placeholder("update_task_status", LevelAuthenticated, "Changes the status of a task."),
		placeholder("request_task", LevelAuthenticated, "Asks for a new task for yourself."),
		placeholder("start_task_from_chat", LevelChatOnly, "Starts a task assigned to you, on the request of an agent above you (requester_id)."),
		placeholder("update_task_from_chat", LevelChatOnly, "Changes a task on the request of an agent above you (requester_id)."),
		placeholder("delegate_to_chat_session", LevelTaskOnly, "Hands a conversation over to your chat session."),
		placeholder("notify_task_session", LevelChatOnly, "Sends a notification from your chat session to your own task session."),
		placeholder("get_conversation_messages", LevelTaskOnly, "Reads the messages of a conversation (from a task session)."),
		placeholder("get_pending_messages", LevelChatOnly, "Returns the chat messages waiting for your answer."),
		placeholder("respond_chat", LevelChatOnly, "Answers a chat message."),
		placeholder("start_conversation", LevelChatOnly, "Starts a conversation with another agent."),
		placeholder("end_conversation", LevelChatOnly, "Ends a conversation."),
		placeholder("send_message", LevelChatOnly, "Sends a message to another agent."),
		placeholder("get_my_execution_history", LevelAuthenticated, "Lists your past runs (execution logs), newest first."),
		placeholder("get_execution_log", LevelAuthenticated, "Returns the content of one of your execution logs."),

		{
			Name:        "get_module_schema",
			Level:       LevelAuthenticated,
			Compact:     true,
			Description: "Compact mode: returns the tools of one module (a downstream server) that you may call, with their schemas.",
			InputSchema: Schema(Param{Name: "module", Type: "string", Required: true, Description: "The module (server id)."}),
			Example:     json.RawMessage(`{"module":"github"}`),
		},
		{
			Name:        "call",
			Level:       LevelAuthenticated,
			Compact:     true,
			Description: "Compact mode: calls one tool of a module with its parameters.",
			InputSchema: Schema(
				Param{Name: "module", Type: "string", Required: true, Description: "The module (server id)."},
				Param{Name: "tool_name", Type: "string", Required: true, Description: "The tool's name in the module."},
				Param{Name: "params", Type: "object", Description: "The tool's arguments."},
			),
			Example: json.RawMessage(`{"module":"github","tool_name":"search_issues","params":{"query":"is:open"}}`),
		},
		{
			Name:    "batch",
			Level:   LevelAuthenticated,
			Compact: true,
			Description: "Compact mode: calls several tools. Every call is checked first; if any is not permitted, none runs " +
				"and the error lists each refused tool with its reason and hint.",
			InputSchema: Schema(Param{Name: "calls", Type: "array", Required: true, Description: "The calls, run in order.",
				Items: Schema(
					Param{Name: "module", Type: "string", Required: true},
					Param{Name: "tool_name", Type: "string", Required: true},
					Param{Name: "params", Type: "object"},
				)}),
			Example: json.RawMessage(`{"calls":[{"module":"github","tool_name":"get_issue","params":{"number":1}},{"module":"notion","tool_name":"search","params":{"query":"spec"}}]}`),
		},
	}
}
