package runner

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
)

// Auto-run: runs the runner starts on its own, for tasks in progress.

// hold remembers automatic attempts that failed before the board could
// record them, so that they back off and count too.
type hold struct {
	episode time.Time
	count   int
	at      time.Time
}

// backoff is the delay before the next automatic attempt after failures
// failed ones: the setting, doubled for each further failure, at most an
// hour.
func backoff(s Settings, failures int) time.Duration {
	d := time.Duration(s.RetryBackoffSeconds) * time.Second
	for i := 1; i < failures && d < time.Hour; i++ {
		d *= 2
	}
	return min(d, time.Hour)
}

// Kick asks the auto-run loop for a pass (the board changed, a run ended,
// the settings changed). It never blocks.
func (r *Runner) Kick() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

func (r *Runner) loop() {
	defer r.wg.Done()
	for {
		select {
		case <-r.done:
			return
		case <-r.kick:
			r.Reconcile()
		}
	}
}

// Reconcile is one auto-run pass: with auto-run on, every task in progress
// assigned to an active AI agent with a profile gets a run, unless one of
// its runs in this stay in progress completed or was stopped, its failed
// attempts reached MaxAttempts, or it waits for its backoff; at most
// MaxConcurrent runs are alive. Passes never overlap. What it holds back,
// and why, is kept for the Board (AutoStates).
func (r *Runner) Reconcile() {
	r.reconcileMu.Lock()
	defer r.reconcileMu.Unlock()
	r.mu.Lock()
	s, closed := r.settings, r.closed
	r.mu.Unlock()
	if closed || !s.AutoRun {
		r.setAuto(nil)
		return
	}
	tasks, err := r.o.Tasks.InProgress()
	if err != nil {
		r.log.Warn("auto-run: read the tasks in progress", "err", err)
		return
	}
	sort.Slice(tasks, func(i, j int) bool {
		if !tasks[i].StatusChangedAt.Equal(tasks[j].StatusChangedAt) {
			return tasks[i].StatusChangedAt.Before(tasks[j].StatusChangedAt)
		}
		return tasks[i].ID < tasks[j].ID
	})
	now := r.o.Now()
	var next time.Time
	var held []AutoState
	hold := func(t Task, state string, failures int, at *time.Time) {
		held = append(held, AutoState{TaskID: t.ID, State: state, Failures: failures, MaxAttempts: s.MaxAttempts, MaxConcurrent: s.MaxConcurrent, At: at})
	}
	for _, t := range tasks {
		if t.AssigneeID == "" {
			continue
		}
		a, err := r.o.Agents.Agent(t.AssigneeID)
		if err != nil || runnable(a) != nil {
			continue
		}
		if _, err := r.o.Store.Profile(a.ID); err != nil {
			continue // no launcher: auto-run leaves the agent alone
		}
		failures, lastEnd, settled, err := r.attempts(t, a.ID)
		if err != nil {
			r.log.Warn("auto-run: read a task's runs", "task", t.ID, "err", err)
			continue
		}
		if settled {
			continue
		}
		if failures >= s.MaxAttempts {
			hold(t, AutoGaveUp, failures, nil)
			continue
		}
		if failures > 0 {
			if at := lastEnd.Add(backoff(s, failures)); now.Before(at) {
				if next.IsZero() || at.Before(next) {
					next = at
				}
				hold(t, AutoRetry, failures, &at)
				continue
			}
		}
		r.mu.Lock()
		alive := len(r.live)
		r.mu.Unlock()
		if alive >= s.MaxConcurrent {
			hold(t, AutoWaiting, failures, nil)
			continue
		}
		_, err = r.start(t.ID, TriggerAuto, failures+1)
		switch {
		case isCode(err, EAgentBusy):
			hold(t, AutoAgentBusy, failures, nil)
			continue
		case err == nil || isCode(err, core.EConflict, core.EUnavailable, ERunFailed):
			continue // started, running already, or failed with its record made
		}
		r.refused(t, a, failures+1, err)
	}
	if !next.IsZero() {
		r.wakeUpAt(next)
	}
	r.setAuto(held)
}

// AutoStates returns what auto-run holds back now, as its last pass left it.
func (r *Runner) AutoStates() AutoStates {
	r.mu.Lock()
	defer r.mu.Unlock()
	return AutoStates{Tasks: slices.Clone(r.auto)}
}

// setAuto keeps what a pass held back and tells the UI when it changed.
func (r *Runner) setAuto(held []AutoState) {
	if held == nil {
		held = []AutoState{}
	}
	r.mu.Lock()
	same := slices.EqualFunc(r.auto, held, func(a, b AutoState) bool {
		return a.TaskID == b.TaskID && a.State == b.State && a.Failures == b.Failures && a.MaxAttempts == b.MaxAttempts && a.MaxConcurrent == b.MaxConcurrent &&
			(a.At == nil) == (b.At == nil) && (a.At == nil || a.At.Equal(*b.At))
	})
	r.auto = held
	r.mu.Unlock()
	if !same {
		r.o.Events.Emit(EventRunAuto, AutoStates{Tasks: slices.Clone(held)})
	}
}

