package api

import (
	"sort"

	"github.com/airlock-dev/airlock/backend/config"
	"github.com/airlock-dev/airlock/backend/core"
)

// Servers is the Servers screen: the tool sources, their status and tools.
type Servers struct{ d Deps }

// ServerView is a server with its live status. Config is empty for
// Airlock's own built-in servers.
type ServerView struct {
	Config core.ServerConfig `json:"config"`
	Status core.ServerStatus `json:"status"`
}

// List returns every server, configured and built-in, with its status:
// the built-in ones first, then by id.
func (s *Servers) List() ([]ServerView, error) {
	cfgs := s.d.Config.List()
	out := make([]ServerView, 0, len(cfgs))
	seen := map[string]bool{}
	for _, c := range cfgs {
		out = append(out, s.view(c))
		seen[c.ID] = true
	}
	for _, st := range s.d.Catalog.Status() {
		if st.BuiltIn && !seen[st.ID] {
			out = append(out, ServerView{Config: core.ServerConfig{ID: st.ID, Type: core.TransportInProcess}, Status: s.annotate(st)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Status.BuiltIn != out[j].Status.BuiltIn {
			return out[i].Status.BuiltIn
		}
		return out[i].Config.ID < out[j].Config.ID
	})
	return out, nil
}

func (s *Servers) annotate(st core.ServerStatus) core.ServerStatus {
	st = s.d.Pins.Annotate(st)
	if st.Tools == nil {
		st.Tools = []core.ToolInfo{}
	}
	if st.StderrTail == nil {
		st.StderrTail = []string{}
	}
	return st
}

func (s *Servers) view(c core.ServerConfig) ServerView {
	st, ok := s.d.Catalog.ServerStatus(c.ID)
	if !ok {
		st = core.ServerStatus{ID: c.ID, Transport: c.Transport(), State: core.StateStopped}
		if !c.Disabled {
			st.State = core.StateStarting
		}
	}
	return ServerView{Config: c, Status: s.annotate(st)}
}

// Add adds a server to the servers file; the gateway starts it.
func (s *Servers) Add(cfg core.ServerConfig) (ServerView, error) {
	if err := s.d.Config.Add(cfg); err != nil {
		return ServerView{}, err
	}
	return s.view(cfg), nil
}

// Update replaces a server's configuration; the gateway restarts it.
func (s *Servers) Update(cfg core.ServerConfig) (ServerView, error) {
	if err := s.d.Config.Update(cfg); err != nil {
		return ServerView{}, err
	}
	return s.view(cfg), nil
}

// Remove removes a server; the gateway stops it.
func (s *Servers) Remove(id string) error { return s.d.Config.Remove(id) }

// Restart restarts a server now, also one marked failed.
func (s *Servers) Restart(id string) error { return s.d.Catalog.Restart(id) }

// Import adds the servers of a Claude Desktop / Cursor config.
func (s *Servers) Import(text string) (config.ImportResult, error) {
	return s.d.Config.Import([]byte(text))
}

// Export returns the servers file in the mcpServers format.
func (s *Servers) Export() (string, error) {
	b, err := s.d.Config.Export()
	return string(b), err
}

// AcceptToolChange accepts a tool's new definition (or a new tool), the
// one shown (its changed.shown): agents see it from now on, and calls to
// it stop being forced to ask. If the server lists another one since,
// nothing is accepted (conflict).
func (s *Servers) AcceptToolChange(server, tool, shown string) error {
	if err := s.d.Pins.Accept(server, tool, shown); err != nil {
		return err
	}
	// Agents now see the accepted definition (list_changed), and the
	// Servers screen drops the flag.
	s.d.Catalog.Refresh(server)
	return nil
}

// AcceptInstructionsChange accepts what a server now tells its clients
// about using it (its instructions), given as the text the person was
// shown: agents that connect from now on get them. If the server gave
// other ones since, nothing is accepted (conflict).
func (s *Servers) AcceptInstructionsChange(server, shown string) error {
	if err := s.d.Pins.AcceptInstructions(server, shown); err != nil {
		return err
	}
	s.d.Catalog.Refresh(server)
	return nil
}

// ConfigState tells whether the servers file's last edit was valid.
func (s *Servers) ConfigState() (config.State, error) { return s.d.Config.State(), nil }
