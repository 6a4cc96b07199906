package api

import (
	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/runner"
	"github.com/airlock-dev/airlock/backend/teams"
)

// Runs is agent runs, on the Board's task detail and the Agents screen:
// each agent's launcher profile, the runs of a task (start, stop, live
// output through run:output and run:status, the log), and auto-run.
type Runs struct{ d Deps }

// Templates returns the launchers Airlock knows (Claude Code, Codex CLI,
// Gemini CLI, the scripted agent, a custom command).
func (r *Runs) Templates() ([]runner.Template, error) { return runner.Templates(), nil }

// Placeholders returns the {{names}} templates, arguments, environment
// values and prompts may use, with what each becomes.
func (r *Runs) Placeholders() (map[string]string, error) { return runner.Placeholders, nil }

// Profile returns an agent's launcher profile (no_run_profile when it has
// none).
func (r *Runs) Profile(agentID string) (runner.Profile, error) { return r.d.Runner.Profile(agentID) }

// Profiles returns every agent's launcher profile.
func (r *Runs) Profiles() ([]runner.Profile, error) { return nonNil(r.d.Runner.Profiles()) }

// SetProfile checks and stores an agent's launcher profile: an unknown
// placeholder, a working directory outside the allowed folders or a bad
// command is refused.
func (r *Runs) SetProfile(agentID string, p runner.Profile) (runner.Profile, error) {
	return r.d.Runner.SetProfile(agentID, p)
}

// CheckCommand says whether the program a profile launches is found now
// (a warning when it is not; the profile may be saved all the same).
func (r *Runs) CheckCommand(p runner.Profile) (runner.CommandCheck, error) {
	return r.d.Runner.CheckCommand(p)
}

// DeleteProfile removes an agent's launcher profile.
func (r *Runs) DeleteProfile(agentID string) error { return r.d.Runner.DeleteProfile(agentID) }

// Settings returns the auto-run settings.
func (r *Runs) Settings() (runner.Settings, error) { return r.d.Runner.Settings(), nil }

// SetSettings changes the auto-run settings; they apply at once.
func (r *Runs) SetSettings(s runner.Settings) (runner.Settings, error) {
	return r.d.Runner.SetSettings(s)
}

// Start runs the agent a task is assigned to, for that task. What is
// wrong (profile, folder, token, command) is refused before anything
// starts; a process that cannot start is a failed run and a run_failed
// error.
//
// A task still in the backlog is moved to to-do first, as the owner:
// asking for a run says the work is to be done now, and the agent's
// get_next_action offers to-do tasks (it starts the task itself).
func (r *Runs) Start(taskID string) (runner.Run, error) {
	if r.d.Teams != nil {
		t, err := r.d.Teams.Task(taskID)
		if err != nil {
			return runner.Run{}, err
		}
		if t.Status == teams.StatusBacklog {
			// Refused starts leave the task where it was (found by a
			// new-user test: it moved to to-do anyway).
			if err := r.d.Runner.Check(taskID); err != nil {
				return runner.Run{}, err
			}
			if _, err := r.d.Teams.SetStatus(authz.OwnerID, "", t.ID, teams.StatusTodo, ""); err != nil {
				return runner.Run{}, err
			}
		}
	}
	return r.d.Runner.Start(taskID)
}

// Stop stops a run (SIGTERM to its process group, then SIGKILL) and
// returns it ended.
func (r *Runs) Stop(runID string) (runner.Run, error) { return r.d.Runner.Stop(runID) }

// List returns the runs of a task, newest first.
func (r *Runs) List(taskID string) ([]runner.Run, error) { return nonNil(r.d.Runner.List(taskID)) }

// Get returns one run.
func (r *Runs) Get(runID string) (runner.Run, error) { return r.d.Runner.Get(runID) }

// Live returns the runs alive now.
func (r *Runs) Live() ([]runner.Run, error) { return r.d.Runner.Live(), nil }

// Auto returns the tasks in progress auto-run holds back now, and why: it
// waits for a free place or for the agent, retries later, or gave up. The
// run:auto event brings changes.
func (r *Runs) Auto() (runner.AutoStates, error) { return r.d.Runner.AutoStates(), nil }

// Log reads a run's log: the last lines (tail, default 100) or the lines
// from an offset.
func (r *Runs) Log(runID string, q runner.LogQuery) (runner.LogChunk, error) {
	return r.d.Runner.Log(runID, q)
}