// attempts counts the failed runs of agentID on t in its stay in progress,
// and reports whether one completed, was stopped or is running (settled:
// auto-run starts no more). A run Airlock itself stopped as it stopped is
// neither: its work was cut off, not done or called off, so the next
// Airlock takes it up again (found by a new-user test: a clean stop ended
// auto-run work for good, where a crash did not).
func (r *Runner) attempts(t Task, agentID string) (failures int, lastEnd time.Time, settled bool, err error) {
	execs, err := r.o.Executions.TaskExecutions(t.ID)
	if err != nil {
		return 0, time.Time{}, false, err
	}
	for _, e := range execs {
		if e.AgentID != agentID || e.StartedAt.Before(t.StatusChangedAt) {
			continue
		}
		switch e.Status {
		case StatusFailed:
			failures++
			if e.CompletedAt != nil && e.CompletedAt.After(lastEnd) {
				lastEnd = *e.CompletedAt
			}
		case StatusStopped:
			if rec, err := r.o.Store.Run(e.ID); err == nil && rec.Reason == "stopped by "+shutdownStopper {
				continue
			}
			settled = true
		default:
			settled = true
		}
	}
	r.mu.Lock()
	h, ok := r.holds[t.ID]
	r.mu.Unlock()
	if ok && h.episode.Equal(t.StatusChangedAt) {
		failures += h.count
		if h.at.After(lastEnd) {
			lastEnd = h.at
		}
	}
	return failures, lastEnd, settled, nil
}

// refused records an automatic run refused before launch (no profile
// problem can fix itself, but the user may fix it): a failed execution
// record with the reason in its log, so the board shows why. When even
// that cannot be made, the attempt is remembered here to back off.
func (r *Runner) refused(t Task, a authz.Agent, attempt int, cause error) {
	reason := "auto-run could not start the run: " + errorText(cause)
	s := r.Settings()
	if attempt >= s.MaxAttempts {
		reason += fmt.Sprintf("; auto-run gave up after %d failed attempts", attempt)
	} else {
		reason += fmt.Sprintf("; auto-run tries again in %s (attempt %d of %d)", backoff(s, attempt), attempt+1, s.MaxAttempts)
	}
	exec, err := r.o.Executions.StartExecution(t.ID, a.ID)
	if err != nil {
		r.log.Warn("auto-run: a run was refused and cannot be recorded", "task", t.ID, "reason", reason, "err", err)
		r.mu.Lock()
		h := r.holds[t.ID]
		if !h.episode.Equal(t.StatusChangedAt) {
			h = hold{episode: t.StatusChangedAt}
		}
		h.count++
		h.at = r.o.Now()
		r.holds[t.ID] = h
		r.mu.Unlock()
		if attempt < s.MaxAttempts {
			r.wakeUpAt(r.o.Now().Add(backoff(s, attempt)))
		}
		return
	}
	if f, err := os.OpenFile(exec.LogPath, os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
		fmt.Fprintf(f, "[%s] [airlock] %s\n", r.o.Now().UTC().Format(time.RFC3339), reason)
		f.Close()
	}
	if err := r.o.Executions.FinishExecution(exec.ID, StatusFailed, nil); err != nil {
		r.log.Warn("auto-run: finish a refused run", "run", exec.ID, "err", err)
	}
	rec := Record{ID: exec.ID, TaskID: t.ID, AgentID: a.ID, Trigger: TriggerAuto, Attempt: attempt, Reason: reason, CreatedAt: r.o.Now().UTC()}
	if p, err := r.o.Store.Profile(a.ID); err == nil {
		rec.Template = p.Template
	}
	if err := r.o.Store.CreateRun(rec); err != nil {
		r.log.Warn("auto-run: record a refused run", "run", exec.ID, "err", err)
	}
	r.o.Events.Emit(EventRunStatus, r.get(rec))
	if attempt < s.MaxAttempts {
		r.wakeUpAt(r.o.Now().Add(backoff(s, attempt)))
	}
}

// errorText is an error as a user reads it: message and hint.
func errorText(err error) string {
	var e *core.Error
	if errors.As(err, &e) && e.Hint != "" {
		return e.Message + " (" + strings.TrimSuffix(e.Hint, ".") + ")"
	}
	return core.ErrorMessage(err)
}

// wakeUpAt makes the loop pass again at t; a pending wake-up that comes
// earlier stays.
func (r *Runner) wakeUpAt(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if pending := r.wake != nil && r.wakeAt.After(r.o.Now()); pending && !t.Before(r.wakeAt) {
		return
	}
	if r.wake != nil {
		r.wake.Stop()
	}
	r.wakeAt = t
	r.wake = time.AfterFunc(max(time.Until(t), 0), r.Kick)
}
