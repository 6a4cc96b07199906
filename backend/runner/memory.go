package runner

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
)

// MemoryBoard is a task board kept in memory: Tasks and Executions for the
// runner's tests, and the stand-in the wiring uses until the task board
// (package teams) is wired in. Execution logs are real files in its log
// folder; everything else is forgotten when the process ends.
type MemoryBoard struct {
	mu       sync.Mutex
	logDir   string
	now      func() time.Time
	tasks    map[string]Task
	execs    []Execution // oldest first
	onChange func(taskID string)
}

var (
	_ Tasks      = (*MemoryBoard)(nil)
	_ Executions = (*MemoryBoard)(nil)
)

// NewMemoryBoard returns an empty board writing logs into logDir.
func NewMemoryBoard(logDir string) *MemoryBoard {
	return &MemoryBoard{logDir: logDir, now: time.Now, tasks: map[string]Task{}}
}

// OnChange calls fn after a task is put or changes status (auto-run
// listens).
func (b *MemoryBoard) OnChange(fn func(taskID string)) {
	b.mu.Lock()
	b.onChange = fn
	b.mu.Unlock()
}

// PutTask adds or replaces a task; StatusChangedAt is set when it is zero.
func (b *MemoryBoard) PutTask(t Task) {
	b.mu.Lock()
	if t.StatusChangedAt.IsZero() {
		t.StatusChangedAt = b.now().UTC()
	}
	b.tasks[t.ID] = t
	fn := b.onChange
	b.mu.Unlock()
	if fn != nil {
		fn(t.ID)
	}
}

// SetStatus moves a task to status.
func (b *MemoryBoard) SetStatus(taskID, status string) error {
	b.mu.Lock()
	t, ok := b.tasks[taskID]
	if !ok {
		b.mu.Unlock()
		return core.Errorf(core.ENotFound, "Task not found: %s", taskID)
	}
	t.Status, t.StatusChangedAt = status, b.now().UTC()
	b.tasks[taskID] = t
	fn := b.onChange
	b.mu.Unlock()
	if fn != nil {
		fn(taskID)
	}
	return nil
}

// Task returns task id.
func (b *MemoryBoard) Task(id string) (Task, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.tasks[id]
	if !ok {
		return Task{}, core.Errorf(core.ENotFound, "Task not found: %s", id)
	}
	return t, nil
}

// InProgress returns the tasks in progress.
func (b *MemoryBoard) InProgress() ([]Task, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Task
	for _, t := range b.tasks {
		if t.Status == TaskInProgress {
			out = append(out, t)
		}
	}
	return out, nil
}

// StartExecution records a running execution and creates its log file.
func (b *MemoryBoard) StartExecution(taskID, agentID string) (Execution, error) {
	t, err := b.Task(taskID)
	if err != nil {
		return Execution{}, err
	}
	id := make([]byte, 8)
	rand.Read(id)
	e := Execution{ID: "exec_" + hex.EncodeToString(id), TaskID: taskID, AgentID: agentID, ProjectID: t.ProjectID,
		Status: StatusRunning, StartedAt: b.now().UTC()}
	if err := os.MkdirAll(b.logDir, 0o700); err != nil {
		return Execution{}, fmt.Errorf("create log directory: %w", err)
	}
	e.LogPath = filepath.Join(b.logDir, e.ID+".log")
	f, err := os.OpenFile(e.LogPath, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return Execution{}, fmt.Errorf("create execution log: %w", err)
	}
	f.Close()
	b.mu.Lock()
	b.execs = append(b.execs, e)
	b.mu.Unlock()
	return e, nil
}

// FinishExecution records how an execution ended.
func (b *MemoryBoard) FinishExecution(id, status string, exitCode *int) error {
	if status == StatusRunning || !slices.Contains([]string{StatusCompleted, StatusFailed, StatusStopped}, status) {
		return core.Errorf(core.EInvalid, "an execution ends completed, failed or stopped, not %q", status)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range b.execs {
		if b.execs[i].ID != id {
			continue
		}
		if b.execs[i].Status != StatusRunning {
			return core.Errorf(core.EConflict, "execution %s has ended already (%s)", id, b.execs[i].Status)
		}
		now := b.now().UTC()
		b.execs[i].Status, b.execs[i].CompletedAt, b.execs[i].ExitCode = status, &now, exitCode
		return nil
	}
	return core.Errorf(core.ENotFound, "Execution log not found: %s", id)
}

// Execution returns execution id.
func (b *MemoryBoard) Execution(id string) (Execution, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.execs {
		if e.ID == id {
			return e, nil
		}
	}
	return Execution{}, core.Errorf(core.ENotFound, "Execution log not found: %s", id)
}

// TaskExecutions returns a task's executions, newest first.
func (b *MemoryBoard) TaskExecutions(taskID string) ([]Execution, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Execution
	for i := len(b.execs) - 1; i >= 0; i-- {
		if b.execs[i].TaskID == taskID {
			out = append(out, b.execs[i])
		}
	}
	return out, nil
}
