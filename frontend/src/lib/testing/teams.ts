// Tasks, boards, conversations and messages for the Board and Chat tests.
import type { BoardAgent, BoardView, ConversationSummary, Message, ProjectSummary, TaskCard, TaskDetailView } from '../api';

const T0 = '2026-01-01T10:00:00Z';
const TRANSITIONS: Record<string, string[]> = {
  backlog: ['todo', 'in_progress', 'blocked', 'cancelled'],
  todo: ['backlog', 'in_progress', 'blocked', 'cancelled'],
  in_progress: ['todo', 'blocked', 'done', 'cancelled'],
  blocked: ['backlog', 'todo', 'in_progress', 'cancelled'],
  done: ['todo'],
  cancelled: ['backlog', 'todo'],
};

export function card(id: string, title: string, status: string, more: Partial<TaskCard> = {}): TaskCard {
  return {
    id, projectId: 'prj_web', title, description: '', status, priority: 'medium', assigneeId: '', createdByAgentId: 'ag_owner', parentTaskId: '',
    dependsOn: [], blockedReason: '', statusChangedByAgentId: '', statusChangedAt: null, startedFromConversationId: '', requestedInConversationId: '',
    requestedByAgentId: '', result: '', summary: '', createdAt: T0, updatedAt: T0, completedAt: null,
    assigneeName: '', creatorName: 'owner', statusChangedByName: '', openBlockers: 0, ...more,
  };
}

export const boardAgents: BoardAgent[] = [
  { id: 'ag_owner', name: 'owner', kind: 'owner', parentId: '', status: 'active' },
  { id: 'ag_mgr', name: 'mgr', kind: 'manager', parentId: 'ag_owner', status: 'active' },
  { id: 'ag_bob', name: 'bob', kind: 'worker', parentId: 'ag_mgr', status: 'active' },
];

/** A board of project prj_web ("web") holding cards, each in the column of its status. */
export function board(cards: TaskCard[], agents: BoardAgent[] = boardAgents): BoardView {
  return {
    project: { id: 'prj_web', name: 'web', description: '', createdAt: T0, updatedAt: T0 },
    columns: ['backlog', 'todo', 'in_progress', 'blocked', 'done', 'cancelled'].map((status) => ({ status, tasks: cards.filter((c) => c.status === status) })),
    agents,
    transitions: TRANSITIONS,
  };
}

export function projectSummary(id = 'prj_web', name = 'web', counts: Record<string, number> = {}): ProjectSummary {
  return { id, name, description: '', createdAt: T0, updatedAt: T0, counts, agents: [] };
}

export function detail(c: TaskCard, more: Partial<TaskDetailView> = {}): TaskDetailView {
  const { assigneeName: _a, creatorName: _c, statusChangedByName: _s, openBlockers: _o, ...task } = c;
  return {
    task, card: c, blockers: [], dependents: [], subtasks: [], history: [], chatModifications: [], conversations: [], executions: [],
    agentNames: { ag_owner: 'owner', ag_mgr: 'mgr', ag_bob: 'bob' }, ...more,
  };
}

export function message(seq: number, conversationId: string, senderId: string, content: string): Message {
  const names: Record<string, string> = { ag_owner: 'owner', ag_mgr: 'mgr', ag_bob: 'bob' };
  return { seq, id: `msg_${seq}`, conversationId, senderId, senderName: names[senderId] ?? senderId, content, inReplyTo: '', createdAt: T0 };
}

export function conversation(id: string, topic: string, members: string[], more: Partial<ConversationSummary> = {}): ConversationSummary {
  const names: Record<string, string> = { ag_owner: 'owner', ag_mgr: 'mgr', ag_bob: 'bob' };
  return {
    id, projectId: 'prj_web', topic, state: 'active', initiatorId: members[0], relatedTaskId: '',
    participants: members.map((a) => ({ agentId: a, agentName: names[a] ?? a, role: 'member', lastReadSeq: 0, joinedAt: T0 })),
    createdAt: T0, updatedAt: T0, endedAt: null, endedBy: '', unread: 0, lastMessage: null, ...more,
  };
}
