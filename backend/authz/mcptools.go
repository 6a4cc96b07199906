package authz

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
)

// RegisterTools adds authenticate, logout and help to s, Airlock's own
// in-process MCP server, with the definitions of svc's tool table. Each
// handler takes its caller from the request's _meta under core.MetaCaller
// (the dispatcher sets it and strips it from what agents send), refuses
// without one, and checks the caller again with Check before acting (the
// last of the three layers of seed 003).
func RegisterTools(s *mcp.Server, svc *Service) {
	tools := []struct {
		name string
		run  func(context.Context, core.Caller, json.RawMessage) (any, error)
	}{
		{"authenticate", svc.toolAuthenticate},
		{"logout", svc.toolLogout},
		{"help", svc.toolHelp},
	}
	for _, t := range tools {
		def, ok := svc.reg.Lookup(t.name)
		if !ok {
			continue // the table always has them; a custom registry may not
		}
		s.AddTool(&mcp.Tool{Name: def.Name, Description: def.Description, InputSchema: def.InputSchema}, svc.handler(def.Name, def.InputSchema, t.run))
	}
}

func (svc *Service) handler(name string, schema json.RawMessage, h func(context.Context, core.Caller, json.RawMessage) (any, error)) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var meta map[string]any
		if req.Params != nil {
			meta = req.Params.Meta
		}
		caller, ok := core.CallerFromMeta(meta)
		if !ok {
			return pipeline.ErrorResult(core.Errorf(core.EInternal,
				"Airlock did not hand a caller to %s, so it refuses the call", name)), nil
		}
		if err := svc.Check(&caller, core.Target{Kind: core.KindToolCall, Server: Server, Name: name}); err != nil {
			return pipeline.ErrorResult(err), nil
		}
		var args json.RawMessage
		if req.Params != nil {
			args = req.Params.Arguments
		}
		if err := UnknownArguments(name, schema, args); err != nil {
			return pipeline.ErrorResult(err), nil
		}
		out, err := h(ctx, caller, args)
		if err != nil {
			return pipeline.ErrorResult(err), nil
		}
		text, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return pipeline.ErrorResult(err), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: json.RawMessage(text)}, nil
	}
}

func decodeArgs(raw json.RawMessage, v any) error { return DecodeArgs(raw, v) }

// DecodeArgs decodes a tool's arguments into v, refusing what does not fit
// in words an agent can act on: the argument and the type it must have,
// not the decoder's Go types (found by a new-user test: "cannot unmarshal
// string into Go struct field .tasks of type []struct { LocalID ...").
func DecodeArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	err := json.Unmarshal(raw, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return core.Errorf(core.EInvalid, "argument %q must be %s, not %s", te.Field, jsonKind(te.Type), article(te.Value))
	case errors.As(err, &te):
		return core.Errorf(core.EInvalid, "the arguments must be a JSON object, not %s", article(te.Value))
	case errors.As(err, &se):
		return core.Errorf(core.EInvalid, "the arguments are not valid JSON (at byte %d)", se.Offset)
	}
	return core.Errorf(core.EInvalid, "the arguments are not the object this tool takes: %v", err)
}

// jsonKind names the JSON a Go type takes.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another type"
}

// article puts "a"/"an" before a JSON value kind ("string", "number",
// "object", "array", "bool", "number 1.5").
func article(kind string) string {
	switch {
	case kind == "bool":
		return "true or false"
	case strings.HasPrefix(kind, "a") || strings.HasPrefix(kind, "o"):
		return "an " + kind
	}
	return "a " + kind
}

// AuthenticateResult is what authenticate returns.
type AuthenticateResult struct {
	Success      bool      `json:"success"`
	SessionToken string    `json:"session_token"`
	SessionID    string    `json:"session_id"`
	AgentID      string    `json:"agent_id"`
	AgentName    string    `json:"agent_name"`
	ProjectID    string    `json:"project_id,omitempty"`
	Purpose      string    `json:"purpose"`
	ExpiresAt    time.Time `json:"expires_at"`
	ExpiresIn    int64     `json:"expires_in"`
	// Bound says the session is bound to this MCP session, so further
	// calls on it need no session_token.
	Bound       bool   `json:"bound"`
	Instruction string `json:"instruction"`
}

func (svc *Service) toolAuthenticate(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		AgentID   string `json:"agent_id"`
		Passkey   string `json:"passkey"`
		ProjectID string `json:"project_id"`
		Purpose   string `json:"purpose"`
	}
	if err := decodeArgs(raw, &in); err != nil {
		return nil, err
	}
	if in.AgentID == "" || in.Passkey == "" {
		return nil, core.Errorf(core.EInvalid, "Missing required arguments: agent_id, passkey")
	}
	sess, err := svc.Authenticate(in.AgentID, in.Passkey, in.ProjectID, in.Purpose)
	if err != nil {
		return nil, err
	}
	out := AuthenticateResult{Success: true, SessionToken: sess.Token, SessionID: sess.Record.ID, AgentID: sess.Record.AgentID,
		AgentName: sess.AgentName, ProjectID: sess.Record.ProjectID, Purpose: sess.Record.Purpose, ExpiresAt: sess.Record.ExpiresAt,
		ExpiresIn: int64(sess.Record.ExpiresAt.Sub(svc.now()).Seconds())}
	if c.Session != "" {
		if err := svc.Bind(c.Session, sess.Record.ID); err != nil {
			return nil, err
		}
		out.Bound = true
		out.Instruction = "Authenticated. This connection now works as " + sess.AgentName + " in a " + sess.Record.Purpose +
			" session; call help to see your tools. Keep session_token to use the session elsewhere."
	} else {
		out.Instruction = "Authenticated, but this client keeps no MCP session to bind to (a 2026-07-28 client, say), so tools/list still shows what an unauthenticated caller sees. " +
			"Reconnect with Authorization: Bearer <session_token> to list and call your tools, or pass session_token with each call; call help to see your tools."
	}
	return out, nil
}

func (svc *Service) toolLogout(_ context.Context, c core.Caller, _ json.RawMessage) (any, error) {
	if c.AuthSession == "" {
		return nil, core.Errorf(core.EInvalid, "No session to end: this connection uses the agent's own token").
			WithHint("an agent token stays valid until it is rotated on the Agents screen")
	}
	if err := svc.Logout(c.AuthSession, c.Session); err != nil {
		return nil, err
	}
	return map[string]any{"success": true, "session_id": c.AuthSession, "instruction": "Session ended. Call authenticate to start a new one."}, nil
}

func (svc *Service) toolHelp(_ context.Context, c core.Caller, raw json.RawMessage) (any, error) {
	var in struct {
		ToolName string `json:"tool_name"`
	}
	if err := decodeArgs(raw, &in); err != nil {
		return nil, err
	}
	if in.ToolName == "" {
		return svc.HelpList(&c), nil
	}
	return svc.HelpFor(&c, in.ToolName)
}
