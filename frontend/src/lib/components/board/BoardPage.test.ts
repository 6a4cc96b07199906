import { beforeEach, describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { ApiError } from '../../api/transport';
import { emit, fakeApi, resetFakeApi } from '../../testing/fakeApi';
import { testStores } from '../../testing/stores';
import { board, boardAgents, card, detail, projectSummary } from '../../testing/teams';
import type { BoardTarget } from '../../route';
import type { TaskCard } from '../../api';
import BoardPage from './BoardPage.svelte';

vi.mock('../../api', async () => (await import('../../testing/fakeApi')).fakeApiModule());

const ready = card('t_ready', 'Write the docs', 'todo', { assigneeId: 'ag_bob', assigneeName: 'bob', priority: 'high' });
const waiting = card('t_wait', 'Ship the release', 'todo', { dependsOn: ['t_ready'], openBlockers: 1 });
const blocked = card('t_blk', 'Deploy staging', 'blocked', { blockedReason: 'DNS access missing', assigneeId: 'ag_mgr', assigneeName: 'mgr' });

function backend(cards: TaskCard[] = [ready, waiting, blocked]) {
  vi.mocked(fakeApi.board.projects).mockResolvedValue([projectSummary('prj_web', 'web', { todo: 2, blocked: 1 })]);
  vi.mocked(fakeApi.board.get).mockResolvedValue(board(cards));
}

function renderPage(target?: BoardTarget) {
  const { stores, context } = testStores();
  return { stores, ...render(BoardPage, { context, props: { target } }) };
}

const column = (status: string) => document.querySelector<HTMLElement>(`[data-testid=board-column][data-status="${status}"]`)!;
const cardEl = (id: string) => document.querySelector<HTMLElement>(`[data-task-id="${id}"] .card`)!;
const cardsIn = (status: string) => [...column(status).querySelectorAll<HTMLElement>('[data-testid=task-card]')].map((e) => e.dataset.taskId);

describe('BoardPage', () => {
  beforeEach(() => {
    resetFakeApi();
    backend();
  });

  it('says how to create a project when there is none', async () => {
    vi.mocked(fakeApi.board.projects).mockResolvedValue([]);
    renderPage();
    await screen.findByRole('heading', { name: 'No projects yet' });
    expect(screen.getByRole('link', { name: 'Agents → Projects' }).getAttribute('href')).toBe('#/agents/projects');
    expect(document.body.textContent).toContain('airlock projects add NAME');
    expect(fakeApi.board.get).not.toHaveBeenCalled();
  });

  it('says how tasks come when a project has none', async () => {
    backend([]);
    renderPage();
    await screen.findByRole('heading', { name: 'No tasks in web yet' });
    expect(document.body.textContent).toContain('create_tasks_batch');
    expect(document.body.textContent).toContain('request_task');
  });

  it('opens the first project and shows its cards: title, priority, assignee, blocked reason, what they wait on', async () => {
    renderPage();
    await waitFor(() => expect(cardsIn('todo')).toEqual(['t_ready', 't_wait']));
    expect(fakeApi.board.get).toHaveBeenCalledWith('prj_web', '');
    expect(cardsIn('blocked')).toEqual(['t_blk']);
    const c = within(column('todo')).getAllByTestId('task-card')[0];
    expect(within(c).getByTestId('task-title').textContent).toBe('Write the docs');
    expect(within(c).getByTestId('task-priority').textContent).toBe('high');
    expect(within(c).getByTestId('task-assignee').textContent).toContain('bob');
    expect(within(column('blocked')).getByTestId('task-blocked-reason').textContent).toContain('DNS access missing');
    expect(within(column('todo')).getByText('waits on 1')).toBeTruthy();
  });

  it('filters by agent, from a link or the picker', async () => {
    renderPage({ project: 'prj_web', task: null, agent: 'ag_bob' });
    await waitFor(() => expect(cardsIn('todo')).toEqual(['t_ready']));
    expect(cardsIn('blocked')).toEqual([]);
    await userEvent.selectOptions(screen.getByLabelText('Filter by agent'), 'none');
    expect(cardsIn('todo')).toEqual(['t_wait']);
    await userEvent.selectOptions(screen.getByLabelText('Filter by agent'), '');
    expect(cardsIn('todo')).toEqual(['t_ready', 't_wait']);
  });

  it('moves a card by dragging it to another column, as the owner', async () => {
    vi.mocked(fakeApi.board.move).mockResolvedValue({ ...ready, status: 'in_progress' });
    renderPage();
    await waitFor(() => expect(cardsIn('todo')).toContain('t_ready'));
    await fireEvent.dragStart(cardEl('t_ready'));
    await fireEvent.dragOver(column('in_progress'));
    expect(column('in_progress').className).toContain('allowed');
    expect(column('done').className).toContain('denied'); // todo → done is not a move
    await fireEvent.drop(column('in_progress'));
    expect(fakeApi.board.move).toHaveBeenCalledWith('t_ready', 'in_progress', '');
    await waitFor(() => expect(cardsIn('in_progress')).toEqual(['t_ready']));
  });

  it('snaps a refused move back and says why on that card', async () => {
    vi.mocked(fakeApi.board.move).mockRejectedValue(new ApiError('task_blocked', 'Task t_wait cannot be in_progress: it depends on 1 open task(s)', 'those tasks must be done (or cancelled) first'));
    renderPage();
    await waitFor(() => expect(cardsIn('todo')).toContain('t_wait'));
    await fireEvent.dragStart(cardEl('t_wait'));
    await fireEvent.dragOver(column('in_progress'));
    await fireEvent.drop(column('in_progress'));
    const refusal = await within(document.querySelector<HTMLElement>('[data-task-id="t_wait"]')!).findByRole('alert');
    expect(refusal.textContent).toContain('depends on 1 open task');
    expect(refusal.textContent).toContain('those tasks must be done');
    expect(cardsIn('todo')).toEqual(['t_ready', 't_wait']);
    expect(cardsIn('in_progress')).toEqual([]);
    await userEvent.click(within(refusal).getByRole('button', { name: 'Dismiss' }));
    expect(screen.queryByTestId('task-refusal')).toBeNull();
  });

  it('moves by keyboard: arrows between cards, M opens the moves the state machine allows', async () => {
    vi.mocked(fakeApi.board.move).mockResolvedValue({ ...ready, status: 'in_progress' });
    renderPage();
    await waitFor(() => expect(cardsIn('todo')).toContain('t_ready'));
    cardEl('t_ready').focus();
    expect(cardEl('t_ready').tabIndex).toBe(0);
    expect(cardEl('t_wait').tabIndex).toBe(-1); // one card in the tab order
    await userEvent.keyboard('{ArrowDown}');
    expect(document.activeElement).toBe(cardEl('t_wait'));
    await userEvent.keyboard('{ArrowRight}');
    expect(document.activeElement).toBe(cardEl('t_blk'));
    await userEvent.keyboard('{ArrowLeft}{ArrowUp}');
    expect(document.activeElement).toBe(cardEl('t_ready'));

    await userEvent.keyboard('m');
    const menu = screen.getByRole('menu', { name: 'Move Write the docs' });
    expect(within(menu).getAllByRole('menuitem').map((i) => i.textContent)).toEqual(['Backlog', 'In progress', 'Blocked', 'Cancelled', 'Open details']);
    expect(document.activeElement?.textContent).toBe('Backlog');
    await userEvent.keyboard('{ArrowDown}{Enter}');
    expect(fakeApi.board.move).toHaveBeenCalledWith('t_ready', 'in_progress', '');
    await waitFor(() => expect(cardsIn('in_progress')).toEqual(['t_ready']));
    await waitFor(() => expect(document.activeElement).toBe(cardEl('t_ready')));

    await userEvent.keyboard('m{Escape}');
    expect(screen.queryByRole('menu')).toBeNull();
    expect(document.activeElement).toBe(cardEl('t_ready'));
  });

  it('closes the open task with Escape while a card has the focus (found by a new-user test)', async () => {
    vi.mocked(fakeApi.board.detail).mockResolvedValue(detail(blocked));
    renderPage({ project: 'prj_web', task: 't_blk', agent: null });
    await screen.findByTestId('task-detail');
    cardEl('t_ready').focus();
    await userEvent.keyboard('{Escape}');
    await waitFor(() => expect(screen.queryByTestId('task-detail')).toBeNull());
  });

  it('asks why before blocking a task', async () => {
    vi.mocked(fakeApi.board.move).mockResolvedValue({ ...ready, status: 'blocked', blockedReason: 'waiting for review' });
    renderPage();
    await waitFor(() => expect(cardsIn('todo')).toContain('t_ready'));
    await fireEvent.dragStart(cardEl('t_ready'));
    await fireEvent.drop(column('blocked'));
    const dialog = await screen.findByRole('dialog');
    expect(fakeApi.board.move).not.toHaveBeenCalled();
    await userEvent.type(within(dialog).getByLabelText('Why is it blocked?'), 'waiting for review{Enter}');
    expect(fakeApi.board.move).toHaveBeenCalledWith('t_ready', 'blocked', 'waiting for review');
  });

  it('blocks a task from the keyboard: the reason dialog has the focus, then the card gets it back (found by a new-user test)', async () => {
    vi.mocked(fakeApi.board.move).mockResolvedValue({ ...ready, status: 'blocked', blockedReason: 'waiting on infra' });
    renderPage();
    await waitFor(() => expect(cardsIn('todo')).toContain('t_ready'));
    cardEl('t_ready').focus();
    await userEvent.keyboard('m{ArrowDown}{ArrowDown}{Enter}');
    const dialog = await screen.findByRole('dialog', { name: 'Block “Write the docs”' });
    const field = within(dialog).getByLabelText('Why is it blocked?');
    await waitFor(() => expect(document.activeElement).toBe(field));
    await userEvent.keyboard('waiting on infra');
    expect((field as HTMLInputElement).value).toBe('waiting on infra');
    expect(screen.queryByTestId('task-detail')).toBeNull(); // the space did not open the task behind
    await userEvent.keyboard('{Enter}');
    expect(fakeApi.board.move).toHaveBeenCalledWith('t_ready', 'blocked', 'waiting on infra');
    await waitFor(() => expect(cardsIn('blocked')).toContain('t_ready'));
    await waitFor(() => expect(document.activeElement).toBe(cardEl('t_ready')));
  });

  it('creates a task with its assignee, parent and dependencies', async () => {
    vi.mocked(fakeApi.board.create).mockResolvedValue(card('t_new', 'Translate', 'backlog'));
    vi.mocked(fakeApi.board.detail).mockResolvedValue(detail(card('t_new', 'Translate', 'backlog')));
    renderPage();
    await waitFor(() => expect(cardsIn('todo')).toContain('t_ready'));
    await userEvent.click(screen.getByRole('button', { name: 'New task' }));
    const dialog = screen.getByRole('dialog');
    await userEvent.type(within(dialog).getByLabelText('Title'), 'Translate');
    await userEvent.type(within(dialog).getByLabelText('Description'), 'Into German');
    await userEvent.selectOptions(within(dialog).getByLabelText('Priority'), 'urgent');
    await userEvent.selectOptions(within(dialog).getByLabelText('Starts in'), 'todo');
    await userEvent.selectOptions(within(dialog).getByLabelText('Assignee'), 'ag_bob');
    await userEvent.selectOptions(within(dialog).getByLabelText('Part of'), 't_ready');
    await userEvent.click(within(dialog).getByLabelText(/Deploy staging/));
    await userEvent.click(within(dialog).getByRole('button', { name: 'Create task' }));
    expect(fakeApi.board.create).toHaveBeenCalledWith('prj_web', {
      localId: '', title: 'Translate', description: 'Into German', priority: 'urgent', status: 'todo', assigneeId: 'ag_bob', parentTaskId: 't_ready', dependsOn: ['t_blk'],
    });
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect((await screen.findByTestId('task-detail')).getAttribute('data-task-id')).toBe('t_new');
  });

  it('shows a refused new task in the form', async () => {
    vi.mocked(fakeApi.board.create).mockRejectedValue(new ApiError('agent_not_assigned_to_project', "Agent 'ag_x' is not assigned to project 'prj_web'"));
    renderPage();
    await waitFor(() => expect(cardsIn('todo')).toContain('t_ready'));
    await userEvent.click(screen.getByRole('button', { name: 'New task' }));
    await userEvent.type(screen.getByRole('dialog').querySelector('input')!, 'X');
    await userEvent.click(screen.getByRole('button', { name: 'Create task' }));
    expect((await screen.findByTestId('task-form-error')).textContent).toContain('not assigned to project');
    expect(screen.getByRole('dialog')).toBeTruthy();
  });

  it('shows a task\'s history: moves and who made them, chat-driven changes with the requester, the conversation and the warning', async () => {
    vi.mocked(fakeApi.board.detail).mockResolvedValue(
      detail(blocked, {
        history: [
          { id: 1, taskId: 't_blk', kind: 'created', fromStatus: '', toStatus: 'backlog', fields: [], agentId: 'ag_mgr', agentName: 'mgr', detail: '', conversationId: '', createdAt: '2026-01-01T10:00:00Z' },
          { id: 2, taskId: 't_blk', kind: 'status', fromStatus: 'backlog', toStatus: 'blocked', fields: [], agentId: 'ag_owner', agentName: 'owner', detail: 'DNS access missing', conversationId: '', createdAt: '2026-01-01T10:05:00Z' },
        ],
        chatModifications: [
          { id: 'cm1', taskId: 't_blk', conversationId: 'conv_1', requesterId: 'ag_owner', executorId: 'ag_mgr', operation: 'update', fields: ['priority'], warning: true, warningReason: 'owner never wrote in any conversation of mgr', createdAt: '2026-01-01T10:03:00Z' },
        ],
        conversations: [{ id: 'conv_1', projectId: 'prj_web', topic: 'DNS', state: 'active', initiatorId: 'ag_mgr', relatedTaskId: 't_blk', participants: [{ agentId: 'ag_mgr', agentName: 'mgr', role: 'member', lastReadSeq: 0, joinedAt: '' }], createdAt: '', updatedAt: '', endedAt: null, endedBy: '' }],
        executions: [{ id: 'exec_1', taskId: 't_blk', agentId: 'ag_mgr', projectId: 'prj_web', status: 'failed', startedAt: '2026-01-01T10:00:00Z', completedAt: '2026-01-01T10:01:00Z', exitCode: 2, logFilePath: '/tmp/exec_1.log' }],
      }),
    );
    // The task's runs come from the runner (the execution records it made).
    vi.mocked(fakeApi.runs.list).mockResolvedValue([
      { id: 'exec_1', taskId: 't_blk', agentId: 'ag_mgr', projectId: 'prj_web', status: 'failed', trigger: 'manual', attempt: 0, template: 'custom', command: 'agent', workDir: '/w', exitCode: 2, startedAt: '2026-01-01T10:00:00Z', endedAt: '2026-01-01T10:01:00Z', logPath: '/tmp/exec_1.log', reason: 'exit status 2' },
    ]);
    vi.mocked(fakeApi.runs.log).mockResolvedValue({ runId: 'exec_1', status: 'failed', lines: ['[2026-01-01T10:00:01Z] starting', '[2026-01-01T10:00:02Z] boom'], totalLines: 2, offset: 0, truncated: false });
    renderPage({ project: 'prj_web', task: 't_blk', agent: null });
    const d = await screen.findByTestId('task-detail');
    const entries = await within(d).findAllByTestId('history-entry');
    expect(entries.map((e) => e.dataset.kind)).toEqual(['created', 'chat', 'status']); // oldest first
    const text = (e: HTMLElement) => e.textContent!.replace(/\s+/g, ' ');
    expect(text(entries[2])).toMatch(/owner ?moved it Backlog → Blocked/);
    expect(entries[2].textContent).toContain('DNS access missing');
    expect(text(entries[1])).toMatch(/mgr ?changed priority at the request of owner/);
    expect(within(entries[1]).getByTestId('chat-mod-warning').textContent).toContain('owner never wrote in any conversation of mgr');
    expect(within(entries[1]).getByRole('link', { name: 'conv_1' }).getAttribute('href')).toBe('#/chat/conv_1');
    expect(within(d).getByRole('link', { name: 'DNS' }).getAttribute('href')).toBe('#/chat/conv_1');

    const run = await within(d).findByTestId('run-row');
    expect(run.textContent).toContain('exit 2');
    await userEvent.click(within(run).getByRole('button', { expanded: false }));
    await waitFor(() => expect(within(run).getAllByTestId('output-line').map((l) => l.textContent!.replace(/^[\d:]+/, ''))).toEqual(['starting', 'boom']));
    expect(fakeApi.runs.log).toHaveBeenCalledWith('exec_1', { tail: 500, offset: null });
  });

  it('edits a task\'s fields as the owner and shows a refusal where it was made', async () => {
    vi.mocked(fakeApi.board.detail).mockResolvedValue(detail(ready));
    vi.mocked(fakeApi.board.update).mockRejectedValueOnce(new ApiError('dependency_cycle', 'That would make a dependency cycle: t_ready → t_wait → t_ready'));
    renderPage({ project: 'prj_web', task: 't_ready', agent: null });
    const form = await screen.findByTestId('task-fields');
    const title = within(form).getByLabelText('Title');
    await userEvent.clear(title);
    await userEvent.type(title, 'Write the user docs');
    await userEvent.click(within(form).getByRole('button', { name: 'Change' }));
    await userEvent.click(within(form).getByLabelText(/Ship the release/));
    await userEvent.selectOptions(within(form).getByLabelText('Assignee'), 'ag_mgr');
    await userEvent.click(within(form).getByRole('button', { name: 'Save changes' }));
    expect(fakeApi.board.update).toHaveBeenCalledWith('t_ready', { title: 'Write the user docs', dependsOn: ['t_wait'] });
    expect((await within(form).findByTestId('task-fields-error')).textContent).toContain('dependency cycle');
    expect(fakeApi.board.assign).not.toHaveBeenCalled();
    expect((title as HTMLInputElement).value).toBe('Write the user docs'); // the edit is kept

    vi.mocked(fakeApi.board.update).mockResolvedValue({ ...ready, title: 'Write the user docs' });
    vi.mocked(fakeApi.board.assign).mockResolvedValue({ ...ready, title: 'Write the user docs', assigneeId: 'ag_mgr' });
    await userEvent.click(within(form).getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(fakeApi.board.assign).toHaveBeenCalledWith('t_ready', 'ag_mgr'));
  });

  it('asks the assignee about the task in a new conversation and opens it', async () => {
    vi.mocked(fakeApi.board.detail).mockResolvedValue(detail(ready));
    vi.mocked(fakeApi.chat.startAboutTask).mockResolvedValue({ id: 'cv_9' } as never);
    renderPage({ project: 'prj_web', task: 't_ready', agent: null });
    await userEvent.click(await screen.findByTestId('ask-assignee'));
    const form = screen.getByTestId('ask-form');
    await userEvent.type(within(form).getByLabelText('Message'), 'Is it on track?');
    await userEvent.click(within(form).getByRole('button', { name: 'Start conversation' }));
    await waitFor(() => expect(fakeApi.chat.startAboutTask).toHaveBeenCalledWith('t_ready', 'Is it on track?'));
    await waitFor(() => expect(location.hash).toBe('#/chat/cv_9'));
  });

  it('moves a task under another task, and out again', async () => {
    vi.mocked(fakeApi.board.detail).mockResolvedValue(detail(ready));
    vi.mocked(fakeApi.board.update).mockResolvedValue({ ...ready, parentTaskId: 't_wait' });
    renderPage({ project: 'prj_web', task: 't_ready', agent: null });
    const form = await screen.findByTestId('task-fields');
    const parent = within(form).getByLabelText('Part of') as HTMLSelectElement;
    expect(parent.value).toBe('');
    expect([...parent.options].some((o) => o.value === 't_ready')).toBe(false); // never itself
    await userEvent.selectOptions(parent, 't_wait');
    await userEvent.click(within(form).getByRole('button', { name: 'Save changes' }));
    expect(fakeApi.board.update).toHaveBeenCalledWith('t_ready', { parentTaskId: 't_wait' });
  });

  it('saves only what the person changed: a change made elsewhere while editing is kept', async () => {
    // Found by a new-user test: saving a description undid a manager's
    // assign_task made while the form was open.
    vi.mocked(fakeApi.board.detail).mockResolvedValue(detail(ready));
    renderPage({ project: 'prj_web', task: 't_ready', agent: null });
    const form = await screen.findByTestId('task-fields');
    await userEvent.type(within(form).getByLabelText('Description'), ' More.');
    const reassigned = { ...ready, assigneeId: 'ag_mgr', title: 'Renamed elsewhere' };
    vi.mocked(fakeApi.board.get).mockResolvedValue(board([reassigned, waiting, blocked]));
    vi.mocked(fakeApi.board.detail).mockResolvedValue(detail(reassigned));
    emit('board:changed', { projectId: 'prj_web', taskIds: ['t_ready'], reason: 'assigned', agentId: 'ag_mgr' });
    await waitFor(() => expect(fakeApi.board.detail).toHaveBeenCalledTimes(2));
    vi.mocked(fakeApi.board.update).mockResolvedValue({ ...reassigned, description: ready.description + ' More.' });
    await userEvent.click(within(form).getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(fakeApi.board.update).toHaveBeenCalledWith('t_ready', { description: ready.description + ' More.' }));
    expect(fakeApi.board.assign).not.toHaveBeenCalled();
  });

  it('follows agents\' changes live: the board and the open detail reload on board:changed', async () => {
    vi.mocked(fakeApi.board.detail).mockResolvedValue(detail(ready));
    renderPage({ project: 'prj_web', task: 't_ready', agent: null });
    await screen.findByTestId('task-detail');
    const done = { ...ready, status: 'done', result: 'success', summary: 'Docs are up.' };
    vi.mocked(fakeApi.board.get).mockResolvedValue(board([done, waiting, blocked]));
    vi.mocked(fakeApi.board.detail).mockResolvedValue(detail(done));
    emit('board:changed', { projectId: 'prj_web', taskIds: ['t_ready'], reason: 'completed', agentId: 'ag_bob' });
    await waitFor(() => expect(cardsIn('done')).toEqual(['t_ready']));
    await waitFor(() => expect(screen.getByTestId('task-result').textContent).toContain('Docs are up.'));
    expect(screen.getByTestId('detail-status').textContent).toBe('Done');
  });

  it('marks the cards of a suspended assignee, and unmarks them once it is resumed', async () => {
    const suspended = boardAgents.map((a) => (a.id === 'ag_bob' ? { ...a, status: 'suspended' } : a));
    vi.mocked(fakeApi.board.get).mockResolvedValue(board([ready, waiting, blocked], suspended));
    renderPage();
    await waitFor(() => expect(cardsIn('todo')).toContain('t_ready'));
    const mark = within(document.querySelector<HTMLElement>('[data-task-id="t_ready"]')!).getByTestId('task-assignee-hold');
    expect(mark.textContent).toBe('suspended');
    expect(mark.title).toContain('bob is suspended: it cannot work on this task until you resume it');
    expect(cardEl('t_ready').getAttribute('aria-label')).toContain('bob is suspended');
    // Only bob's card: mgr is active, t_wait has nobody.
    expect(screen.getAllByTestId('task-assignee-hold')).toHaveLength(1);
    vi.mocked(fakeApi.board.get).mockResolvedValue(board([ready, waiting, blocked]));
    emit('agents:changed', { agentIds: ['ag_bob'] });
    await waitFor(() => expect(screen.queryByTestId('task-assignee-hold')).toBeNull());
    expect(cardEl('t_ready').getAttribute('aria-label')).not.toContain('suspended');
  });
});
