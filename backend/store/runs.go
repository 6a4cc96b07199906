package store

import (
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm/clause"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/runner"
)

// SettingRunner is the settings key of the runner's settings (JSON).
const SettingRunner = "runner"

// Runs is the runner's repository: launcher profiles, run records and the
// runner's settings.
type Runs struct{ db *DB }

var _ runner.Store = (*Runs)(nil)

// NewRuns returns the runner's repository over db.
func NewRuns(db *DB) *Runs { return &Runs{db: db} }

type runProfileRow struct {
	AgentID   string `gorm:"primaryKey"`
	Template  string
	Command   string
	Args      string
	ExtraArgs string
	WorkDir   string
	Model     string
	Env       string
	Prompt    string
	UpdatedAt time.Time `gorm:"autoUpdateTime:false"`
}

func (runProfileRow) TableName() string { return "run_profiles" }

type agentRunRow struct {
	ID        string `gorm:"primaryKey"`
	TaskID    string
	AgentID   string
	Trigger   string
	Attempt   int
	Template  string
	Command   string
	WorkDir   string
	PID       int `gorm:"column:pid"`
	Reason    string
	Active    bool
	CreatedAt time.Time `gorm:"autoCreateTime:false"`
}

func (agentRunRow) TableName() string { return "agent_runs" }

