// Package api is the facade the UI calls. Its exported methods are bound to
// the Wails window in the desktop app and served over HTTP (POST
// /api/rpc/<Method>, events over SSE) by `airlock serve`: one facade, two
// transports, no logic written twice.
//
// Every method returns (T, error) or error; errors the user sees are
// *core.Error values with a code.
package api

import (
	"sort"

	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/cli"
	"github.com/airlock-dev/airlock/backend/config"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/pins"
	"github.com/airlock-dev/airlock/backend/store"
)

// Info tells the UI where agents connect.
type Info struct {
	Version    string `json:"version"`
	MCPURL     string `json:"mcpUrl"`
	SSEURL     string `json:"sseUrl"`
	AgentToken string `json:"agentToken"`
	DataDir    string `json:"dataDir"`
	ConfigPath string `json:"configPath"`
}

// Deps are what the facade works on.
type Deps struct {
	Info    Info
	Config  *config.Store
	Catalog *catalog.Catalog
	Audit   *store.AuditLog
	DB      *store.DB
	Rules   *hitl.Rules
	Broker  *hitl.Broker
	Pins    *pins.Pins
	Events  core.EventSink
}

// API is the facade. Its exported methods are the UI's whole view of the
// backend.
type API struct {
	d Deps
}

// New returns the facade over d.
func New(d Deps) *API { return &API{d: d} }

// ServerView is a configured server with its live status.
type ServerView struct {
	Config core.ServerConfig `json:"config"`
	Status core.ServerStatus `json:"status"`
}

// GetInfo returns where and how agents connect, with the agent token as it
// is now (`airlock token --rotate` may have replaced it).
func (a *API) GetInfo() (Info, error) {
	info := a.d.Info
	if tok, err := cli.AgentToken(info.DataDir, false); err == nil {
		info.AgentToken = tok
	}
	return info, nil
}

// ListServers returns every configured server with its status, by id.
func (a *API) ListServers() ([]ServerView, error) {
	cfgs := a.d.Config.List()
	out := make([]ServerView, 0, len(cfgs))
	for _, c := range cfgs {
		out = append(out, a.view(c))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Config.ID < out[j].Config.ID })
	return out, nil
}

func (a *API) view(c core.ServerConfig) ServerView {
	st, ok := a.d.Catalog.ServerStatus(c.ID)
	if !ok {
		st = core.ServerStatus{ID: c.ID, Transport: c.Transport(), State: core.StateStopped}
		if !c.Disabled {
			st.State = core.StateStarting
		}
	}
	st = a.d.Pins.Annotate(st)
	if st.Tools == nil {
		st.Tools = []core.ToolInfo{}
	}
	if st.StderrTail == nil {
		st.StderrTail = []string{}
	}
	return ServerView{Config: c, Status: st}
}

// AddServer adds a server to the servers file; the gateway starts it.
func (a *API) AddServer(cfg core.ServerConfig) (ServerView, error) {
	if err := a.d.Config.Add(cfg); err != nil {
		return ServerView{}, err
	}
	return a.view(cfg), nil
}

// UpdateServer replaces a server's configuration; the gateway restarts it.
func (a *API) UpdateServer(cfg core.ServerConfig) (ServerView, error) {
	if err := a.d.Config.Update(cfg); err != nil {
		return ServerView{}, err
	}
	return a.view(cfg), nil
}

// RemoveServer removes a server; the gateway stops it.
func (a *API) RemoveServer(id string) error { return a.d.Config.Remove(id) }

// RestartServer restarts a server now, also one marked failed.
func (a *API) RestartServer(id string) error { return a.d.Catalog.Restart(id) }

// ImportServers adds the servers of a Claude Desktop / Cursor config.
func (a *API) ImportServers(text string) (config.ImportResult, error) {
	return a.d.Config.Import([]byte(text))
}

// ExportServers returns the servers file in the mcpServers format.
func (a *API) ExportServers() (string, error) {
	b, err := a.d.Config.Export()
	return string(b), err
}

// AcceptToolChange accepts a tool's new definition: calls to it stop being
// forced to ask.
func (a *API) AcceptToolChange(server, tool string) error {
	if err := a.d.Pins.Accept(server, tool); err != nil {
		return err
	}
	// Agents now see the accepted definition (list_changed), and the
	// Servers screen drops the flag.
	a.d.Catalog.Refresh(server)
	return nil
}

// GetConfigState tells whether the servers file's last edit was valid.
func (a *API) GetConfigState() (config.State, error) { return a.d.Config.State(), nil }

// ListActivity returns audit records matching f, newest first.
func (a *API) ListActivity(f core.ActivityFilter) ([]core.AuditRecord, error) {
	recs, err := a.d.Audit.List(f)
	if recs == nil {
		recs = []core.AuditRecord{}
	}
	return recs, err
}
