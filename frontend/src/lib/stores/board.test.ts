import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../api/transport';
import { emit, fakeApi, resetFakeApi, resync } from '../testing/fakeApi';
import { board, card, conversation, detail } from '../testing/teams';
import type { BoardView, TaskCard } from '../api';
import { BoardStore, MAIN_STATUSES, UNASSIGNED } from './board.svelte';

vi.mock('../api', async () => (await import('../testing/fakeApi')).fakeApiModule());

const ids = (s: BoardStore, filter: string | null = null) => s.columns(MAIN_STATUSES, filter).map((c) => `${c.status}: ${c.tasks.map((t) => t.id).join(' ')}`);

async function loaded(cards: TaskCard[]): Promise<BoardStore> {
  vi.mocked(fakeApi.board.get).mockResolvedValue(board(cards));
  const s = new BoardStore();
  await s.setProject('prj_web');
  return s;
}

describe('BoardStore', () => {
  beforeEach(() => resetFakeApi());

  it('puts cards in their columns, the most urgent first, then the oldest; the filter keeps one agent\'s or the unassigned', async () => {
    const s = await loaded([
      card('t1', 'old medium', 'todo', { createdAt: '2026-01-01T00:00:00Z', assigneeId: 'ag_bob' }),
      card('t2', 'urgent', 'todo', { priority: 'urgent', createdAt: '2026-01-03T00:00:00Z' }),
      card('t3', 'new medium', 'todo', { createdAt: '2026-01-02T00:00:00Z', assigneeId: 'ag_bob' }),
      card('t4', 'low', 'todo', { priority: 'low' }),
      card('t5', 'running', 'in_progress', { assigneeId: 'ag_mgr' }),
    ]);
    expect(ids(s)).toEqual(['backlog: ', 'todo: t2 t1 t3 t4', 'in_progress: t5', 'blocked: ', 'done: ']);
    expect(ids(s, 'ag_bob')).toEqual(['backlog: ', 'todo: t1 t3', 'in_progress: ', 'blocked: ', 'done: ']);
    expect(ids(s, UNASSIGNED)).toEqual(['backlog: ', 'todo: t2 t4', 'in_progress: ', 'blocked: ', 'done: ']);
    expect(s.allowed('done')).toEqual(['todo']);
  });

  it('shows a move at once and keeps the backend\'s answer', async () => {
    const s = await loaded([card('t1', 'a', 'todo')]);
    let answer!: (c: TaskCard) => void;
    vi.mocked(fakeApi.board.move).mockReturnValue(new Promise((r) => (answer = r)));
    const moved = s.move('t1', 'in_progress');
    expect(ids(s)[2]).toBe('in_progress: t1'); // before the backend answered
    expect(s.moving).toEqual({ t1: 'in_progress' });
    answer(card('t1', 'a', 'in_progress', { statusChangedByAgentId: 'ag_owner' }));
    expect(await moved).toBe(true);
    expect(fakeApi.board.move).toHaveBeenCalledWith('t1', 'in_progress', '');
    expect(s.moving).toEqual({});
    expect(s.card('t1')?.status).toBe('in_progress');
    expect(ids(s)[1]).toBe('todo: ');
  });

  it('snaps a refused move back and keeps the refusal, with its hint, for that card until dismissed or moved again', async () => {
    const s = await loaded([card('t1', 'a', 'todo'), card('t2', 'b', 'todo')]);
    vi.mocked(fakeApi.board.move).mockRejectedValueOnce(new ApiError('task_blocked', 'Task t1 cannot be in_progress: it depends on 1 open task(s)', 'those tasks must be done first'));
    expect(await s.move('t1', 'in_progress')).toBe(false);
    expect(ids(s)[1]).toBe('todo: t1 t2');
    expect(s.refusals).toEqual({ t1: { message: 'Task t1 cannot be in_progress: it depends on 1 open task(s)', hint: 'those tasks must be done first' } });
    s.dismiss('t1');
    expect(s.refusals).toEqual({});

    vi.mocked(fakeApi.board.move).mockRejectedValueOnce(new ApiError('invalid_status_transition', 'no'));
    await s.move('t1', 'done');
    expect(Object.keys(s.refusals)).toEqual(['t1']);
    vi.mocked(fakeApi.board.move).mockResolvedValueOnce(card('t1', 'a', 'blocked'));
    await s.move('t1', 'blocked', 'waiting for DNS');
    expect(fakeApi.board.move).toHaveBeenLastCalledWith('t1', 'blocked', 'waiting for DNS');
    expect(s.refusals).toEqual({});
  });

  it('reloads on board:changed for its project (or any project), once more for events during a load, not for other projects', async () => {
    const s = await loaded([card('t1', 'a', 'todo')]);
    const off = s.connect();
    vi.mocked(fakeApi.board.get).mockClear();
    emit('board:changed', { projectId: 'prj_other', taskIds: ['x'], reason: 'status', agentId: 'ag_bob' });
    await vi.waitFor(() => expect(fakeApi.board.projects).toHaveBeenCalled());
    expect(fakeApi.board.get).not.toHaveBeenCalled();

    let first!: (v: BoardView) => void;
    vi.mocked(fakeApi.board.get)
      .mockReturnValueOnce(new Promise((r) => (first = r)))
      .mockResolvedValue(board([card('t1', 'a', 'done')]));
    emit('board:changed', { projectId: 'prj_web', taskIds: ['t1'], reason: 'status', agentId: 'ag_bob' });
    emit('board:changed', { projectId: 'prj_web', taskIds: ['t1'], reason: 'completed', agentId: 'ag_bob' });
    emit('board:changed', { projectId: '', taskIds: [], reason: 'reload', agentId: '' });
    first(board([card('t1', 'a', 'in_progress')]));
    await vi.waitFor(() => expect(s.card('t1')?.status).toBe('done'));
    expect(fakeApi.board.get).toHaveBeenCalledTimes(2);

    vi.mocked(fakeApi.board.get).mockResolvedValue(board([]));
    resync();
    await vi.waitFor(() => expect(s.cards).toEqual([]));
    off();
  });

  it('keeps the open task\'s detail live: board changes and its executions reload it, and its runs refetch their logs', async () => {
    const s = await loaded([card('t1', 'a', 'in_progress')]);
    const off = s.connect();
    vi.mocked(fakeApi.board.detail).mockResolvedValue(detail(card('t1', 'a', 'in_progress')));
    await s.openTask('t1');
    expect(s.detail?.task.id).toBe('t1');
    vi.mocked(fakeApi.board.detail).mockResolvedValue(detail(card('t1', 'a', 'done')));
    emit('board:changed', { projectId: 'prj_web', taskIds: ['t1'], reason: 'completed', agentId: 'ag_bob' });
    await vi.waitFor(() => expect(s.detail?.task.status).toBe('done'));

    const runs = s.runsVersion;
    vi.mocked(fakeApi.board.detail).mockClear();
    emit('execution:changed', { projectId: 'prj_web', taskId: 'other', agentId: 'ag_bob', executionId: 'exec_0', status: 'running' });
    emit('execution:changed', { projectId: 'prj_web', taskId: 't1', agentId: 'ag_bob', executionId: 'exec_1', status: 'running' });
    await vi.waitFor(() => expect(fakeApi.board.detail).toHaveBeenCalledTimes(1));
    expect(s.runsVersion).toBe(runs + 1);

    await s.openTask(null);
    expect(s.detail).toBeNull();
    off();
  });

  it('keeps the open task\'s linked conversations live: a conversation of its project that ends reloads the detail, one of another project does not', async () => {
    const s = await loaded([card('t1', 'a', 'in_progress', { startedFromConversationId: 'conv_1' })]);
    const off = s.connect();
    const linked = (state: string) => detail(card('t1', 'a', 'in_progress'), { conversations: [conversation('conv_1', '', ['ag_mgr', 'ag_bob'], { state })] });
    vi.mocked(fakeApi.board.detail).mockResolvedValue(linked('active'));
    await s.openTask('t1');
    expect(s.detail?.conversations.map((c) => c.state)).toEqual(['active']);

    vi.mocked(fakeApi.board.detail).mockClear();
    vi.mocked(fakeApi.board.detail).mockResolvedValue(linked('ended'));
    emit('chat:conversation', { projectId: 'prj_other', conversationId: 'conv_9', state: 'ended', reason: 'ended' });
    expect(fakeApi.board.detail, 'another project\'s conversation').not.toHaveBeenCalled();
    emit('chat:conversation', { projectId: 'prj_web', conversationId: 'conv_1', state: 'ended', reason: 'ended' });
    await vi.waitFor(() => expect(s.detail?.conversations.map((c) => c.state)).toEqual(['ended']));
    expect(fakeApi.board.detail).toHaveBeenCalledTimes(1);

    await s.openTask(null);
    emit('chat:conversation', { projectId: 'prj_web', conversationId: 'conv_1', state: 'ended', reason: 'ended' });
    expect(fakeApi.board.detail, 'no task open').toHaveBeenCalledTimes(1);
    off();
  });

  it('drops the board of a project that is gone and says so', async () => {
    const s = await loaded([card('t1', 'a', 'todo')]);
    vi.mocked(fakeApi.board.get).mockRejectedValue(new ApiError('project_not_found', 'Project not found: prj_web'));
    await s.refresh();
    expect(s.view).toBeNull();
    expect(s.error).toBe('Project not found: prj_web');
  });

  it('shows the newest project asked for when answers arrive out of order', async () => {
    let slow!: (v: BoardView) => void;
    vi.mocked(fakeApi.board.get).mockImplementation((ref) =>
      ref === 'a' ? new Promise((r) => (slow = r)) : Promise.resolve({ ...board([]), project: { ...board([]).project, id: 'b', name: 'b' } }),
    );
    const s = new BoardStore();
    const first = s.setProject('a');
    await s.setProject('b');
    slow({ ...board([card('t1', 'a', 'todo')]), project: { ...board([]).project, id: 'a', name: 'a' } });
    await first;
    expect(s.projectId).toBe('b');
  });
});
