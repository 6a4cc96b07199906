package catalog

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// lists are a source's prompts and resources as it lists them.
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
				// A server that has resources and no templates may not
				// know the method: it has none (found by a regression
				// test: such a server was restarted until it was failed).
				var wire *jsonrpc.Error
				if errors.As(err, &wire) && wire.Code == jsonrpc.CodeMethodNotFound {
					break
				}
				return l, err
			}
			l.templates = append(l.templates, t)
		}
	}
	return l, nil
}

// Snapshot is what every source offers at one moment, under the names
// agents see. It is immutable: a change builds a new one.
type Snapshot struct {
	// Version increases with every rebuild.
	Version uint64
	// Tools are the tools as agents see them, sorted by exposed name.
	Tools     []core.ToolInfo
	Prompts   []Prompt
	Resources []Resource
	Templates []Template

	tools     map[string]int    // exposed name → index in Tools
	byOrigin  map[[2]string]int // server, name → index in Tools
	prompts   map[string]int
	resources map[string]int // URI → index in Resources
	warnings  map[string][]string
	// instructions are what agents get of each running server's
	// instructions, by server id (Catalog.Instructions).
	instructions map[string]string
}

// Prompt is a prompt under the name agents see.
type Prompt struct {
	Server string
	Name   string      // the prompt's name at its server
	Def    *mcp.Prompt // as agents see it (Name is the exposed name)
}

// Resource is a resource as agents see it: its URI is the server's own,
// its name is exposed like a tool's.
type Resource struct {
	Server string
	Def    *mcp.Resource
}

// Template is a resource template as agents see it.
type Template struct {
	Server string
	Def    *mcp.ResourceTemplate
	tmpl   *uritemplate.Template
	loose  *regexp.Regexp // looseTemplate
}

// Tool returns the tool agents know as exposed.
func (s *Snapshot) Tool(exposed string) (core.ToolInfo, bool) {
	i, ok := s.tools[exposed]
	if !ok {
		return core.ToolInfo{}, false
	}
	return s.Tools[i], true
}

// ToolOf returns the tool named name at server, under the name agents see.
func (s *Snapshot) ToolOf(server, name string) (core.ToolInfo, bool) {
	i, ok := s.byOrigin[[2]string{server, name}]
	if !ok {
		return core.ToolInfo{}, false
	}
	return s.Tools[i], true
}

// Prompt returns the prompt agents know as exposed.
func (s *Snapshot) Prompt(exposed string) (Prompt, bool) {
	i, ok := s.prompts[exposed]
	if !ok {
		return Prompt{}, false
	}
	return s.Prompts[i], true
}

// ResourceServer returns the server that serves uri: the one that lists it,
// else the first (in the servers' order) whose template matches it as RFC
// 6570 has it, else the first whose template matches it as servers match
// (looseTemplate).
func (s *Snapshot) ResourceServer(uri string) (string, bool) {
	if i, ok := s.resources[uri]; ok {
		return s.Resources[i].Server, true
	}
	for _, t := range s.Templates {
		if t.tmpl != nil && t.tmpl.Match(uri) != nil {
			return t.Server, true
		}
	}
	for _, t := range s.Templates {
		if t.loose != nil && t.loose.MatchString(uri) {
			return t.Server, true
		}
	}
	return "", false
}

