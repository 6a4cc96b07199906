// Package api is the facade the UI calls, one area per screen: System,
// Servers, Rules, Approvals, Activity, Agents, Board, Chat. Each area's
// exported methods are bound to the Wails window in the desktop app and served over HTTP (POST
// /api/rpc/<Area>.<Method>, events over SSE) by `airlock serve`: one
// facade, two transports, no logic written twice. The TypeScript types and
// client the frontend uses are generated from these definitions (see
// tsgen; `go generate ./backend/api`).
//
// Every method returns (T, error) or error; errors the user sees are
// *core.Error values with a code.
package api

//go:generate go run ./tsgen/cmd -out ../../frontend/src/lib/api/generated.ts

import (
	"github.com/airlock-dev/airlock/backend/activity"
	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/catalog"
	"github.com/airlock-dev/airlock/backend/config"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/pins"
	"github.com/airlock-dev/airlock/backend/runner"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/teams"
)

// Deps are what the facade works on.
type Deps struct {
	Info     Info
	Config   *config.Store
	Catalog  *catalog.Catalog
	Audit    *store.AuditLog
	Recorder *activity.Recorder
	DB       *store.DB
	Rules    *hitl.Rules
	Broker   *hitl.Broker
	Pins     *pins.Pins
	Authz    *authz.Service
	Builtin  *builtin.Builtin
	Teams    *teams.Service
	Runner   *runner.Runner
	Events   core.EventSink
}

// Facade is the UI's whole view of the backend, one area per screen.
type Facade struct {
	System    *System
	Servers   *Servers
	Rules     *Rules
	Approvals *Approvals
	Activity  *Activity
	Agents    *Agents
	Builtin   *Builtin
	Board     *Board
	Chat      *Chat
	Runs      *Runs
}

// New returns the facade over d.
func New(d Deps) *Facade {
	return &Facade{
		System:    &System{d: d},
		Servers:   &Servers{d: d},
		Rules:     &Rules{d: d},
		Approvals: &Approvals{d: d},
		Activity:  &Activity{d: d},
		Agents:    &Agents{d: d},
		Builtin:   &Builtin{d: d},
		Board:     &Board{d: d},
		Chat:      &Chat{d: d},
		Runs:      &Runs{d: d},
	}
}

// Area is one part of the facade, reached as <Name>.<Method>.
type Area struct {
	Name  string
	Value any
}

// Areas lists the facade's areas, for the Wails bindings, the HTTP routes
// and the TypeScript generator.
func (f *Facade) Areas() []Area {
	return []Area{
		{"System", f.System},
		{"Servers", f.Servers},
		{"Rules", f.Rules},
		{"Approvals", f.Approvals},
		{"Activity", f.Activity},
		{"Agents", f.Agents},
		{"Builtin", f.Builtin},
		{"Board", f.Board},
		{"Chat", f.Chat},
		{"Runs", f.Runs},
	}
}
