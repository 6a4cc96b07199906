// Package runner launches and supervises agent CLIs for tasks (SPEC §9):
// for a task assigned to an AI agent it starts the agent's configured
// launcher (Claude Code, Codex CLI, Gemini CLI, the scripted agent or a
// custom command) already connected to Airlock with a token of that agent,
// captures its output into the run's log file, streams it to the UI in
// batches, and stops it (SIGTERM to its process group, then SIGKILL).
//
// A run is an execution record of the task board (ExecutionLog: running,
// completed, failed or stopped, with its log file); the runner creates and
// finishes those records through the Executions interface and keeps in its
// own Store only what the board does not hold: the launcher profile of each
// agent, and per run the launcher used, the process id and the reason of a
// failure. Everything it checks before launching (the template's
// placeholders, the working directory against the allowed roots, the
// agent's token, the command) is refused with a *core.Error before anything
// starts.
//
// Runs can also start on their own: with auto-run on, a task that is in
// progress and assigned to an AI agent gets a run, at most MaxConcurrent at
// a time; a failed automatic run is retried with a growing delay, at most
// MaxAttempts times per stay of the task in progress, and the reason is on
// the run.
//
// It imports core, authz (for the agent type), proc and fsutil; its storage,
// the task board and the token issuer are interfaces the wiring fills.
package runner
