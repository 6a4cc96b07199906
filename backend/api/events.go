package api

import (
	"github.com/airlock-dev/airlock/backend/activity"
	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/config"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/events"
	"github.com/airlock-dev/airlock/backend/hitl"
	"github.com/airlock-dev/airlock/backend/runner"
	"github.com/airlock-dev/airlock/backend/teams"
)

// EventPayloads maps every event the UI receives to a value of its
// payload type, for the TypeScript generator.
func EventPayloads() map[string]any {
	return map[string]any{
		core.EventActivity:             []core.AuditRecord{},
		core.EventAuditFailed:          activity.Failure{},
		core.EventAuditRecovered:       activity.Recovery{},
		core.EventServerStatus:         core.ServerStatus{},
		core.EventServersChanged:       config.State{},
		core.EventApprovalRequested:    hitl.Approval{},
		core.EventApprovalResolved:     hitl.Approval{},
		core.EventRulesChanged:         hitl.RulesChanged{},
		core.EventAgentsChanged:        core.AgentsChanged{},
		core.EventBuiltinChanged:       builtin.Overview{},
		events.EventLagged:             events.Lagged{},
		teams.EventBoardChanged:        teams.BoardChanged{},
		teams.EventChatMessage:         teams.ChatMessageEvent{},
		teams.EventConversationChanged: teams.ConversationChanged{},
		teams.EventExecutionChanged:    teams.ExecutionChanged{},
		runner.EventRunStatus:          runner.Run{},
		runner.EventRunOutput:          runner.RunOutput{},
		runner.EventRunAuto:            runner.AutoStates{},
	}
}
