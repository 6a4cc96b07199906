package airlock

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/airlock-dev/airlock/backend/api"
	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/events"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/runner"
	"github.com/airlock-dev/airlock/backend/store"
	"github.com/airlock-dev/airlock/backend/teams"
)

// runSessionTTL bounds the credential a run gets: a run longer than this
// loses its connection to Airlock.
const runSessionTTL = 24 * time.Hour

// startRunner builds the agent runner (SPEC §9). Runs work for the task
// board of package teams (o.RunBoard replaces it in tests). Board changes
// wake auto-run; the audit's activity says which tool an agent with a live
// run called last.
func (in *Instance) startRunner(ctx context.Context, o Options) error {
	board := o.RunBoard
	if board == nil {
		board = teamBoard{in.teams}
	}
	// No run is alive yet: a run session still open is one a killed
	// Airlock could not end (runner.New ends those runs' processes).
	if n, err := in.authz.EndRunSessions(); err != nil {
		return fmt.Errorf("end the sessions of runs Airlock was killed during: %w", err)
	} else if n > 0 {
		o.Logger.Info("ended the sessions of runs Airlock stopped during", "sessions", n)
	}
	r, err := runner.New(runner.Options{
		Store:      store.NewRuns(in.db),
		Executions: board,
		Tasks:      board,
		Agents:     in.authz,
		Tokens:     runTokens{in.authz},
		Roots:      in.runRoots,
		Protected:  []string{in.Info.DataDir},
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
	// Runs of an agent that was suspended, disabled or deleted end.
	in.authz.OnChange(func([]string) { r.Revalidate() })
	if b, ok := board.(interface{ OnChange(func(string)) }); ok {
		b.OnChange(func(string) { r.Kick() })
	}
	in.background(func() {
		follow(ctx, in.Hub, "board", func(events.Event) {
			r.StopCancelled()
			r.Kick()
		})
	})
	in.background(func() { noteRunToolCalls(ctx, in.Hub, r) })
	return nil
}

// noteRunToolCalls tells the runner which tool an agent with a live run
// called last. It follows the audit's activity only while a run is live:
// a subscription to activity makes every proxied call queue its records for
// the subscriber, which agents calling through Airlock without any run
// should not pay for. It subscribes once the run's start event arrives, so a
// call made within microseconds of the start can go unnoted; the run's next
// call is.
func noteRunToolCalls(ctx context.Context, hub *events.Hub, r *runner.Runner) {
	runs := hub.Subscribe([]string{"run"})
	defer runs.Close()
	var act *events.Sub
	var actC <-chan events.Event
	defer func() {
		if act != nil {
			act.Close()
		}
	}()
	follow := func() {
		switch live := r.LiveCount() > 0; {
		case live && act == nil:
			act = hub.Subscribe([]string{"activity"})
			actC = act.C()
		case !live && act != nil:
			act.Close()
			act, actC = nil, nil
		}
	}
	follow()
	for {
		select {
		case <-ctx.Done():
			return
		case <-runs.C():
			runs.Lagged()
			follow()
		case ev := <-actC:
			recs, _ := ev.Payload.([]core.AuditRecord)
			for _, rec := range recs {
				if rec.AgentID != "" && rec.Kind == core.KindToolCall {
					r.NoteToolCall(rec.AgentID, rec.AuthSession, rec.Session, runner.ToolCall{Server: rec.Server, Tool: rec.Tool, Status: rec.Status, At: rec.Time})
				}
			}
		}
	}
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
	return api.RPCHandler([]api.Area{{Name: "Runs", Value: in.API.Runs}, {Name: "Servers", Value: cliServers{in.API.Servers}},
		{Name: "Approvals", Value: cliApprovals{in.API.Approvals}}})
}

// runTokens gives each run an agent session of its own (purpose task, the
// task's project), ended when the run ends: the agent's identity, never
// the owner's, and the agent's connection token stays as it is.
type runTokens struct{ svc *authz.Service }

func (t runTokens) HasToken(agentID string) (bool, error) {
	toks, err := t.svc.Tokens(agentID)
	return len(toks) > 0, err
}

func (t runTokens) RunToken(agentID, projectID string) (runner.RunCredential, error) {
	s, err := t.svc.OpenRunSession(agentID, projectID, core.PurposeTask, runSessionTTL)
	if err != nil {
		return runner.RunCredential{}, err
	}
	return runner.RunCredential{Token: s.Token, Session: s.Record.ID, Release: func() { t.svc.Logout(s.Record.ID, "") }}, nil
}

// TokenAlive reports whether a run's credential still identifies its
// agent: false once its session ended (a new passkey, a logout) or
// expired; true when that cannot be told (a store error stops no run).
func (t runTokens) TokenAlive(tok string) bool {
	_, err := t.svc.IdentifyToken(tok)
	return core.ErrorCode(err) != core.EUnauthorized
}

var _ runner.TokenChecker = runTokens{}

// teamBoard is the task board of package teams as the runner needs it:
// runs are teams' execution records, their logs what get_execution_log
// reads.
type teamBoard struct{ svc *teams.Service }

var _ runner.Board = teamBoard{}

func (b teamBoard) Task(id string) (runner.Task, error) {
	t, err := b.svc.Task(id)
	if err != nil {
		return runner.Task{}, err
	}
	rt := runTask(t)
	blockers, err := b.svc.OpenBlockers(id)
	if err != nil {
		return runner.Task{}, err
	}
	for _, d := range blockers {
		rt.WaitsOn = append(rt.WaitsOn, fmt.Sprintf("%s (%s, %s)", d.ID, d.Title, d.Status))
	}
	return rt, nil
}

func (b teamBoard) InProgress() ([]runner.Task, error) {
	ts, _, err := b.svc.Tasks(teams.TaskFilter{Statuses: []string{runner.TaskInProgress}})
	if err != nil {
		return nil, err
	}
	out := make([]runner.Task, len(ts))
	for i, t := range ts {
		out[i] = runTask(t)
	}
	return out, nil
}

func runTask(t teams.Task) runner.Task {
	rt := runner.Task{ID: t.ID, ProjectID: t.ProjectID, Title: t.Title, Description: t.Description, Status: t.Status, AssigneeID: t.AssigneeID, BlockedReason: t.BlockedReason}
	if t.StatusChangedAt != nil {
		rt.StatusChangedAt = *t.StatusChangedAt
	}
	return rt
}

func (b teamBoard) StartExecution(taskID, agentID string) (runner.Execution, error) {
	e, err := b.svc.StartExecution(taskID, agentID)
	return runExecution(e), err
}

func (b teamBoard) FinishExecution(id, status string, exitCode *int) error {
	_, err := b.svc.FinishExecution(id, status, exitCode)
	return err
}

func (b teamBoard) Execution(id string) (runner.Execution, error) {
	e, err := b.svc.Execution(id)
	return runExecution(e), err
}

func (b teamBoard) TaskExecutions(taskID string) ([]runner.Execution, error) {
	es, _, err := b.svc.Executions(teams.ExecutionFilter{TaskID: taskID})
	if err != nil {
		return nil, err
	}
	out := make([]runner.Execution, len(es))
	for i, e := range es {
		out[i] = runExecution(e)
	}
	return out, nil
}

func runExecution(e teams.Execution) runner.Execution {
	return runner.Execution{ID: e.ID, TaskID: e.TaskID, AgentID: e.AgentID, ProjectID: e.ProjectID, Status: e.Status,
		StartedAt: e.StartedAt, CompletedAt: e.CompletedAt, ExitCode: e.ExitCode, LogPath: e.LogFilePath}
}

// serverRestarter is the one Servers method the CLI asks the running
// Airlock for (airlock servers restart): the instance token stays a
// narrow one.
// cliApprovals is what `airlock approvals` may do in the running Airlock:
// list the calls waiting for a person, approve or decline one (found by a
// new-user test: on a headless serve, only a browser could decide them).
// Whoever can read the instance endpoint's token can edit the rules file
// beside it too: this gives no more than that.
type cliApprovals struct{ a *api.Approvals }

// Pending returns the calls waiting for a person, oldest first.
func (c cliApprovals) Pending() ([]hitl.Approval, error) { return c.a.Pending() }

// Approve lets a waiting call through, once.
func (c cliApprovals) Approve(id string) error { return c.a.Approve(id) }

// Decline refuses a waiting call; reason goes back to the agent.
func (c cliApprovals) Decline(id, reason string) error { return c.a.Decline(id, reason) }

type cliServers struct{ s *api.Servers }

// Restart stops a server and starts it again now.
func (c cliServers) Restart(id string) error { return c.s.Restart(id) }

// List is every server with its live status and the changes that wait for
// the user (changed tools, new tools, changed instructions): what `airlock
// servers changes` shows.
func (c cliServers) List() ([]api.ServerView, error) { return c.s.List() }

// AcceptToolChange accepts the definition shown (see api.Servers).
func (c cliServers) AcceptToolChange(server, tool, shown string) error {
	return c.s.AcceptToolChange(server, tool, shown)
}

// AcceptInstructionsChange accepts the instructions shown (see api.Servers).
func (c cliServers) AcceptInstructionsChange(server, shown string) error {
	return c.s.AcceptInstructionsChange(server, shown)
}
