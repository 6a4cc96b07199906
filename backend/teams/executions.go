package teams

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/fsutil"
)

// Log reading limits.
const (
	DefaultLogTail = 100
	// MaxLogLines bounds the lines one read returns.
	MaxLogLines = 1000
	// MaxLogLine bounds one line; longer lines are cut.
	MaxLogLine = 4096
	// DefaultHistoryLimit is get_my_execution_history's default.
	DefaultHistoryLimit = 10
)

// StartExecution records that agentID starts running task taskID and
// creates its log file (0600) in the log directory; the runner writes the
// run's output there.
func (s *Service) StartExecution(taskID, agentID string) (Execution, error) {
	if s.logDir == "" {
		return Execution{}, core.Errorf(core.EInternal, "no log directory is configured for execution logs")
	}
	t, err := s.Task(taskID)
	if err != nil {
		return Execution{}, err
	}
	r, err := s.roster()
	if err != nil {
		return Execution{}, err
	}
	a, ok := r.byID[agentID]
	if !ok {
		return Execution{}, errAgentNotFound(agentID)
	}
	if !inProject(a, t.ProjectID) {
		return Execution{}, errNotAssigned(a, t.ProjectID)
	}
	if err := os.MkdirAll(s.logDir, 0o700); err != nil {
		return Execution{}, fmt.Errorf("create log directory: %w", err)
	}
	e := Execution{ID: newID("exec_"), TaskID: t.ID, AgentID: agentID, ProjectID: t.ProjectID, Status: ExecRunning, StartedAt: s.now().UTC()}
	e.LogFilePath = filepath.Join(s.logDir, e.ID+".log")
	f, err := os.OpenFile(e.LogFilePath, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return Execution{}, fmt.Errorf("create execution log: %w", err)
	}
	f.Close()
	if err := s.st.CreateExecution(e); err != nil {
		os.Remove(e.LogFilePath)
		return Execution{}, err
	}
	s.events.Emit(EventExecutionChanged, ExecutionChanged{ProjectID: e.ProjectID, TaskID: e.TaskID, AgentID: e.AgentID, ExecutionID: e.ID, Status: e.Status})
	return e, nil
}

// FinishExecution records how execution id ended: completed, failed or
// stopped, with the process's exit code when there was one.
func (s *Service) FinishExecution(id, status string, exitCode *int) (Execution, error) {
	if status == ExecRunning || !slices.Contains(ExecStatuses, status) {
		return Execution{}, core.Errorf(core.EInvalid, "an execution ends completed, failed or stopped, not %q", status)
	}
	var e Execution
	err := s.st.Atomic(func(tx Store) error {
		var err error
		if e, err = tx.GetExecution(id); err != nil {
			return notFoundAs(err, core.Errorf(ECodeExecutionNotFound, "Execution log not found: %s", id))
		}
		if e.Status != ExecRunning {
			return core.Errorf(core.EConflict, "execution %s has ended already (%s)", id, e.Status)
		}
		e.Status, e.CompletedAt, e.ExitCode = status, ptrTime(s.now().UTC()), exitCode
		return tx.UpdateExecution(e)
	})
	if err != nil {
		return Execution{}, err
	}
	s.events.Emit(EventExecutionChanged, ExecutionChanged{ProjectID: e.ProjectID, TaskID: e.TaskID, AgentID: e.AgentID, ExecutionID: e.ID, Status: e.Status})
	return e, nil
}

// Executions returns the executions f selects, newest first, and how many
// there are without f's limit.
func (s *Service) Executions(f ExecutionFilter) ([]Execution, int, error) {
	return s.st.ListExecutions(f)
}

// Execution returns execution id.
func (s *Service) Execution(id string) (Execution, error) {
	e, err := s.st.GetExecution(id)
	return e, notFoundAs(err, core.Errorf(ECodeExecutionNotFound, "Execution log not found: %s", id))
}

// LogChunk is part of an execution's log.
type LogChunk struct {
	Lines      []string `json:"lines"`
	TotalLines int      `json:"totalLines"`
	// Offset is the index of the first line returned.
	Offset int `json:"offset"`
	// Truncated is set when the file has lines the chunk left out.
	Truncated bool `json:"truncated"`
}

// ReadLog reads execution id's log for viewerID: only the agent that ran
// it may (the owner, on the board, reads every log). tail (default 100)
// takes the last lines; offset, exclusive with tail, takes up to
// DefaultLogTail lines from that line on (the first line is 0).
func (s *Service) ReadLog(viewerID, id string, tail, offset *int) (Execution, LogChunk, error) {
	if tail != nil && offset != nil {
		return Execution{}, LogChunk{}, core.Errorf(core.EInvalid, "tail and offset are exclusive: give one of them")
	}
	if tail != nil && (*tail < 1 || *tail > MaxLogLines) {
		return Execution{}, LogChunk{}, core.Errorf(core.EInvalid, "tail must be between 1 and %d", MaxLogLines)
	}
	if offset != nil && *offset < 0 {
		return Execution{}, LogChunk{}, core.Errorf(core.EInvalid, "offset must not be negative")
	}
	if id == "" {
		return Execution{}, LogChunk{}, core.Errorf(core.EInvalid, "execution_id is required")
	}
	e, err := s.Execution(id)
	if err != nil {
		return Execution{}, LogChunk{}, err
	}
	if e.AgentID != viewerID && viewerID != authz.OwnerID {
		return Execution{}, LogChunk{}, core.Errorf(ECodeUnauthorized, "Execution %s is not yours: you may read only your own execution logs", id)
	}
	n := DefaultLogTail
	from := -1 // tail mode
	if tail != nil {
		n = *tail
	}
	if offset != nil {
		from, n = *offset, DefaultLogTail
	}
	chunk, err := readLines(e.LogFilePath, from, n)
	if err != nil {
		return e, LogChunk{}, err
	}
	return e, chunk, nil
}

// readLines reads the file at path in one pass: the n lines from line from
// on, or (from < 0) the last n lines, and the number of lines.
func readLines(path string, from, n int) (LogChunk, error) {
	ls, err := fsutil.ReadLines(path, from, n, MaxLogLine)
	if errors.Is(err, fs.ErrNotExist) {
		return LogChunk{}, core.Errorf(ECodeLogUnavailable, "The log file of this execution no longer exists")
	}
	if err != nil {
		return LogChunk{}, core.Errorf(ECodeLogUnavailable, "The log file of this execution cannot be read: %v", err)
	}
	return LogChunk{Lines: ls.Lines, TotalLines: ls.Total, Offset: ls.Offset, Truncated: ls.Truncated}, nil
}

// hasLog reports whether an execution's log file exists.
func hasLog(path string) bool {
	if path == "" {
		return false
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// LogDir is where a data directory keeps execution logs.
func LogDir(dataDir string) string { return filepath.Join(dataDir, "logs") }
