package airlock

import (
	"context"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
	"path/filepath"
	"time"

	"github.com/airlock-dev/airlock/backend/api"
	"github.com/airlock-dev/airlock/backend/gateway"
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

// startHITL builds the rules and the approval broker and plugs them into the
// pipeline's decide and approve stages.
func (in *Instance) startHITL(ctx context.Context, o Options, pipe *gateway.Pipeline, audit gateway.AuditStore) (hitlParts, error) {
	rules, err := hitl.NewRules(store.NewRules(in.db), hitl.RulesOptions{
		Events:   in.Hub,
		FilePath: filepath.Join(o.DataDir, "rules.json"),
		Logger:   o.Logger,
	})
	if err != nil {
		return hitlParts{}, err
	}
	go rules.Watch(ctx)
	approvals := store.NewApprovals(in.db)
	broker := hitl.NewBroker(rules, approvals, hitl.BrokerOptions{Events: in.Hub, Logger: o.Logger,
		Timeout: o.ApprovalTimeout, ProgressInterval: o.ApprovalProgressInterval})
	if err := recoverExpired(broker, approvals, audit); err != nil {
		return hitlParts{}, err
	}
	if v, ok, err := in.db.Setting(api.ApprovalTimeoutKey); err == nil && ok && o.ApprovalTimeout == 0 {
		if d, err := time.ParseDuration(v); err == nil {
			broker.SetTimeout(d)
		}
	}
	pipe.Decider = decider{rules}
	pipe.Approver = approver{broker}
	return hitlParts{rules: rules, broker: broker}, nil
}

type decider struct{ rules *hitl.Rules }

func hitlCall(c *gateway.Call) hitl.Call {
	return hitl.Call{Agent: c.Caller.Agent, Session: c.Caller.Session, Server: c.Tool.ServerID, Tool: c.Tool.Name, Args: c.Args}
}

func (d decider) Decide(c *gateway.Call) gateway.Decision {
	r := d.rules.Decide(hitlCall(c))
	return gateway.Decision{AutoApprove: r.AutoApprove, RuleID: r.RuleID, RuleSetVersion: r.RuleSetVersion, Reason: r.Reason}
}

type approver struct{ broker *hitl.Broker }

func (a approver) Approve(ctx context.Context, c *gateway.Call, d gateway.Decision) (gateway.Outcome, error) {
	req := hitl.ApprovalRequest{
		Agent: c.Caller.Agent, Client: c.Caller.Client, Session: c.Caller.Session, Server: c.Tool.ServerID, Tool: c.Tool.Name,
		ExposedName: c.Tool.ExposedName, Arguments: c.Args, Annotations: c.Tool.Annotations,
		Decision: hitl.Decision{AutoApprove: d.AutoApprove, RuleID: d.RuleID, RuleSetVersion: d.RuleSetVersion, Reason: d.Reason},
		ForcedBy: d.ForcedBy,
	}
	if c.Progress != nil {
		// Keep clients that reset their timeout on progress waiting.
		req.Progress = func(elapsed, total time.Duration) {
			c.Progress(elapsed.Seconds(), total.Seconds(), "waiting for a person to approve "+c.Tool.ExposedName+" in Airlock")
		}
	}
	out, err := a.broker.Request(ctx, req)
	return gateway.Outcome{Approved: out.Approved, Decision: out.Decision, Reason: out.Reason, By: out.By, Waited: out.Waited, Code: out.Code}, err
}

// recoverExpired marks the approvals that were waiting when Airlock stopped
// as expired and records each in the audit log, so that a crash loses no call
// an agent made: the agent's connection broke, and Activity says why.
func recoverExpired(b *hitl.Broker, approvals *store.Approvals, audit gateway.AuditStore) error {
	recent, err := approvals.ListApprovals(1000)
	if err != nil {
		return err
	}
	var recs []*core.AuditRecord
	for _, a := range recent {
		if a.Status != hitl.StatusPending {
			continue
		}
		recs = append(recs, &core.AuditRecord{
			Time: time.Now().UTC(), Agent: a.Agent, Client: a.Client, Session: a.Session, Server: a.Server, Tool: a.Tool,
			Arguments: pipeline.RedactArguments(a.Arguments), Decision: core.DecisionExpired,
			Reason: "Airlock stopped while the call waited for approval (requested " + a.CreatedAt.Format(time.RFC3339) + ")",
			RuleID: a.RuleID, RuleSetVersion: a.RuleSetVersion, Status: core.StatusError, ErrorCode: core.EExpired,
			Error:  "approval " + a.ID + " expired",
			WaitMs: time.Since(a.CreatedAt).Milliseconds(),
		})
	}
	if _, err := b.RecoverExpired(); err != nil {
		return err
	}
	return audit.Append(recs)
}
