package airlock

import (
	"context"
	"net/http"
	"path/filepath"
	"time"

	"github.com/airlock-dev/airlock/backend/api"
	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/events"
	"github.com/airlock-dev/airlock/backend/runner"
	"github.com/airlock-dev/airlock/backend/store"
)

// runSessionTTL bounds the credential a run gets: a run longer than this
// loses its connection to Airlock.
const runSessionTTL = 24 * time.Hour

// startRunner builds the agent runner (SPEC §9). Runs work for the task
// board o.RunBoard; until the task board is wired in, an in-memory board
// with no tasks stands in. Board changes wake auto-run; the audit's
// activity says which tool an agent with a live run called last.
func (in *Instance) startRunner(ctx context.Context, o Options) error {
	board := o.RunBoard
	if board == nil {
		board = runner.NewMemoryBoard(filepath.Join(o.DataDir, "logs"))
	}
	r, err := runner.New(runner.Options{
		Store:      store.NewRuns(in.db),
		Executions: board,
		Tasks:      board,
		Agents:     in.authz,
		Tokens:     runTokens{in.authz},
		Roots:      in.runRoots,
		MCPURL:     in.Info.MCPURL,
		Airlock:    in.Info.Binary,
		RunsDir:    filepath.Join(o.DataDir, "runs"),
		Events:     in.Hub,
		Logger:     o.Logger,
	})
	if err != nil {
		return err
	}
	in.runner = r
	in.closers = append(in.closers, r.Close)
	if b, ok := board.(interface{ OnChange(func(string)) }); ok {
		b.OnChange(func(string) { r.Kick() })
	}
	go follow(ctx, in.Hub, "board", func(events.Event) { r.Kick() })
	go follow(ctx, in.Hub, "activity", func(ev events.Event) {
		recs, _ := ev.Payload.([]core.AuditRecord)
		for _, rec := range recs {
			if rec.AgentID != "" && rec.Kind == core.KindToolCall {
				r.NoteToolCall(rec.AgentID, runner.ToolCall{Server: rec.Server, Tool: rec.Tool, Status: rec.Status, At: rec.Time})
			}
		}
	})
	return nil
}

// follow calls fn for each event of topic until ctx ends; a fall behind
// counts as an event (fn reads the state again anyway).
func follow(ctx context.Context, hub *events.Hub, topic string, fn func(events.Event)) {
	sub := hub.Subscribe([]string{topic})
	defer sub.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-sub.C():
			fn(ev)
			if len(sub.C()) == 0 && sub.Lagged() > 0 {
				fn(events.Event{Name: events.EventLagged})
			}
		}
	}
}

// runRoots are the folders agents may work in: the built-in tools'
// folders that exist.
func (in *Instance) runRoots() []string {
	var out []string
	for _, r := range in.builtin.Get().Roots {
		if r.Available {
			out = append(out, r.Path)
		}
	}
	return out
}

// cliRPC is what `airlock runs` calls in the running Airlock (runs live in
// its process): the Runs area of the facade, over the instance endpoint.
func (in *Instance) cliRPC() http.Handler {
	return api.RPCHandler([]api.Area{{Name: "Runs", Value: in.API.Runs}})
}

// runTokens gives each run an agent session of its own (purpose task, the
// task's project), ended when the run ends: the agent's identity, never
// the owner's, and the agent's connection token stays as it is.
type runTokens struct{ svc *authz.Service }

func (t runTokens) HasToken(agentID string) (bool, error) {
	toks, err := t.svc.Tokens(agentID)
	return len(toks) > 0, err
}

func (t runTokens) RunToken(agentID, projectID string) (string, func(), error) {
	s, err := t.svc.OpenRunSession(agentID, projectID, core.PurposeTask, runSessionTTL)
	if err != nil {
		return "", nil, err
	}
	return s.Token, func() { t.svc.Logout(s.Record.ID) }, nil
}