func toProfileRow(p runner.Profile) (runProfileRow, error) {
	args, err := json.Marshal(nonNilStrings(p.Args))
	if err != nil {
		return runProfileRow{}, err
	}
	extra, err := json.Marshal(nonNilStrings(p.ExtraArgs))
	if err != nil {
		return runProfileRow{}, err
	}
	env := p.Env
	if env == nil {
		env = map[string]string{}
	}
	envJSON, err := json.Marshal(env)
	if err != nil {
		return runProfileRow{}, err
	}
	return runProfileRow{AgentID: p.AgentID, Template: p.Template, Command: p.Command, Args: string(args), ExtraArgs: string(extra),
		WorkDir: p.WorkDir, Model: p.Model, Env: string(envJSON), Prompt: p.Prompt, UpdatedAt: p.UpdatedAt.UTC()}, nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (r runProfileRow) profile() (runner.Profile, error) {
	p := runner.Profile{AgentID: r.AgentID, Template: r.Template, Command: r.Command, WorkDir: r.WorkDir, Model: r.Model,
		Prompt: r.Prompt, UpdatedAt: r.UpdatedAt.UTC()}
	if err := json.Unmarshal([]byte(r.Args), &p.Args); err != nil {
		return runner.Profile{}, fmt.Errorf("run profile of %s: arguments: %w", r.AgentID, err)
	}
	if err := json.Unmarshal([]byte(r.ExtraArgs), &p.ExtraArgs); err != nil {
		return runner.Profile{}, fmt.Errorf("run profile of %s: extra arguments: %w", r.AgentID, err)
	}
	if err := json.Unmarshal([]byte(r.Env), &p.Env); err != nil {
		return runner.Profile{}, fmt.Errorf("run profile of %s: environment: %w", r.AgentID, err)
	}
	p.Args, p.ExtraArgs = nonNilStrings(p.Args), nonNilStrings(p.ExtraArgs)
	if p.Env == nil {
		p.Env = map[string]string{}
	}
	return p, nil
}

// Profile returns agent agentID's launcher profile.
func (s *Runs) Profile(agentID string) (runner.Profile, error) {
	var row runProfileRow
	err := s.db.Where("agent_id = ?", agentID).Take(&row).Error
	if isNotFound(err) {
		return runner.Profile{}, core.Errorf(core.ENotFound, "agent %s has no run profile", agentID)
	}
	if err != nil {
		return runner.Profile{}, fmt.Errorf("read run profile of %s: %w", agentID, err)
	}
	return row.profile()
}

// Profiles returns every profile, by agent id.
func (s *Runs) Profiles() ([]runner.Profile, error) {
	var rows []runProfileRow
	if err := s.db.Order("agent_id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list run profiles: %w", err)
	}
	out := make([]runner.Profile, 0, len(rows))
	for _, r := range rows {
		p, err := r.profile()
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// SaveProfile inserts or replaces p.
func (s *Runs) SaveProfile(p runner.Profile) error {
	row, err := toProfileRow(p)
	if err != nil {
		return err
	}
	if err := s.db.Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error; err != nil {
		return translate(err, "run profile of agent "+p.AgentID)
	}
	return nil
}

// DeleteProfile deletes agent agentID's profile.
func (s *Runs) DeleteProfile(agentID string) error {
	res := s.db.Where("agent_id = ?", agentID).Delete(&runProfileRow{})
	if res.Error != nil {
		return fmt.Errorf("delete run profile of %s: %w", agentID, res.Error)
	}
	if res.RowsAffected == 0 {
		return core.Errorf(core.ENotFound, "agent %s has no run profile", agentID)
	}
	return nil
}

// RunSettings returns the stored runner settings.
func (s *Runs) RunSettings() (runner.Settings, bool, error) {
	v, ok, err := s.db.Setting(SettingRunner)
	if err != nil || !ok {
		return runner.Settings{}, false, err
	}
	st := runner.DefaultSettings() // a setting added later keeps its default
	if err := json.Unmarshal([]byte(v), &st); err != nil {
		return runner.Settings{}, false, fmt.Errorf("read runner settings: %w", err)
	}
	return st, true, nil
}

// SaveRunSettings stores the runner settings.
func (s *Runs) SaveRunSettings(st runner.Settings) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return s.db.SetSetting(SettingRunner, string(b))
}

func toRunRow(r runner.Record) agentRunRow {
	return agentRunRow{ID: r.ID, TaskID: r.TaskID, AgentID: r.AgentID, Trigger: r.Trigger, Attempt: r.Attempt, Template: r.Template,
		Command: r.Command, WorkDir: r.WorkDir, PID: r.PID, Reason: r.Reason, Active: r.Active, CreatedAt: r.CreatedAt.UTC()}
}

func (r agentRunRow) record() runner.Record {
	return runner.Record{ID: r.ID, TaskID: r.TaskID, AgentID: r.AgentID, Trigger: r.Trigger, Attempt: r.Attempt, Template: r.Template,
		Command: r.Command, WorkDir: r.WorkDir, PID: r.PID, Reason: r.Reason, Active: r.Active, CreatedAt: r.CreatedAt.UTC()}
}

// CreateRun inserts a run record.
func (s *Runs) CreateRun(r runner.Record) error {
	row := toRunRow(r)
	if err := s.db.Create(&row).Error; err != nil {
		return translate(err, "run "+r.ID)
	}
	return nil
}

// UpdateRun replaces run record r.ID.
func (s *Runs) UpdateRun(r runner.Record) error {
	row := toRunRow(r)
	res := s.db.Model(&agentRunRow{}).Where("id = ?", r.ID).Select("*").Updates(&row)
	if res.Error != nil {
		return fmt.Errorf("update run %s: %w", r.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		return core.Errorf(core.ENotFound, "Run not found: %s", r.ID)
	}
	return nil
}

// Run returns run record id.
func (s *Runs) Run(id string) (runner.Record, error) {
	var row agentRunRow
	err := s.db.Where("id = ?", id).Take(&row).Error
	if isNotFound(err) {
		return runner.Record{}, core.Errorf(core.ENotFound, "Run not found: %s", id)
	}
	if err != nil {
		return runner.Record{}, fmt.Errorf("read run %s: %w", id, err)
	}
	return row.record(), nil
}

// TaskRuns returns a task's run records, newest first.
func (s *Runs) TaskRuns(taskID string) ([]runner.Record, error) {
	var rows []agentRunRow
	if err := s.db.Where("task_id = ?", taskID).Order("created_at DESC, id DESC").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list runs of task %s: %w", taskID, err)
	}
	out := make([]runner.Record, len(rows))
	for i, r := range rows {
		out[i] = r.record()
	}
	return out, nil
}

// ActiveRuns returns the records of runs whose process may be alive.
func (s *Runs) ActiveRuns() ([]runner.Record, error) {
	var rows []agentRunRow
	if err := s.db.Where("active = ?", true).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list active runs: %w", err)
	}
	out := make([]runner.Record, len(rows))
	for i, r := range rows {
		out[i] = r.record()
	}
	return out, nil
}
