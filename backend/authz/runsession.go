package authz

import (
	"time"

	"github.com/airlock-dev/airlock/backend/core"
)

// OpenRunSession opens an agent session for a run that Airlock itself
// starts (the agent runner): no passkey is asked, since Airlock launches
// the agent; the session's purpose and project are fixed, and it expires
// after ttl (the service's SessionTTL when ttl is zero). The runner hands
// the session token to the agent's process and ends the session with
// Logout when the run ends, so each run has its own revocable credential of
// the agent and the agent's connection token is left alone. The agent must
// be active and, when projectRef is given, assigned to that project.
func (s *Service) OpenRunSession(agentRef, projectRef, purpose string, ttl time.Duration) (Session, error) {
	if purpose != core.PurposeTask && purpose != core.PurposeChat {
		return Session{}, core.Errorf(core.EInvalid, "Invalid purpose: %s. Valid values: task, chat", purpose)
	}
	if ttl <= 0 {
		ttl = s.opts.SessionTTL
	}
	a, err := s.findAgent(agentRef)
	if err != nil {
		return Session{}, err
	}
	return s.openSessionAs(runSessionIDPrefix, a, projectRef, purpose, s.now(), ttl)
}

// EndRunSessions ends every run session still open. Airlock calls it as it
// starts, before any run does: a run session open then belongs to a run of
// a process that was killed (or crashed) before it could end it, and whoever
// holds a copy of the run's config (a process the run detached, a file it
// wrote) would go on acting as the agent until the session expired (found by
// a new-user test: up to 24 hours after a kill -9). It returns how many
// ended.
func (s *Service) EndRunSessions() (int, error) {
	ended, err := s.store.RevokeSessionsWithPrefix(runSessionIDPrefix, s.now())
	if err != nil {
		return 0, err
	}
	s.markRevoked(ended)
	return len(ended), nil
}
