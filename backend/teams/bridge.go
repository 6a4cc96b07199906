package teams

import (
	"fmt"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
)

// The chat → task bridge of seed 001: from a chat session, an agent starts
// or changes a task on the request of an agent above it. The requester is
// named by the caller (requester_id) and checked in the seed's order:
//
//  1. the requester exists                      agent_not_found
//  2. the requester is in the project           agent_not_assigned_to_project
//  3. the requester is a strict ancestor        unauthorized
//     of the caller (never itself, a sibling, another branch or a
//     descendant; the owner is above everyone and belongs to every project)
//  4. the requester is active (not suspended    unauthorized
//     or disabled)
//  5. the task exists in the project and the    task_not_found, unauthorized
//     caller may act on it (start: its assignee; update: its assignee or
//     creator)
//
// Every change is recorded as a ChatModification with the requester and
// the conversation; when the requester never wrote in any conversation of
// the caller's, the record carries a warning (seed 001: a requester_id may
// be false; it is not refused, it is flagged for review).

// Seed 001's refusals, in its words, with an English rendering.
const (
	// Seed 001 names both agents by their (readable) ids; here both are
	// named by name, whichever way the requester was given.
	msgNotAncestor = "この操作には上位者からの依頼が必要です。依頼者 '%s' は '%s' の上位者ではありません。" +
		" (This operation needs a request from an agent above you: requester '%s' is not above '%s'.)"
	msgStartOwnOnly = "自分に割り当てられたタスクのみ開始できます。タスク担当者: %s" +
		" (You can start only tasks assigned to you. Assignee: %s)"
	msgNoUpdateRight = "このタスクの修正権限がありません" +
		" (You may not change this task: you are neither its assignee nor its creator.)"
)

// BridgeResult is the outcome of start_task_from_chat or
// update_task_from_chat.
type BridgeResult struct {
	Task           Task     `json:"task"`
	PreviousStatus string   `json:"previousStatus"`
	RequesterID    string   `json:"requesterId"`
	UpdatedFields  []string `json:"updatedFields"`
	// Modification is the audit record of the change.
	Modification ChatModification `json:"modification"`
}

// StartTaskFromChat starts task taskID (in_progress) for callerID, on the
// request of requesterRef, from a chat session in sessionProject. convID,
// when given, is the conversation the request was made in (the caller
// must be a member); otherwise the latest conversation of the two is
// recorded.
func (s *Service) StartTaskFromChat(callerID, sessionProject, taskID, requesterRef, convID string) (BridgeResult, error) {
	return s.bridge(OperationStart, callerID, sessionProject, taskID, requesterRef, convID, TaskUpdate{})
}

// UpdateTaskFromChat changes task taskID (title, description, priority,
// status, blocked_reason) for callerID on the request of requesterRef.
func (s *Service) UpdateTaskFromChat(callerID, sessionProject, taskID, requesterRef, convID string, up TaskUpdate) (BridgeResult, error) {
	if up.DependsOn != nil {
		return BridgeResult{}, core.Errorf(core.EInvalid, "dependencies are not changed from chat")
	}
	if up.empty() {
		return BridgeResult{}, core.Errorf(core.EInvalid, "nothing to change: give at least one of title, description, status, priority, blocked_reason")
	}
	return s.bridge(OperationUpdate, callerID, sessionProject, taskID, requesterRef, convID, up)
}

