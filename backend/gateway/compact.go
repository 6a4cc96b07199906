package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Compactor is the authorization side of compact mode (seed 003).
type Compactor interface {
	// Compact reports whether the caller's agent is in compact mode.
	Compact(c *core.Caller) bool
	// CheckBatch returns every call of a batch the caller may not make.
	CheckBatch(c *core.Caller, calls []core.Target) []authz.Denial
	// ModuleTools returns the tools of module the caller may call, or the
	// refusal of a module with none ("no access to module: X").
	ModuleTools(c *core.Caller, module string, tools []core.Target) ([]core.Target, error)
}

// The meta-tools of compact mode, on Airlock's own server.
const (
	metaSchema = "get_module_schema"
	metaCall   = "call"
	metaBatch  = "batch"
)

func isMeta(name string) bool { return name == metaSchema || name == metaCall || name == metaBatch }

// compact reports whether c is in compact mode.
func (g *Gateway) compact(c *core.Caller) bool {
	return g.opts.Compact != nil && c.Authenticated() && g.opts.Compact.Compact(c)
}

// visibleTools is what c is shown by tools/list: every tool it may call,
// or in compact mode only Airlock's own (with the meta-tools).
func (g *Gateway) visibleTools(c *core.Caller, v *view) (tools []*mcp.Tool, defs [][]byte) {
	compact := g.compact(c)
	for i, t := range v.snap.Tools {
		if compact && t.ServerID != authz.Server {
			continue
		}
		if g.visible(c, core.Target{Kind: core.KindToolCall, Server: t.ServerID, Name: t.Name}) {
			tools = append(tools, v.tools[i])
			defs = append(defs, v.defs[i])
		}
	}
	return tools, defs
}

// EUnknownModule: get_module_schema names a module no server is.
const EUnknownModule = "unknown_module"

// metaCall is one call of call or batch.
type metaCallArgs struct {
	Module   string          `json:"module"`
	ToolName string          `json:"tool_name"`
	Params   json.RawMessage `json:"params"`
}

