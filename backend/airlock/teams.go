package airlock

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/api"
	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/teams"
)

// teamParts is the agent team (SPEC §6): the service behind the task and
// chat tools, the Board and Chat screens and the CLI.
type teamParts struct{ svc *teams.Service }

// startTeams builds the team service over the database (events go to the
// hub, execution logs to the data directory's logs folder), keeps its
// notification hints current until ctx ends, and puts its tools on own,
// Airlock's in-process server, before that server is added to the
// catalogue.
func (in *Instance) startTeams(ctx context.Context, o Options, own *mcp.Server) (teamParts, error) {
	svc, err := teams.New(store.NewTeams(in.db), in.authz, teams.Options{Events: in.Hub, LogDir: teams.LogDir(o.DataDir), Logger: o.Logger})
	if err != nil {
		return teamParts{}, err
	}
	if err := teams.RegisterTools(own, svc, in.authz); err != nil {
		return teamParts{}, err
	}
	go svc.Watch(ctx, teams.DefaultHintInterval)
	in.teams = svc
	return teamParts{svc: svc}, nil
}

// responders are the pipeline's respond stages: notifications for task
// sessions.
func (t teamParts) responders() []pipeline.Responder {
	return []pipeline.Responder{t.svc.Responder()}
}

func (t teamParts) apply(d *api.Deps) { d.Teams = t.svc }

// reloadTeams picks up what the CLI changed in tasks and chat.
func (in *Instance) reloadTeams() {
	if in.teams == nil {
		return
	}
	if err := in.teams.Reload(); err != nil {
		in.log.Warn("reload teams", "err", err)
	}
}

// Teams is the running instance's team service: agent runs start and
// finish their executions through it.
func (in *Instance) Teams() *teams.Service { return in.teams }
