package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lists are a downstream server's prompts and resources. Prompts are exposed
// as server__prompt like tools; resources keep their URIs (they are
// addresses that tool results link to) and get server__name names, and a
// read is routed to the server that listed the URI.
type lists struct {
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
}

func (l lists) empty() bool {
	return len(l.prompts) == 0 && len(l.resources) == 0 && len(l.templates) == 0
}

func listExtras(ctx context.Context, sess *mcp.ClientSession) (lists, error) {
	var l lists
	caps := sess.InitializeResult().Capabilities
	if caps == nil {
		return l, nil
	}
	if caps.Prompts != nil {
		for p, err := range sess.Prompts(ctx, nil) {
			if err != nil {
				return l, err
			}
			l.prompts = append(l.prompts, p)
		}
	}
	if caps.Resources != nil {
		for r, err := range sess.Resources(ctx, nil) {
			if err != nil {
				return l, err
			}
			l.resources = append(l.resources, r)
		}
		for t, err := range sess.ResourceTemplates(ctx, nil) {
			if err != nil {
				return l, err
			}
			l.templates = append(l.templates, t)
		}
	}
	return l, nil
}

// serverLists are the lists of every running server, by server id.
func (s *Supervisor) serverLists() map[string]lists {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]lists, len(s.servers))
	for id, d := range s.servers {
		d.mu.Lock()
		out[id] = d.extras
		d.mu.Unlock()
	}
	return out
}

// GetPrompt forwards prompts/get to server.
func (s *Supervisor) GetPrompt(ctx context.Context, server string, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	d := s.get(server)
	if d == nil || d.session() == nil {
		return nil, unavailable(server)
	}
	return d.session().GetPrompt(ctx, p)
}

// ReadResource forwards resources/read to server.
func (s *Supervisor) ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error) {
	d := s.get(server)
	if d == nil || d.session() == nil {
		return nil, unavailable(server)
	}
	return d.session().ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
}

func unavailable(server string) error {
	return core.Errorf(core.EUnavailable, "server %q is not running", server)
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// routeLog passes a downstream log message to every session that sees the
// server, naming the server in the logger. Each session's own level
// (logging/setLevel) filters it.
func (s *Supervisor) routeLog(server string, p *mcp.LoggingMessageParams) {
	for _, fn := range s.logListeners {
		fn(server, p)
	}
}

// OnLog registers fn to receive downstream log messages. Register before Apply.
func (s *Supervisor) OnLog(fn func(server string, p *mcp.LoggingMessageParams)) {
	s.logListeners = append(s.logListeners, fn)
}

// forwardLog sends a downstream server's log message to the sessions that
// see that server.
func (g *Gateway) forwardLog(server string, p *mcp.LoggingMessageParams) {
	msg := *p
	msg.Logger = server
	if p.Logger != "" {
		msg.Logger = server + "/" + p.Logger
	}
	g.mu.Lock()
	views := make([]*view, 0, len(g.views))
	for _, v := range g.views {
		views = append(views, v)
	}
	g.mu.Unlock()
	for _, v := range views {
		v.mu.Lock()
		sees := v.servers[server]
		v.mu.Unlock()
		if !sees {
			continue
		}
		for ss := range v.server.Sessions() {
			// A stalled client must not hold up the others.
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			ss.Log(ctx, &msg)
			cancel()
		}
	}
}

// syncExtras makes v's prompts and resources those of the servers it can see.
func (g *Gateway) syncExtras(v *view, visibleServers map[string]bool) {
	all := g.sup.serverLists()
	want := map[string]string{} // key → JSON, to detect changes
	type add struct {
		kind   string
		server string
		orig   string // the prompt's downstream name
		p      *mcp.Prompt
		r      *mcp.Resource
		t      *mcp.ResourceTemplate
	}
	adds := map[string]add{}
	for _, server := range slices.Sorted(maps.Keys(all)) {
		if !visibleServers[server] {
			continue
		}
		l := all[server]
		for _, p := range l.prompts {
			cp := *p
			cp.Name = ExposedName(server, p.Name)
			k := "p:" + cp.Name
			want[k] = jsonOf(&cp)
			adds[k] = add{kind: "p", server: server, orig: p.Name, p: &cp}
		}
		for _, r := range l.resources {
			k := "r:" + r.URI
			if _, dup := adds[k]; dup {
				continue // the first server (by id) that lists a URI serves it
			}
			cr := *r
			cr.Name = ExposedName(server, r.Name)
			want[k] = jsonOf(&cr)
			adds[k] = add{kind: "r", server: server, r: &cr}
		}
		for _, t := range l.templates {
			k := "t:" + t.URITemplate
			if _, dup := adds[k]; dup {
				continue
			}
			ct := *t
			ct.Name = ExposedName(server, t.Name)
			want[k] = jsonOf(&ct)
			adds[k] = add{kind: "t", server: server, t: &ct}
		}
	}
	var rmPrompts, rmResources, rmTemplates []string
	for k := range v.extras {
		if _, ok := want[k]; ok {
			continue
		}
		kind, name, _ := strings.Cut(k, ":")
		switch kind {
		case "p":
			rmPrompts = append(rmPrompts, name)
		case "r":
			rmResources = append(rmResources, name)
		case "t":
			rmTemplates = append(rmTemplates, name)
		}
		delete(v.extras, k)
	}
	if len(rmPrompts) > 0 {
		v.server.RemovePrompts(rmPrompts...)
	}
	if len(rmResources) > 0 {
		v.server.RemoveResources(rmResources...)
	}
	if len(rmTemplates) > 0 {
		v.server.RemoveResourceTemplates(rmTemplates...)
	}
	for k, a := range adds {
		if v.extras[k] == want[k] {
			continue
		}
		server := a.server
		switch a.kind {
		case "p":
			orig := a.orig
			if err := guard(func() {
				v.server.AddPrompt(a.p, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
					p := *req.Params
					p.Name = orig
					return g.sup.GetPrompt(ctx, server, &p)
				})
			}); err != nil {
				g.log.Warn("skip downstream prompt", "prompt", a.p.Name, "err", err)
				continue
			}
		case "r":
			if err := guard(func() {
				v.server.AddResource(a.r, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return g.sup.ReadResource(ctx, server, req.Params.URI)
				})
			}); err != nil {
				g.log.Warn("skip downstream resource", "uri", a.r.URI, "err", err)
				continue
			}
		case "t":
			if err := guard(func() {
				v.server.AddResourceTemplate(a.t, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return g.sup.ReadResource(ctx, server, req.Params.URI)
				})
			}); err != nil {
				g.log.Warn("skip downstream resource template", "template", a.t.URITemplate, "err", err)
				continue
			}
		}
		v.extras[k] = want[k]
	}
}

// guard runs add, turning a panic into an error: the SDK panics on a bad
// name, URI or template, and one downstream server's bad definition must not
// take the gateway down.
func guard(add func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	add()
	return nil
}