// runMeta answers a meta-tool for a caller in compact mode. call and each
// call of a batch go through the whole pipeline (gate, policies, rules,
// approval, audit), exactly as if the agent had called the tool itself.
func (g *Gateway) runMeta(ctx context.Context, s *session, req mcp.Request, c core.Caller, p *mcp.CallToolParamsRaw) (mcp.Result, error) {
	snap := g.cat.Snapshot()
	self := &core.Request{Kind: core.KindToolCall, Caller: c, Server: authz.Server, Name: p.Name, Exposed: p.Name, Args: p.Arguments}
	switch p.Name {
	case metaSchema:
		var a struct {
			Module string `json:"module"`
		}
		if err := decodeMeta(p.Arguments, &a); err != nil || a.Module == "" {
			return g.refuse(self, core.Errorf(core.EInvalid, "get_module_schema takes {\"module\": \"<server id>\"}"))
		}
		var targets []core.Target
		for _, t := range snap.Tools {
			if t.ServerID == a.Module {
				targets = append(targets, core.Target{Kind: core.KindToolCall, Server: t.ServerID, Name: t.Name})
			}
		}
		if len(targets) == 0 {
			if _, ok := g.cat.ServerStatus(a.Module); !ok {
				// Nothing to grant or switch on: the deny reasons of seed
				// 003 are for what exists and is withheld (found by a
				// seed audit: this said not_subscribed, with a hint to
				// grant a server that does not exist).
				return g.refuse(self, core.Errorf(EUnknownModule, "Module not found: %s", a.Module).
					WithHint("a module is the id of a server, as in call(module, tool_name, params); help lists the tools you may use"))
			}
		}
		allowed, err := g.opts.Compact.ModuleTools(&c, a.Module, targets)
		if err != nil {
			return g.refuse(self, err)
		}
		type schema struct {
			Name        string          `json:"name"`
			Title       string          `json:"title,omitempty"`
			Description string          `json:"description,omitempty"`
			InputSchema json.RawMessage `json:"inputSchema"`
			// OutputSchema is the shape of the structuredContent call
			// returns, as tools/list gives it (found by a seed audit: it
			// was missing).
			OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
			Annotations  any             `json:"annotations,omitempty"`
		}
		out := struct {
			Module string   `json:"module"`
			Tools  []schema `json:"tools"`
		}{Module: a.Module, Tools: []schema{}}
		for _, t := range allowed {
			ti, ok := snap.ToolOf(t.Server, t.Name)
			if !ok {
				continue
			}
			mt := mcpTool(ti)
			out.Tools = append(out.Tools, schema{Name: ti.Name, Title: ti.Title, Description: ti.Description,
				InputSchema: objectSchema(ti.InputSchema), OutputSchema: ti.OutputSchema, Annotations: mt.Annotations})
		}
		g.recordAnswered(self, "the module's schema")
		return jsonResult(out), nil
	case metaCall:
		var a metaCallArgs
		if err := decodeMeta(p.Arguments, &a); err != nil || a.Module == "" || a.ToolName == "" {
			return g.refuse(self, core.Errorf(core.EInvalid, "call takes {\"module\": \"<server id>\", \"tool_name\": \"<tool>\", \"params\": {...}}"))
		}
		r := &core.Request{Kind: core.KindToolCall, Exposed: exposedOf(snap, a.Module, a.ToolName), Args: params(a.Params), Peer: peerOf(ctx, req)}
		if tok := p.GetProgressToken(); tok != nil {
			ss, _ := req.GetSession().(*mcp.ServerSession)
			r.Progress = progressFunc(ctx, ss, tok)
		}
		return g.run(ctx, s, req, r)
	default: // batch
		var a struct {
			Calls []metaCallArgs `json:"calls"`
		}
		if err := decodeMeta(p.Arguments, &a); err != nil || len(a.Calls) == 0 {
			return g.refuse(self, core.Errorf(core.EInvalid, "batch takes {\"calls\": [{\"module\": ..., \"tool_name\": ..., \"params\": {...}}, ...]}"))
		}
		targets := make([]core.Target, len(a.Calls))
		for i, call := range a.Calls {
			targets[i] = core.Target{Kind: core.KindToolCall, Server: call.Module, Name: call.ToolName}
		}
		// All or nothing: every call is checked before any runs, for its
		// permission and against the policies that deny outright.
		denied := g.opts.Compact.CheckBatch(&c, targets)
		if len(denied) == 0 && g.opts.Precheck != nil {
			for _, call := range a.Calls {
				r := &core.Request{Kind: core.KindToolCall, Caller: c, Server: call.Module, Name: call.ToolName,
					Exposed: exposedOf(snap, call.Module, call.ToolName), Args: params(call.Params)}
				if v := g.opts.Precheck.Check(ctx, r); v.Outcome == core.Deny {
					denied = append(denied, authz.Denial{Tool: call.Module + ":" + call.ToolName, Reason: cmp.Or(v.Code, core.EDenied), Message: v.Reason, Hint: v.Hint})
				}
			}
		}
		if len(denied) > 0 {
			be := authz.NewBatchError(denied)
			g.refuse(self, be.CoreError())
			body, _ := json.MarshalIndent(be, "", "  ") // {"error": {...}}: BatchError wraps itself
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(body)}},
				StructuredContent: json.RawMessage(body), Meta: mcp.Meta{"airlock/error": be.CoreError()}}, nil
		}
		type item struct {
			Tool   string              `json:"tool"`
			Result *mcp.CallToolResult `json:"result"`
		}
		out := struct {
			Results []item `json:"results"`
		}{}
		failed := false
		for _, call := range a.Calls {
			res, err := g.run(ctx, s, req, &core.Request{Kind: core.KindToolCall, Exposed: exposedOf(snap, call.Module, call.ToolName), Args: params(call.Params), Peer: peerOf(ctx, req)})
			tr, _ := res.(*mcp.CallToolResult)
			if wire := (*jsonrpc.Error)(nil); errors.As(err, &wire) {
				// The server's own JSON-RPC error: a batch has one result
				// per call, so it is told as a tool error.
				tr = pipeline.ErrorResult(&core.Error{Code: catalog.EDownstream,
					Message: fmt.Sprintf("server %q answered %s with an error: %s (code %d)", call.Module, call.ToolName, wire.Message, wire.Code)})
			} else if err != nil || tr == nil {
				tr = pipeline.ErrorResult(fmt.Errorf("%v", err))
			}
			failed = failed || tr.IsError
			out.Results = append(out.Results, item{Tool: call.Module + ":" + call.ToolName, Result: tr})
		}
		res := jsonResult(out)
		res.IsError = failed
		return res, nil
	}
}

// exposedOf is the name agents would use for tool at module.
func exposedOf(snap *catalog.Snapshot, module, tool string) string {
	if t, ok := snap.ToolOf(module, tool); ok {
		return t.ExposedName
	}
	return catalog.ExposedName(module, tool)
}

func params(p json.RawMessage) json.RawMessage {
	if len(p) == 0 || string(p) == "null" {
		return nil
	}
	return p
}

func decodeMeta(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return fmt.Errorf("no arguments")
	}
	return json.Unmarshal(raw, v)
}

func jsonResult(v any) *mcp.CallToolResult {
	b, _ := json.MarshalIndent(v, "", "  ")
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}
}

// recordAnswered records a request the gateway answered itself.
func (g *Gateway) recordAnswered(r *core.Request, what string) {
	g.record(&core.AuditRecord{Time: time.Now().UTC(), Kind: r.Kind, Agent: r.Caller.Label(), AgentID: r.Caller.AgentID,
		Client: r.Caller.Client.Name, ClientVersion: r.Caller.Client.Version, Session: r.Caller.Session, Purpose: r.Caller.Purpose,
		Server: r.Server, Tool: r.Name, Arguments: pipeline.RedactArguments(r.Args), Decision: core.DecisionAllow,
		Reason: "answered by Airlock: " + what, Status: core.StatusOK})
}