// looseTemplate is the regular expression of a URI template (one
// uritemplate.New accepts) that matches URIs as the MCP SDKs' servers
// match them against their templates: a variable's value may hold any
// character but '/' ('é', ' ', ':', where RFC 6570 allows only unreserved
// characters and %-escapes), or any at all for {+var} and {#var}, and a
// query expression any query. The TypeScript SDK's matcher is narrower
// (no ',' in a value), Python's as wide. Found by an interop test: a URI
// a server served through its template, with a character RFC 6570 does
// not allow there, was refused as unknown.
func looseTemplate(tmpl string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteByte('^')
	for {
		open := strings.IndexByte(tmpl, '{')
		if open < 0 {
			b.WriteString(regexp.QuoteMeta(tmpl))
			break
		}
		end := strings.IndexByte(tmpl[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("unclosed expression in %q", tmpl)
		}
		b.WriteString(regexp.QuoteMeta(tmpl[:open]))
		expr := tmpl[open+1 : open+end]
		op := byte(0)
		if expr != "" && strings.IndexByte("+#./;?&", expr[0]) >= 0 {
			op = expr[0]
		}
		switch op {
		case '+', '#':
			b.WriteString(`.+`)
		case '.':
			b.WriteString(`\.[^/]+`)
		case '/':
			b.WriteString(`(?:/[^/]+)+`)
		case ';':
			b.WriteString(`;[^/]*`)
		case '?', '&':
			b.WriteString(`(?:[?&][^#]*)?`)
		default:
			b.WriteString(`[^/]+`)
		}
		tmpl = tmpl[open+end+1:]
	}
	b.WriteByte('$')
	return regexp.Compile(b.String())
}

// Snapshot returns the current snapshot.
func (c *Catalog) Snapshot() *Snapshot { return c.snap.Load() }

// rebuild makes a new snapshot from every running source. Sources are taken
// in order — Airlock's own first, then by id — and a name already taken is
// not given to a later source: the later one's tool is hidden and its
// status warns about it.
func (c *Catalog) rebuild() {
	c.snapMu.Lock()
	defer c.snapMu.Unlock()
	c.mu.RLock()
	srcs := make([]*source, 0, len(c.sources))
	for _, d := range c.sources {
		srcs = append(srcs, d)
	}
	// Whose id__… names are reserved: every server running or configured
	// (disabled too), and Airlock's own even while off (found by a
	// regression test: with server everything disabled, a --no-prefix
	// server's everything__echo answered for it).
	ids := map[string]bool{}
	for id := range c.configured {
		ids[id] = true
	}
	for _, id := range c.opts.Reserved {
		ids[id] = true
	}
	for _, d := range srcs {
		ids[d.cfg.ID] = true
	}
	c.mu.RUnlock()
	// Built-in servers first, then servers with prefixed names, then
	// --no-prefix ones, each in the order they were added: a name two
	// servers would expose stays with the one that had it first, and a
	// server's own server__tool names are always its own (found by a
	// new-user test: after a restart a --no-prefix server listing a tool
	// named everything__echo took that name from server everything).
	sort.Slice(srcs, func(i, j int) bool {
		if srcs[i].builtIn() != srcs[j].builtIn() {
			return srcs[i].builtIn()
		}
		if srcs[i].cfg.NoPrefix != srcs[j].cfg.NoPrefix {
			return !srcs[i].cfg.NoPrefix
		}
		if srcs[i].added != srcs[j].added {
			return srcs[i].added < srcs[j].added
		}
		return srcs[i].cfg.ID < srcs[j].cfg.ID
	})
	c.snapSeq++
	s := &Snapshot{Version: c.snapSeq, tools: map[string]int{}, prompts: map[string]int{}, resources: map[string]int{},
		warnings: map[string][]string{}, instructions: map[string]string{}}
	toolOwner := map[string]string{}
	promptOwner := map[string]string{}
	warn := func(server, format string, args ...any) {
		s.warnings[server] = append(s.warnings[server], fmt.Sprintf(format, args...))
	}
	// Collisions are summed up per server, kind and owner: one line says
	// "16 tools hidden…", not sixteen.
	// reserved: the name would pass for one of the owner's (reservedWarning).
	type collision struct {
		server, kind, owner string
		reserved            bool
	}
	var collisionOrder []collision
	collided := map[collision][]string{}
	note := func(k collision, name string) {
		if _, seen := collided[k]; !seen {
			collisionOrder = append(collisionOrder, k)
		}
		collided[k] = append(collided[k], name)
	}
	collide := func(server, kind, owner, name string) { note(collision{server, kind, owner, false}, name) }
	reserve := func(server, kind, owner, name string) { note(collision{server, kind, owner, true}, name) }
	// reserved names the server that a --no-prefix name of another server
	// would pass for: names of the form id__… are server id's.
	reserved := func(cfg core.ServerConfig, name string) string {
		if !cfg.NoPrefix {
			return ""
		}
		if prefix, _, ok := strings.Cut(name, "__"); ok && prefix != cfg.ID && ids[prefix] {
			return prefix
		}
		return ""
	}
	for _, d := range srcs {
		d.mu.Lock()
		tools, ls, cfg, sess := d.tools, d.lists, d.cfg, d.sess
		d.mu.Unlock()
		id := cfg.ID
		if c.opts.Expose != nil && !d.builtIn() && len(tools) > 0 {
			tools = c.opts.Expose(cfg, tools)
		}
		if sess != nil {
			text := instructionsOf(sess)
			if c.opts.ExposeInstructions != nil && !d.builtIn() {
				text = c.opts.ExposeInstructions(cfg, text)
			}
			if text != "" {
				s.instructions[id] = text
			}
		}
		for _, t := range tools {
			t.ExposedName = exposed(cfg, t.Name)
			if owner := reserved(cfg, t.ExposedName); owner != "" {
				reserve(id, "tool", owner, t.Name)
				continue
			}
			if owner, taken := toolOwner[t.ExposedName]; taken {
				collide(id, "tool", owner, t.Name)
				continue
			}
			toolOwner[t.ExposedName] = id
			s.Tools = append(s.Tools, t)
		}
		for _, p := range ls.prompts {
			cp := *p
			cp.Name = exposedName(cfg, p.Name)
			if owner := reserved(cfg, cp.Name); owner != "" {
				reserve(id, "prompt", owner, p.Name)
				continue
			}
			if owner, taken := promptOwner[cp.Name]; taken {
				collide(id, "prompt", owner, p.Name)
				continue
			}
			promptOwner[cp.Name] = id
			s.prompts[cp.Name] = len(s.Prompts)
			s.Prompts = append(s.Prompts, Prompt{Server: id, Name: p.Name, Def: &cp})
		}
		for _, r := range ls.resources {
			if i, dup := s.resources[r.URI]; dup {
				// The first server that lists a URI serves it; say so on the
				// other, whose resource agents cannot reach.
				collide(id, "resource", s.Resources[i].Server, r.URI)
				continue
			}
			cr := *r
			cr.Name = resourceName(cfg, r.Name)
			s.resources[r.URI] = len(s.Resources)
			s.Resources = append(s.Resources, Resource{Server: id, Def: &cr})
		}
		for _, t := range ls.templates {
			tmpl, err := uritemplate.New(t.URITemplate)
			if err != nil {
				warn(id, "resource template %q is skipped: %v", t.URITemplate, err)
				continue
			}
			if i := slices.IndexFunc(s.Templates, func(o Template) bool { return o.Def.URITemplate == t.URITemplate }); i >= 0 {
				// The first server that lists a template serves its URIs.
				collide(id, "resource template", s.Templates[i].Server, t.URITemplate)
				continue
			}
			ct := *t
			ct.Name = resourceName(cfg, t.Name)
			loose, _ := looseTemplate(t.URITemplate) // nil: only the strict match
			s.Templates = append(s.Templates, Template{Server: id, Def: &ct, tmpl: tmpl, loose: loose})
		}
	}
	for _, k := range collisionOrder {
		if k.reserved {
			warn(k.server, "%s", reservedWarning(k.kind, k.owner, collided[k]))
		} else {
			warn(k.server, "%s", collisionWarning(k.kind, k.owner, collided[k]))
		}
	}
	sort.Slice(s.Tools, func(i, j int) bool { return s.Tools[i].ExposedName < s.Tools[j].ExposedName })
	s.byOrigin = make(map[[2]string]int, len(s.Tools))
	for i, t := range s.Tools {
		s.tools[t.ExposedName] = i
		s.byOrigin[[2]string{t.ServerID, t.Name}] = i
	}
	c.snap.Store(s)
}

// collisionWarning says which names of a kind a server could not expose
// because owner exposes them already: all of them when few, else the
// first and a count.
func collisionWarning(kind, owner string, names []string) string {
	const shown = 5
	list := strings.Join(names[:min(len(names), shown)], ", ")
	if len(names) > shown {
		list += fmt.Sprintf(" and %d more", len(names)-shown)
	}
	if len(names) == 1 {
		return fmt.Sprintf("%s %q is hidden: server %s already exposes that name", kind, names[0], owner)
	}
	return fmt.Sprintf("%d %ss are hidden: server %s already exposes their names (%s)", len(names), kind, owner, list)
}

// reservedWarning says which names of a kind a --no-prefix server could
// not expose because they would pass for server owner's.
func reservedWarning(kind, owner string, names []string) string {
	const shown = 5
	if len(names) == 1 {
		return fmt.Sprintf("%s %q is hidden: names that start with %s__ are server %s's", kind, names[0], owner, owner)
	}
	list := strings.Join(names[:min(len(names), shown)], ", ")
	if len(names) > shown {
		list += fmt.Sprintf(" and %d more", len(names)-shown)
	}
	return fmt.Sprintf("%d %ss are hidden: names that start with %s__ are server %s's (%s)", len(names), kind, owner, owner, list)
}

// exposed is the name agents see for a source's tool, prompt or resource.
func exposed(cfg core.ServerConfig, name string) string {
	if cfg.NoPrefix && validName(name) {
		return name
	}
	return ExposedName(cfg.ID, name)
}

// exposedName is the name agents see for a source's prompt (see
// resourceName for resources). MCP restricts only tool names: a --no-prefix
// server's prompts keep theirs, whatever they are (code.review).
func exposedName(cfg core.ServerConfig, name string) string {
	if cfg.NoPrefix && name != "" && len(name) <= 1024 {
		return name
	}
	return ExposedName(cfg.ID, name)
}

// resourceName is the name agents see for a source's resource or resource
// template: the server's name for it under the server's prefix, as it is.
// A resource is found by its URI, never by its name, so the name needs no
// more than telling whose it is (found by an interop test: "architecture.md"
// became "everything__architecture_md_1c33c24f", as a tool's name would).
func resourceName(cfg core.ServerConfig, name string) string {
	if len(name) > maxResourceName {
		name = strings.ToValidUTF8(name[:maxResourceName], "")
	}
	if cfg.NoPrefix {
		return name
	}
	return cfg.ID + Separator + name
}

// maxResourceName is how much of a resource's name agents are shown.
const maxResourceName = 1024

// validName reports whether name can be shown to agents as it is.
func validName(name string) bool {
	if name == "" || len(name) > maxExposedName {
		return false
	}
	return sanitize(name) == name
}

func headerClient(headers map[string]string) *http.Client {
	if len(headers) == 0 {
		return nil
	}
	return &http.Client{Transport: headerTransport{headers: headers, base: http.DefaultTransport}}
}

type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, os.ExpandEnv(v))
	}
	return t.base.RoundTrip(r)
}

// instructionsOf is what sess's server said of using it at initialize
// (MCP's InitializeResult.instructions), without the whitespace around it.
func instructionsOf(sess *mcp.ClientSession) string {
	if in := sess.InitializeResult(); in != nil {
		return strings.TrimSpace(in.Instructions)
	}
	return ""
}
