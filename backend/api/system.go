package api

import (
	"time"

	"github.com/airlock-dev/airlock/backend/tokenfile"

	"github.com/airlock-dev/airlock/backend/activity"
	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
)

// Info tells the UI where agents connect.
type Info struct {
	Version string `json:"version"`
	MCPURL  string `json:"mcpUrl"`
	SSEURL  string `json:"sseUrl"`
	// AgentToken is the shared agent token (the agent "default"'s), ""
	// when that agent was deleted: the token then works for nobody.
	AgentToken string `json:"agentToken"`
	DataDir    string `json:"dataDir"`
	ConfigPath string `json:"configPath"`
	// Binary is the path of the running airlock binary; Bridge is the
	// small stdio bridge beside it (airlock-bridge), when there is one: a
	// stdio-only client's snippet starts it.
	Binary string `json:"binary"`
	Bridge string `json:"bridge,omitempty"`
}

// System is what is not one screen's: where agents connect, the settings,
// the health of the audit log.
type System struct{ d Deps }

// Info returns where and how agents connect, with the agent token as it is
// now (`airlock token --rotate` may have replaced it).
func (s *System) Info() (Info, error) {
	info := s.d.Info
	if tok, err := tokenfile.AgentToken(info.DataDir, false); err == nil {
		info.AgentToken = tok
	}
	if s.d.Authz != nil {
		if _, err := s.d.Authz.Agent(authz.DefaultAgentID); core.ErrorCode(err) == core.ENotFound {
			info.AgentToken = ""
		}
	}
	return info, nil
}

// Settings are the user's preferences.
type Settings struct {
	ApprovalTimeoutSeconds int `json:"approvalTimeoutSeconds"`
}

// ApprovalTimeoutKey is where the approval timeout is stored.
const ApprovalTimeoutKey = "approval_timeout"

// Settings returns the settings.
func (s *System) Settings() (Settings, error) {
	return Settings{ApprovalTimeoutSeconds: int(s.d.Broker.Timeout() / time.Second)}, nil
}

// SetSettings stores and applies the settings.
func (s *System) SetSettings(settings Settings) error {
	if settings.ApprovalTimeoutSeconds < 5 || settings.ApprovalTimeoutSeconds > 24*3600 {
		return core.Errorf(core.EInvalid, "approval timeout must be between 5 seconds and 24 hours, got %d s", settings.ApprovalTimeoutSeconds)
	}
	d := time.Duration(settings.ApprovalTimeoutSeconds) * time.Second
	if err := s.d.Broker.SetTimeout(d); err != nil {
		return err
	}
	return s.d.DB.SetSetting(ApprovalTimeoutKey, d.String())
}

// AuditStatus says whether the audit log is failing: while it is, Airlock
// refuses every request it cannot record.
type AuditStatus struct {
	// LastFailure is the last write that failed, nil when none has.
	LastFailure *activity.Failure `json:"lastFailure"`
}

// AuditStatus returns the health of the audit log.
func (s *System) AuditStatus() (AuditStatus, error) {
	if s.d.Recorder == nil {
		return AuditStatus{}, nil
	}
	return AuditStatus{LastFailure: s.d.Recorder.LastFailure()}, nil
}
