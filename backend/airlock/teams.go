package airlock

import (
	"context"
	"sync"

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
	in.background(func() { svc.Watch(ctx, teams.DefaultHintInterval) })
	in.teams = svc
	// Close waits for it (ctx ends first): a release still writing when
	// the database closes would write into a data directory being removed.
	in.background(func() { in.releaseTasksOutside(ctx, svc) })
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

// releaseTasksOutside keeps tasks with the agents of their project: when
// an agent is taken off a project (here, or by the CLI, which Reload
// reports as a change of every agent), the open tasks it held there become
// nobody's (teams.ReleaseTasksOutside). It sweeps every agent once at
// start, for changes made while no Airlock ran, then follows the changes
// until ctx ends.
func (in *Instance) releaseTasksOutside(ctx context.Context, svc *teams.Service) {
	var mu sync.Mutex
	pending := map[string]bool{}
	kick := make(chan struct{}, 1)
	in.authz.OnChange(func(ids []string) {
		mu.Lock()
		for _, id := range ids {
			pending[id] = true
		}
		mu.Unlock()
		select {
		case kick <- struct{}{}:
		default:
		}
	})
	release := func(ids ...string) {
		rel, err := svc.ReleaseTasksOutside(ids...)
		if err != nil {
			in.log.Error("unassign the tasks of agents taken off their projects", "err", err)
			return
		}
		for _, r := range rel {
			in.log.Info("task unassigned: its agent is no longer in the project", "task", r.Task.ID, "project", r.Task.ProjectID, "agent", r.Agent)
		}
	}
	release()
	for {
		select {
		case <-ctx.Done():
			return
		case <-kick:
		}
		mu.Lock()
		ids := make([]string, 0, len(pending))
		for id := range pending {
			ids = append(ids, id)
		}
		clear(pending)
		mu.Unlock()
		if len(ids) > 0 {
			release(ids...)
		}
	}
}
