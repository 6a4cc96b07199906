package store

import (
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/pipeline"
)

var _ hitl.ApprovalStore = (*Approvals)(nil)

type approvalRow struct {
	ID             string `gorm:"primaryKey"`
	AuditID        int64
	Kind           string
	Agent          string
	AgentID        string
	Client         string
	ClientVersion  string
	Purpose        string
	Session        string
	Server         string
	Tool           string
	ExposedName    string
	Arguments      string
	Annotations    string
	Risk           string
	Warning        string
	ForcedBy       string
	RuleID         string
	Reason         string
	RuleSetVersion int64
	CreatedAt      time.Time `gorm:"autoCreateTime:false"`
	Deadline       time.Time
	Status         string
	DecidedBy      string
	DeclineReason  string
	DecidedAt      *time.Time
	// TaskID, TaskProjectID and TaskTitle name the caller's current task
	// (migration 0011); empty when it had none.
	TaskID        string
	TaskProjectID string
	TaskTitle     string
}

func (approvalRow) TableName() string { return "approvals" }

func toApprovalRow(a hitl.Approval) (approvalRow, error) {
	ann := ""
	if a.Annotations != nil {
		b, err := json.Marshal(a.Annotations)
		if err != nil {
			return approvalRow{}, fmt.Errorf("encode annotations: %w", err)
		}
		ann = string(b)
	}
	args := string(a.Arguments)
	if args == "" {
		args = "{}"
	}
	if a.Status != hitl.StatusPending {
		// Once decided, the arguments are kept as the audit keeps them,
		// secrets redacted (found by a red-team review: decided approvals
		// kept an agent's keys and passwords at rest for good). A waiting
		// one keeps them whole: the person decides on what will be sent.
		args = pipeline.RedactArguments(json.RawMessage(args))
	}
	var task hitl.TaskRef
	if a.Task != nil {
		task = *a.Task
	}
	return approvalRow{
		TaskID: task.ID, TaskProjectID: task.ProjectID, TaskTitle: task.Title,
		ID: a.ID, AuditID: a.AuditID, Kind: a.Kind, Agent: a.Agent, AgentID: a.AgentID, Client: a.Client,
		ClientVersion: a.ClientVersion, Purpose: a.Purpose, Session: a.Session, Server: a.Server, Tool: a.Tool, ExposedName: a.ExposedName,
		Arguments: args, Annotations: ann, Risk: a.Risk, Warning: a.Warning, ForcedBy: a.ForcedBy,
		RuleID: a.RuleID, Reason: a.Reason, RuleSetVersion: a.RuleSetVersion,
		CreatedAt: a.CreatedAt.UTC(), Deadline: a.Deadline.UTC(), Status: a.Status,
		DecidedBy: a.DecidedBy, DeclineReason: a.DeclineReason, DecidedAt: utcPtr(a.DecidedAt),
	}, nil
}

func (row approvalRow) approval() (hitl.Approval, error) {
	a := hitl.Approval{
		ID: row.ID, AuditID: row.AuditID, Kind: row.Kind, Agent: row.Agent, AgentID: row.AgentID, Client: row.Client,
		ClientVersion: row.ClientVersion, Purpose: row.Purpose, Session: row.Session, Server: row.Server, Tool: row.Tool,
		ExposedName: row.ExposedName, Arguments: json.RawMessage(row.Arguments), Risk: row.Risk,
		Warning: row.Warning, ForcedBy: row.ForcedBy, RuleID: row.RuleID, Reason: row.Reason,
		RuleSetVersion: row.RuleSetVersion, CreatedAt: row.CreatedAt.UTC(), Deadline: row.Deadline.UTC(),
		Status: row.Status, DecidedBy: row.DecidedBy, DeclineReason: row.DeclineReason, DecidedAt: utcPtr(row.DecidedAt),
	}
	if row.TaskID != "" {
		a.Task = &hitl.TaskRef{ID: row.TaskID, ProjectID: row.TaskProjectID, Title: row.TaskTitle}
	}
	if row.Annotations != "" {
		a.Annotations = &core.ToolAnnotations{}
		if err := json.Unmarshal([]byte(row.Annotations), a.Annotations); err != nil {
			return hitl.Approval{}, fmt.Errorf("decode annotations of approval %s: %w", row.ID, err)
		}
	}
	return a, nil
}

// Approvals is the repository of approval requests.
type Approvals struct{ db *DB }

// NewApprovals returns the approvals repository over db.
func NewApprovals(db *DB) *Approvals { return &Approvals{db: db} }

// SaveApproval inserts a or updates the stored approval with its ID.
func (s *Approvals) SaveApproval(a hitl.Approval) error {
	row, err := toApprovalRow(a)
	if err != nil {
		return err
	}
	if err := s.db.Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error; err != nil {
		return fmt.Errorf("save approval %s: %w", a.ID, err)
	}
	return nil
}

// LoadApproval returns approval id and whether it exists.
func (s *Approvals) LoadApproval(id string) (hitl.Approval, bool, error) {
	var row approvalRow
	err := s.db.Where("id = ?", id).Take(&row).Error
	if isNotFound(err) {
		return hitl.Approval{}, false, nil
	}
	if err != nil {
		return hitl.Approval{}, false, fmt.Errorf("load approval %s: %w", id, err)
	}
	a, err := row.approval()
	return a, err == nil, err
}

// ExpirePendingApprovals marks every pending approval expired as of at and
// returns them all (however many there are), so that each one's audit
// record can say so.
func (s *Approvals) ExpirePendingApprovals(at time.Time) ([]hitl.Approval, error) {
	at = at.UTC()
	var rows []approvalRow
	err := s.db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("status = ?", hitl.StatusPending).Order("created_at, id").Find(&rows).Error; err != nil {
			return err
		}
		for _, row := range rows {
			if err := tx.Model(&approvalRow{}).Where("id = ?", row.ID).Updates(map[string]any{"status": hitl.StatusExpired, "decided_at": at,
				"arguments": pipeline.RedactArguments(json.RawMessage(row.Arguments))}).Error; err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("expire pending approvals: %w", err)
	}
	out := make([]hitl.Approval, 0, len(rows))
	for _, row := range rows {
		a, err := row.approval()
		if err != nil {
			return nil, err
		}
		a.Status, a.DecidedAt = hitl.StatusExpired, &at
		out = append(out, a)
	}
	return out, nil
}

// ApprovedFor returns, by audit record id, the approvals of those records
// that a person (or a rule changed meanwhile) approved: after a crash, the
// record of a call approved and then interrupted says who approved it.
func (s *Approvals) ApprovedFor(auditIDs []int64) (map[int64]hitl.Approval, error) {
	out := map[int64]hitl.Approval{}
	if len(auditIDs) == 0 {
		return out, nil
	}
	var rows []approvalRow
	if err := s.db.Where("audit_id IN ? AND status = ?", auditIDs, hitl.StatusApproved).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("load approvals of audit records: %w", err)
	}
	for _, row := range rows {
		a, err := row.approval()
		if err != nil {
			return nil, err
		}
		out[a.AuditID] = a
	}
	return out, nil
}

// ListApprovals returns the newest approvals (at most limit, default 100),
// newest first, for the approvals history.
func (s *Approvals) ListApprovals(limit int) ([]hitl.Approval, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	var rows []approvalRow
	if err := s.db.Order("created_at DESC, id").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list approvals: %w", err)
	}
	out := make([]hitl.Approval, 0, len(rows))
	for _, row := range rows {
		a, err := row.approval()
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}
