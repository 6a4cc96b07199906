// Demo data for the Board and Chat screens (part of mock.ts, loaded only
// with `?mock=1` on the dev server). The agents and projects are those of
// mockAgents.ts.
import { ApiError } from './transport';
import type {
  BoardAgent, Conversation, ConversationSummary, Execution, Message, ProjectSummary, Task, TaskCard, TaskDetailView, TaskEvent, TaskInput, TaskUpdate,
} from './types';

type Handlers = Record<string, (...a: any[]) => unknown>;

const STATUSES = ['backlog', 'todo', 'in_progress', 'blocked', 'done', 'cancelled'];
const TRANSITIONS: Record<string, string[]> = {
  backlog: ['todo', 'in_progress', 'blocked', 'cancelled'],
  todo: ['backlog', 'in_progress', 'blocked', 'cancelled'],
  in_progress: ['todo', 'blocked', 'done', 'cancelled'],
  blocked: ['backlog', 'todo', 'in_progress', 'cancelled'],
  done: ['todo'],
  cancelled: ['backlog', 'todo'],
};
const OWNER = 'ag_owner';

export function teamMethods(emit: (name: string, payload: unknown) => void, empty: boolean): Handlers {
  const ago = (min: number) => new Date(Date.now() - min * 60_000).toISOString();
  const names: Record<string, string> = {
    ag_owner: 'owner', ag_default: 'default', ag_lead: 'lead', ag_fe: 'frontend-mgr', ag_scout: 'scout', ag_writer: 'writer', ag_old: 'old-bot',
  };
  const boardAgents: Record<string, BoardAgent[]> = {
    pj_site: [
      { id: 'ag_owner', name: 'owner', kind: 'owner', parentId: '', status: 'active' },
      { id: 'ag_lead', name: 'lead', kind: 'coordinator', parentId: 'ag_owner', status: 'active' },
      { id: 'ag_fe', name: 'frontend-mgr', kind: 'manager', parentId: 'ag_lead', status: 'active' },
      { id: 'ag_scout', name: 'scout', kind: 'worker', parentId: 'ag_fe', status: 'active' },
      { id: 'ag_writer', name: 'writer', kind: 'worker', parentId: 'ag_fe', status: 'active' },
    ],
    pj_api: [
      { id: 'ag_owner', name: 'owner', kind: 'owner', parentId: '', status: 'active' },
      { id: 'ag_lead', name: 'lead', kind: 'coordinator', parentId: 'ag_owner', status: 'active' },
    ],
  };
  const projects = empty
    ? []
    : [
        { id: 'pj_site', name: 'website', description: 'The marketing site', createdAt: ago(9000), updatedAt: ago(9000) },
        { id: 'pj_api', name: 'api', description: '', createdAt: ago(9000), updatedAt: ago(9000) },
      ];

  let n = 0;
  const task = (title: string, status: string, priority: string, assigneeId: string, more: Partial<Task> = {}): Task => {
    n++;
    return {
      id: `tsk_${String(n).padStart(3, '0')}`, projectId: 'pj_site', title, description: '', status, priority, assigneeId, createdByAgentId: 'ag_fe',
      parentTaskId: '', dependsOn: [], blockedReason: '', statusChangedByAgentId: assigneeId || 'ag_fe', statusChangedAt: ago(40 - n),
      startedFromConversationId: '', requestedInConversationId: '', requestedByAgentId: '', result: '', summary: '',
      createdAt: ago(600 - n * 10), updatedAt: ago(40 - n), completedAt: status === 'done' ? ago(30) : null, ...more,
    };
  };
  const tasks: Task[] = empty
    ? []
    : [
        task('Redesign the pricing page', 'in_progress', 'high', 'ag_scout', {
          description: 'Three tiers, a comparison table, and the FAQ from the old page.\nKeep the current URLs.',
          startedFromConversationId: 'conv_pricing', statusChangedByAgentId: 'ag_scout',
        }),
        task('Write copy for the pricing tiers', 'todo', 'medium', 'ag_writer', { requestedInConversationId: 'conv_pricing', requestedByAgentId: 'ag_fe', createdByAgentId: 'ag_writer' }),
        task('Add CSV export to the orders page', 'todo', 'urgent', 'ag_scout', { createdByAgentId: 'ag_owner' }),
        task('Deploy the staging site', 'blocked', 'high', 'ag_writer', { blockedReason: 'Waiting for DNS access from the hosting provider' }),
        task('Audit image sizes on the landing page', 'backlog', 'low', '', {}),
        task('Fix the broken footer links', 'done', 'medium', 'ag_scout', { result: 'success', summary: 'All 14 links point to live pages again.' }),
        task('Set up the blog', 'backlog', 'medium', 'ag_writer', {}),
        task('Migrate the old newsletter signup', 'cancelled', 'low', '', {}),
      ];
  if (!empty) {
    tasks[1].dependsOn = ['tsk_001'];
    tasks[1].parentTaskId = 'tsk_001';
    tasks[6].dependsOn = ['tsk_004'];
  }
  const events: TaskEvent[] = [];
  let ev = 0;
  const addEvent = (e: Omit<TaskEvent, 'id' | 'agentName'>) => events.push({ ...e, id: ++ev, agentName: names[e.agentId] ?? e.agentId });
  for (const t of tasks) {
    addEvent({ taskId: t.id, kind: 'created', fromStatus: '', toStatus: 'backlog', fields: [], agentId: t.createdByAgentId, detail: '', conversationId: '', createdAt: t.createdAt });
    if (t.status !== 'backlog') {
      addEvent({ taskId: t.id, kind: 'status', fromStatus: 'backlog', toStatus: t.status, fields: [], agentId: t.statusChangedByAgentId, detail: t.blockedReason, conversationId: t.startedFromConversationId, createdAt: t.statusChangedAt! });
    }
  }
  const chatMods = empty
    ? []
    : [
        { id: 'cm_1', taskId: 'tsk_001', conversationId: 'conv_pricing', requesterId: 'ag_fe', executorId: 'ag_scout', operation: 'start', fields: ['status'], warning: false, warningReason: '', createdAt: ago(35) },
        { id: 'cm_2', taskId: 'tsk_001', conversationId: 'conv_pricing', requesterId: 'ag_lead', executorId: 'ag_scout', operation: 'update', fields: ['priority', 'description'], warning: true, warningReason: 'lead never wrote in any conversation of scout', createdAt: ago(20) },
      ];
  const executions: Execution[] = empty
    ? []
    : [
        { id: 'exec_2', taskId: 'tsk_001', agentId: 'ag_scout', projectId: 'pj_site', status: 'running', startedAt: ago(6), completedAt: null, exitCode: null, logFilePath: '~/.local/share/airlock/runs/exec_2.log' },
        { id: 'exec_1', taskId: 'tsk_001', agentId: 'ag_scout', projectId: 'pj_site', status: 'failed', startedAt: ago(50), completedAt: ago(44), exitCode: 1, logFilePath: '~/.local/share/airlock/runs/exec_1.log' },
      ];
  const logs: Record<string, string[]> = {
    exec_2: ['$ claude --mcp-config /tmp/airlock-mcp.json', '> get_my_task', '  tsk_001 Redesign the pricing page (in_progress)', '> file_read site/pricing.html', '  412 lines', '> file_write site/pricing.html', '  waiting for approval…'],
    exec_1: ['$ claude --mcp-config /tmp/airlock-mcp.json', '> get_my_task', 'error: the session expired', 'exit status 1'],
  };

  const conv = (id: string, topic: string, who: string[], more: Partial<Conversation> = {}): Conversation => ({
    id, projectId: 'pj_site', topic, state: 'active', initiatorId: who[0], relatedTaskId: '',
    participants: who.map((a) => ({ agentId: a, agentName: names[a], role: 'member', lastReadSeq: 0, joinedAt: ago(120) })),
    createdAt: ago(120), updatedAt: ago(5), endedAt: null, endedBy: '', ...more,
  });
  const conversations: Conversation[] = empty
    ? []
    : [
        conv('conv_pricing', 'Pricing page', ['ag_fe', 'ag_scout'], { relatedTaskId: 'tsk_001' }),
        conv('conv_copy', '', ['ag_scout', 'ag_writer']),
        conv('conv_dns', 'Staging DNS', ['ag_writer', 'ag_lead'], { state: 'ended', endedAt: ago(90), endedBy: 'ag_lead', updatedAt: ago(90) }),
      ];
  let seq = 0;
  const messages: Message[] = [];
  const say = (c: string, from: string, content: string, min: number) =>
    messages.push({ seq: ++seq, id: `msg_${seq}`, conversationId: c, senderId: from, senderName: names[from], content, inReplyTo: '', createdAt: ago(min) });
  if (!empty) {
    say('conv_dns', 'ag_writer', 'The staging deploy needs DNS access. Who has it?', 130);
    say('conv_dns', 'ag_lead', 'I asked the hosting provider; keep the task blocked until they answer.', 95);
    say('conv_pricing', 'ag_fe', 'Can you start on the pricing page? Three tiers, and keep the old URLs.', 40);
    say('conv_pricing', 'ag_scout', 'Starting now (tsk_001). Should the FAQ stay on the same page?', 36);
    say('conv_pricing', 'ag_fe', 'Yes, below the table.', 30);
    say('conv_copy', 'ag_scout', 'I will need copy for the three tiers by tomorrow.', 12);
    say('conv_copy', 'ag_writer', 'On it — I made a task for it so it is tracked.', 5);
  }
  const read: Record<string, number> = { conv_dns: 2 };

  const findTask = (id: string) => {
    const t = tasks.find((x) => x.id === id);
    if (!t) throw new ApiError('task_not_found', `Task not found: ${id}`, 'call get_my_tasks to see your tasks and their ids');
    return t;
  };
  const findProject = (ref: string) => {
    const p = projects.find((x) => x.id === ref || x.name === ref);
    if (!p) throw new ApiError('project_not_found', `Project not found: ${ref}`);
    return p;
  };
  const findConv = (id: string) => {
    const c = conversations.find((x) => x.id === id);
    if (!c) throw new ApiError('conversation_not_found', `Conversation not found: ${id}`);
    return c;
  };
  const openBlockers = (t: Task) => t.dependsOn.filter((d) => { const x = tasks.find((y) => y.id === d); return x && x.status !== 'done' && x.status !== 'cancelled'; });
  const card = (t: Task): TaskCard => ({
    ...t, assigneeName: names[t.assigneeId] ?? '', creatorName: names[t.createdByAgentId] ?? '', statusChangedByName: names[t.statusChangedByAgentId] ?? '', openBlockers: openBlockers(t).length,
  });
  const changed = (t: Task, reason: string) => emit('board:changed', { projectId: t.projectId, taskIds: [t.id], reason, agentId: OWNER });
  const summary = (c: Conversation): ConversationSummary => {
    const ms = messages.filter((m) => m.conversationId === c.id);
    return { ...c, unread: ms.filter((m) => m.seq > (read[c.id] ?? 0) && m.senderId !== OWNER).length, lastMessage: ms[ms.length - 1] ?? null };
  };
  const post = (c: Conversation, from: string, content: string) => {
    if (!content.trim()) throw new ApiError('invalid', 'content is required');
    if (new TextEncoder().encode(content).length > 16 << 10) throw new ApiError('too_large', `content is ${new TextEncoder().encode(content).length} bytes; at most 16384 are allowed`);
    if (c.state !== 'active') throw new ApiError('conversation_ended', `Conversation ${c.id} has ended`, 'start a new conversation with start_conversation or send_message');
    const m: Message = { seq: ++seq, id: `msg_${seq}`, conversationId: c.id, senderId: from, senderName: names[from], content, inReplyTo: '', createdAt: new Date().toISOString() };
    messages.push(m);
    c.updatedAt = m.createdAt;
    emit('chat:message', { projectId: c.projectId, message: m });
    return m;
  };

  // Agents at work: a reply to the owner, now and then.
  setTimeout(() => {
    const c = conversations.find((x) => x.id === 'conv_copy');
    if (c) post(c, 'ag_writer', 'First draft of the tier copy is in the task description.');
  }, 2500);

  return {
    'Board.Projects': (): ProjectSummary[] =>
      projects.map((p) => ({
        ...p,
        counts: Object.fromEntries(STATUSES.map((s) => [s, tasks.filter((t) => t.projectId === p.id && t.status === s).length])),
        agents: (boardAgents[p.id] ?? []).filter((a) => a.kind !== 'owner').map((a) => a.id),
      })),
    'Board.Get': (ref: string, assignee: string) => {
      const p = findProject(ref);
      const mine = tasks.filter((t) => t.projectId === p.id && (!assignee || t.assigneeId === assignee));
      return {
        project: p,
        columns: STATUSES.map((s) => ({ status: s, tasks: mine.filter((t) => t.status === s).map(card) })),
        agents: boardAgents[p.id] ?? [],
        transitions: TRANSITIONS,
      };
    },
    'Board.Move': (id: string, to: string, reason: string) => {
      const t = findTask(id);
      if (t.status === to) throw new ApiError('invalid_status_transition', `Task ${id} is already ${to}`);
      if (!TRANSITIONS[t.status].includes(to)) {
        throw new ApiError('invalid_status_transition', `Task ${id} cannot go from ${t.status} to ${to}`, `from ${t.status} a task may go to: ${TRANSITIONS[t.status].join(', ')}`);
      }
      const open = openBlockers(t);
      if ((to === 'in_progress' || to === 'done') && open.length) {
        throw new ApiError('task_blocked', `Task ${id} cannot be ${to}: it depends on ${open.length} open task(s): ${open.map((o) => `${o} (${findTask(o).title}, ${findTask(o).status})`).join('; ')}`, 'those tasks must be done (or cancelled) first');
      }
      addEvent({ taskId: id, kind: 'status', fromStatus: t.status, toStatus: to, fields: [], agentId: OWNER, detail: to === 'blocked' ? reason || 'blocked by the owner on the board' : '', conversationId: '', createdAt: new Date().toISOString() });
      t.status = to;
      t.blockedReason = to === 'blocked' ? reason || 'blocked by the owner on the board' : '';
      t.statusChangedByAgentId = OWNER;
      t.statusChangedAt = new Date().toISOString();
      changed(t, 'status');
      return card(t);
    },
    'Board.Create': (project: string, input: TaskInput) => {
      const p = findProject(project);
      if (!input.title.trim()) throw new ApiError('invalid', 'tasks[0].title is required');
      const t = task(input.title.trim(), input.status || 'backlog', input.priority || 'medium', input.assigneeId, {
        projectId: p.id, description: input.description, parentTaskId: input.parentTaskId, dependsOn: input.dependsOn ?? [], createdByAgentId: OWNER,
        createdAt: new Date().toISOString(), statusChangedAt: null, statusChangedByAgentId: '',
      });
      tasks.push(t);
      addEvent({ taskId: t.id, kind: 'created', fromStatus: '', toStatus: t.status, fields: [], agentId: OWNER, detail: '', conversationId: '', createdAt: t.createdAt });
      changed(t, 'created');
      return card(t);
    },
    'Board.Update': (id: string, up: TaskUpdate) => {
      const t = findTask(id);
      const fields: string[] = [];
      for (const k of ['title', 'description', 'priority', 'blockedReason'] as const) {
        const v = up[k];
        if (v != null && v !== t[k]) { t[k] = v; fields.push(k === 'blockedReason' ? 'blocked_reason' : k); }
      }
      if (up.dependsOn) {
        if (up.dependsOn.includes(id)) throw new ApiError('dependency_cycle', `Task ${id} cannot depend on itself`);
        t.dependsOn = up.dependsOn;
        fields.push('depends_on');
      }
      if (fields.length) addEvent({ taskId: id, kind: 'edited', fromStatus: '', toStatus: '', fields, agentId: OWNER, detail: '', conversationId: '', createdAt: new Date().toISOString() });
      changed(t, 'edited');
      return card(t);
    },
    'Board.Assign': (id: string, agent: string) => {
      const t = findTask(id);
      t.assigneeId = agent;
      addEvent({ taskId: id, kind: 'assigned', fromStatus: '', toStatus: '', fields: ['assignee'], agentId: OWNER, detail: agent ? `assigned to ${names[agent]}` : 'unassigned', conversationId: '', createdAt: new Date().toISOString() });
      changed(t, 'assigned');
      return card(t);
    },
    'Board.Detail': (id: string): TaskDetailView => {
      const t = findTask(id);
      return {
        task: t, card: card(t), agentNames: names,
        blockers: tasks.filter((x) => t.dependsOn.includes(x.id)),
        dependents: tasks.filter((x) => x.dependsOn.includes(id)),
        subtasks: tasks.filter((x) => x.parentTaskId === id),
        history: events.filter((e) => e.taskId === id),
        chatModifications: chatMods.filter((m) => m.taskId === id),
        conversations: conversations.filter((c) => c.relatedTaskId === id || c.id === t.startedFromConversationId || c.id === t.requestedInConversationId),
        executions: executions.filter((e) => e.taskId === id),
      };
    },
    'Board.Log': (id: string, tail: number) => {
      const e = executions.find((x) => x.id === id);
      if (!e) throw new ApiError('execution_log_not_found', `Execution not found: ${id}`);
      const lines = logs[id] ?? [];
      const take = lines.slice(-(tail || 100));
      return { execution: e, lines: take, totalLines: lines.length, offset: lines.length - take.length, truncated: take.length < lines.length };
    },
    'Chat.Conversations': (project: string) =>
      conversations
        .filter((c) => !project || c.projectId === project)
        .map(summary)
        .sort((a, b) => (b.lastMessage?.createdAt ?? b.updatedAt).localeCompare(a.lastMessage?.createdAt ?? a.updatedAt)),
    'Chat.Messages': (id: string, limit: number, before = 0) => {
      const c = findConv(id);
      const ms = messages.filter((m) => m.conversationId === id);
      const page = ms.filter((m) => !before || m.seq < before);
      return { conversation: c, messages: page.slice(-(limit || 100)), total: ms.length };
    },
    'Chat.MarkRead': (id: string) => {
      read[id] = seq;
      return null;
    },
    'Chat.Send': (id: string, content: string) => post(findConv(id), OWNER, content),
    'Chat.Start': (project: string, agentIds: string[], topic: string, message: string) => {
      const p = findProject(project);
      if (!agentIds.length) throw new ApiError('invalid', 'name at least one agent to talk with');
      const c = conv(`conv_${Date.now().toString(36)}`, topic, [OWNER, ...agentIds], { projectId: p.id, createdAt: new Date().toISOString(), updatedAt: new Date().toISOString() });
      conversations.unshift(c);
      if (message.trim()) post(c, OWNER, message);
      emit('chat:conversation', { projectId: p.id, conversationId: c.id, state: 'active', reason: 'started' });
      return summary(c);
    },
    'Chat.End': (id: string) => {
      const c = findConv(id);
      c.state = 'ended';
      c.endedAt = new Date().toISOString();
      c.endedBy = OWNER;
      emit('chat:conversation', { projectId: c.projectId, conversationId: c.id, state: 'ended', reason: 'ended' });
      return c;
    },
  };
}
