package airlock

import (
	"context"

	"path/filepath"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/airlock-dev/airlock/backend/teams"

	"github.com/airlock-dev/airlock/backend/api"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/store"
)

type hitlParts struct {
	rules  *hitl.Rules
	broker *hitl.Broker
}

func (h hitlParts) apply(d *api.Deps) {
	d.Rules, d.Broker = h.rules, h.broker
}

// startHITL builds the rules and the approval broker (the pipeline's
// decide and approve stages) and completes the records of the requests
// that were running when Airlock last stopped.
func (in *Instance) startHITL(ctx context.Context, o Options, audit *store.AuditLog) (hitlParts, error) {
	rules, err := hitl.NewRules(store.NewRules(in.db), hitl.RulesOptions{
		Events:   in.Hub,
		FilePath: filepath.Join(o.DataDir, "rules.json"),
		Logger:   o.Logger,
		ResolveAgent: func(ref string) (string, error) {
			a, err := in.authz.Agent(ref)
			return a.ID, err
		},
		KnownServers: func() []string {
			var ids []string
			for _, c := range in.cfg.List() {
				ids = append(ids, c.ID)
			}
			for _, st := range in.cat.Status() {
				if st.BuiltIn {
					ids = append(ids, st.ID)
				}
			}
			return ids
		},
	})
	if err != nil {
		return hitlParts{}, err
	}
	in.background(func() { rules.Watch(ctx) })
	approvals := store.NewApprovals(in.db)
	broker := hitl.NewBroker(rules, approvals, hitl.BrokerOptions{Events: in.Hub, Logger: o.Logger,
		Timeout: o.ApprovalTimeout, ProgressInterval: o.ApprovalProgressInterval, CurrentTask: in.currentTask})
	if err := recoverInterrupted(broker, approvals, audit); err != nil {
		return hitlParts{}, err
	}
	if v, ok, err := in.db.Setting(api.ApprovalTimeoutKey); err == nil && ok && o.ApprovalTimeout == 0 {
		if d, err := time.ParseDuration(v); err == nil {
			broker.SetTimeout(d)
		}
	}
	return hitlParts{rules: rules, broker: broker}, nil
}

// recoverInterrupted completes the records of the requests Airlock was
// handling when it stopped, so that a crash loses none an agent made: the
// approvals that were waiting are marked expired — every one of them, and
// its own audit record says so — and any other request still running is
// recorded as interrupted.
func recoverInterrupted(b *hitl.Broker, approvals *store.Approvals, audit *store.AuditLog) error {
	expired, err := b.RecoverExpired()
	if err != nil {
		return err
	}
	byAudit := map[int64]hitl.Approval{}
	var orphans []*core.AuditRecord // approvals from before records began with the request
	now := time.Now().UTC()
	expiredRecord := func(rec *core.AuditRecord, a hitl.Approval) {
		rec.Decision, rec.Status, rec.ErrorCode = core.DecisionExpired, core.StatusError, core.EExpired
		rec.Reason = "Airlock stopped while the call waited for approval (requested " + a.CreatedAt.Format(time.RFC3339) + ")"
		rec.Error = "approval " + a.ID + " expired"
		rec.RuleID, rec.RuleSetVersion = a.RuleID, a.RuleSetVersion
		rec.WaitMs = now.Sub(a.CreatedAt).Milliseconds()
	}
	for _, a := range expired {
		if a.AuditID != 0 {
			byAudit[a.AuditID] = a
			continue
		}
		rec := &core.AuditRecord{Time: now, Kind: a.Kind, Agent: a.Agent, AgentID: a.AgentID, Client: a.Client,
			ClientVersion: a.ClientVersion, Session: a.Session, Server: a.Server, Tool: a.Tool,
			Arguments: pipeline.RedactArguments(a.Arguments)}
		expiredRecord(rec, a)
		orphans = append(orphans, rec)
	}
	if err := audit.Append(orphans); err != nil {
		return err
	}
	running, err := audit.Unfinished()
	if err != nil {
		return err
	}
	ids := make([]int64, len(running))
	for i := range running {
		ids[i] = running[i].ID
	}
	approved, err := approvals.ApprovedFor(ids)
	if err != nil {
		return err
	}
	for i := range running {
		rec := &running[i]
		if a, ok := byAudit[rec.ID]; ok {
			expiredRecord(rec, a)
		} else if a, ok := approved[rec.ID]; ok {
			// Approved, then sent on: what it did is unknown, who let it
			// through is not.
			rec.Decision, rec.Approver = core.DecisionApproved, a.DecidedBy
			rec.RuleID, rec.RuleSetVersion = a.RuleID, a.RuleSetVersion
			if a.DecidedAt != nil {
				rec.WaitMs = a.DecidedAt.Sub(a.CreatedAt).Milliseconds()
			}
			rec.Status, rec.ErrorCode = core.StatusError, "interrupted"
			rec.Error = "approved by " + a.DecidedBy + " and sent on; Airlock stopped before it answered, so what it did is unknown and the agent got no answer"
		} else if rec.Decision == core.DecisionAllow {
			// Allowed by the rules and sent on (the journal stage records
			// the decision): the rule that let it through is known.
			rec.Status, rec.ErrorCode = core.StatusError, "interrupted"
			by := "the rules"
			if rec.RuleID != "" {
				by = "rule " + rec.RuleID
			}
			rec.Error = "allowed by " + by + "; Airlock stopped before it answered, so whether it reached its server, and what it did, is unknown, and the agent got no answer"
		} else {
			if rec.Decision == "" {
				rec.Decision = core.DecisionError
			}
			rec.Status, rec.ErrorCode = core.StatusError, "interrupted"
			rec.Error = "Airlock stopped while the request was being handled; the agent got no answer"
		}
		if err := audit.Finish(rec); err != nil {
			return err
		}
	}
	return nil
}

// currentTask is the task in progress of the calling agent (in its
// session's project, when it has one), for the approval dialog; nil when it
// has none or the board cannot say.
func (in *Instance) currentTask(c core.Caller) *hitl.TaskRef {
	if in.teams == nil {
		return nil
	}
	ts, _, err := in.teams.Tasks(teams.TaskFilter{AssigneeID: c.AgentID, ProjectID: c.ProjectID, Statuses: []string{teams.StatusInProgress}, Limit: 1})
	if err != nil || len(ts) == 0 {
		return nil
	}
	return &hitl.TaskRef{ID: ts[0].ID, ProjectID: ts[0].ProjectID, Title: ts[0].Title}
}