func (s *Service) bridge(op, callerID, sessionProject, taskID, requesterRef, convID string, up TaskUpdate) (BridgeResult, error) {
	if requesterRef == "" {
		return BridgeResult{}, core.Errorf(core.EInvalid, "requester_id is required: name the agent above you who asked for this")
	}
	if taskID == "" {
		return BridgeResult{}, core.Errorf(core.EInvalid, "task_id is required")
	}
	r, err := s.roster()
	if err != nil {
		return BridgeResult{}, err
	}
	caller, ok := r.byID[callerID]
	if !ok {
		return BridgeResult{}, errAgentNotFound(callerID)
	}
	projectID, err := s.project(r, callerID, sessionProject)
	if core.ErrorCode(err) == ECodeProjectRequired {
		// No project to check the requester against: the task says
		// which one it is about.
		t, terr := s.Task(taskID)
		if terr != nil {
			return BridgeResult{}, terr
		}
		if !inProject(caller, t.ProjectID) {
			// A task of a project the caller is not in (any more) does
			// not exist for it: the same answer as update_task_status,
			// which tells nothing of the task (found by a security test:
			// an agent taken off a project still changed its tasks).
			return BridgeResult{}, errTaskNotFound(taskID)
		}
		projectID, err = t.ProjectID, nil
	}
	if err != nil {
		return BridgeResult{}, err
	}
	// 1. The requester exists.
	requester, err := r.find(requesterRef)
	if err != nil {
		return BridgeResult{}, err
	}
	// 2. The requester is in the project.
	if !inProject(requester, projectID) {
		return BridgeResult{}, errNotAssigned(requester, projectID)
	}
	// 3. The requester is above the caller.
	if !r.isStrictAncestor(requester.ID, callerID) {
		return BridgeResult{}, core.Errorf(ECodeUnauthorized, msgNotAncestor, requester.Name, caller.Name, requester.Name, caller.Name)
	}
	// 4. The requester may act now: a suspended or disabled agent is cut
	// off from everything, and its name authorizes nothing either (found
	// by a seed audit: a worker named its suspended manager and the task
	// changed at that manager's request).
	if requester.Kind != authz.KindOwner && requester.Status != authz.StatusActive {
		return BridgeResult{}, core.Errorf(ECodeUnauthorized, "Requester '%s' is %s: its requests are not carried out", requester.Name, requester.Status).
			WithHint(fmt.Sprintf("ask an active agent above '%s'; the person can make '%s' active again on the Agents screen", caller.Name, requester.Name))
	}
	// Whether the requester ever wrote to the caller: read before the
	// transaction (the database has one connection).
	wrote, err := s.st.HasMessageFrom(requester.ID, callerID, projectID)
	if err != nil {
		return BridgeResult{}, err
	}
	var out BridgeResult
	err = s.atomic(func(tx Store, fx *effects) error {
		// 4. The task, and the caller's right to act on it.
		t, err := getTask(tx, taskID, projectID)
		if err != nil {
			return err
		}
		switch op {
		case OperationStart:
			if t.AssigneeID != callerID {
				assignee := "unassigned"
				if t.AssigneeID != "" {
					assignee = r.name(t.AssigneeID)
				}
				return core.Errorf(ECodeUnauthorized, msgStartOwnOnly, assignee, assignee)
			}
		case OperationUpdate:
			if t.AssigneeID != callerID && t.CreatedByAgentID != callerID {
				return core.Errorf(ECodeUnauthorized, msgNoUpdateRight)
			}
		}
		conv, err := s.requestConversation(tx, r, convID, callerID, requester.ID, projectID)
		if err != nil {
			return err
		}
		out.PreviousStatus = t.Status
		var fields []string
		switch op {
		case OperationStart:
			if _, err := s.applyStatus(tx, fx, r, &t, StatusInProgress, "", callerID, conv); err != nil {
				return err
			}
			if conv != "" {
				t.StartedFromConversationID = conv
				if err := tx.UpdateTask(t); err != nil {
					return err
				}
			}
			fields = []string{"status"}
		case OperationUpdate:
			if fields, err = s.applyEdit(tx, fx, r, &t, up, callerID, conv); err != nil {
				return err
			}
		}
		now := s.now().UTC()
		m := ChatModification{ID: newID("tcm_"), TaskID: t.ID, ConversationID: conv, RequesterID: requester.ID, ExecutorID: callerID,
			Operation: op, Fields: fields, CreatedAt: now}
		if !wrote {
			m.Warning = true
			m.WarningReason = fmt.Sprintf("requester '%s' has no chat history with '%s' in this project", requester.Name, caller.Name)
			s.log.Warn("chat → task with a requester who never wrote to the caller", "requester", requester.ID, "executor", callerID, "task", t.ID)
		}
		if err := tx.AddChatModification(m); err != nil {
			return err
		}
		if op == OperationStart && requester.ID != callerID {
			if err := fx.notify(tx, Notification{TargetAgentID: requester.ID, TargetProjectID: projectID, Type: NotifyStatusChange,
				Action: ActionTaskChanged, TaskID: t.ID, ConversationID: conv, SourceAgentID: callerID,
				Message:     fmt.Sprintf("%s started task %s (%s) at your request", caller.Name, t.ID, t.Title),
				Instruction: "The task you asked for in chat is in progress; its creator hears when it is done or blocked."}); err != nil {
				return err
			}
		}
		out = BridgeResult{Task: t, PreviousStatus: out.PreviousStatus, RequesterID: requester.ID, UpdatedFields: fields, Modification: m}
		return nil
	})
	return out, err
}

// requestConversation is the conversation a chat request is recorded
// with: the one the caller named (it must be a member, in the project), or
// the most recently active one the caller and the requester share, or
// none.
func (s *Service) requestConversation(tx Store, r roster, convID, callerID, requesterID, projectID string) (string, error) {
	if convID != "" {
		c, err := memberConversation(tx, convID, callerID)
		if err != nil {
			return "", err
		}
		if c.ProjectID != projectID {
			return "", errConversationNotFound(convID)
		}
		// The requester asked there only if it is in it: request_task
		// refuses the same (found by a red team: a worker recorded its
		// manager's request in a chat between two workers, without a
		// warning).
		if !c.Member(requesterID) {
			return "", core.Errorf(ECodeUnauthorized, "'%s' is not a participant of conversation %s, so it cannot have asked for the task there", r.name(requesterID), c.ID).
				WithHint("name the conversation where they asked you, or leave conversation_id out")
		}
		return c.ID, nil
	}
	convs, err := tx.ListConversations(ConversationFilter{ProjectID: projectID, MemberID: callerID})
	if err != nil {
		return "", err
	}
	for _, c := range convs {
		if c.Member(requesterID) {
			return c.ID, nil
		}
	}
	return "", nil
}
