import { beforeEach, describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { ApiError } from '../../api';
import type { Approval, AgentView } from '../../api';
import { emit, fakeApi, resetFakeApi } from '../../testing/fakeApi';
import { agentView } from '../../testing/agents';
import { profile, run } from '../../testing/runs';
import { testStores } from '../../testing/stores';
import TaskRunsPanel from './TaskRunsPanel.svelte';

vi.mock('../../api', async () => (await import('../../testing/fakeApi')).fakeApiModule());

const token = { id: 'tok_1', agentId: 'ag_bob', prefix: 'alk_x', legacy: false, createdAt: '' };
const owner = agentView('ag_owner', 'owner', 'owner', undefined, { human: true });
const bob = agentView('ag_bob', 'bob', 'worker', 'ag_owner', { tokens: [token] });
const ann = agentView('ag_ann', 'ann', 'worker', 'ag_owner', { human: true });

async function renderPanel(assigneeId = 'ag_bob', agents: AgentView[] = [owner, bob, ann]) {
  vi.mocked(fakeApi.agents.list).mockResolvedValue(agents);
  vi.mocked(fakeApi.agents.roles).mockResolvedValue([]);
  vi.mocked(fakeApi.agents.projects).mockResolvedValue([]);
  const { stores, context } = testStores();
  const offs = [stores.runs.connect(), stores.approvals.connect()];
  await stores.agents.load();
  const r = render(TaskRunsPanel, { context, props: { task: { id: 'tk_1', assigneeId } } });
  return { stores, offs, ...r };
}

function approval(more: Partial<Approval> = {}): Approval {
  return {
    id: 'ap_1', kind: 'tools/call', agent: 'bob', agentId: 'ag_bob', session: 's', server: 'file-write', tool: 'file_write', exposedName: 'file-write__file_write',
    arguments: {}, risk: 'modifies', warning: '', ruleId: '', reason: '', ruleSetVersion: 1, createdAt: '', deadline: '2099-01-01T00:00:00Z', status: 'pending', ...more,
  };
}

describe('TaskRunsPanel', () => {
  beforeEach(() => {
    resetFakeApi();
    vi.mocked(fakeApi.runs.profiles).mockResolvedValue([profile('ag_bob', { template: 'scripted', extraArgs: ['/s.yaml'] })]);
  });

  it('offers Run for a task of an AI agent with a profile; a refused start shows its reason at once, with where to fix it', async () => {
    vi.mocked(fakeApi.runs.start).mockRejectedValue(new ApiError('command_not_found', 'the command /nonexistent/agent does not exist', 'check the command of the agent\'s run profile'));
    await renderPanel();
    const button = await screen.findByTestId('run-button');
    await waitFor(() => expect(button).toHaveProperty('disabled', false));
    await userEvent.click(button);
    const refusal = await screen.findByTestId('run-refusal');
    expect(refusal.getAttribute('data-code')).toBe('command_not_found');
    expect(refusal.textContent).toContain('the command /nonexistent/agent does not exist');
    expect(refusal.textContent).toContain('check the command of the agent\'s run profile');
    expect(within(refusal).getByRole('link', { name: 'Open bob\'s run profile' }).getAttribute('href')).toBe('#/agents/ag_bob?tab=run');
    expect(fakeApi.runs.start).toHaveBeenCalledWith('tk_1');
    await userEvent.click(within(refusal).getByRole('button', { name: 'Dismiss' }));
    expect(screen.queryByTestId('run-refusal')).toBeNull();
  });

  it.each([
    ['no assignee', '', 'Assign the task to an AI agent first', null],
    ['a person', 'ag_ann', 'ann is a person', null],
    ['an agent without a profile', 'ag_carl', 'carl has no run profile', '#/agents/ag_carl?tab=run'],
  ])('turns Run off, saying why: %s', async (_name, assignee, reason, href) => {
    const carl = agentView('ag_carl', 'carl', 'worker', 'ag_owner', { tokens: [token] });
    await renderPanel(assignee, [owner, bob, ann, carl]);
    const why = await screen.findByTestId('run-blocker');
    await waitFor(() => expect(why.textContent).toContain(reason));
    expect(screen.getByTestId('run-button')).toHaveProperty('disabled', true);
    expect(screen.getByTestId('run-button').getAttribute('title')).toContain(reason);
    if (href) expect(within(why).getByRole('link').getAttribute('href')).toBe(href);
  });

  it('shows the live run: its output as it streams, the latest call, a call waiting for approval, and Stop after a confirmation', async () => {
    vi.mocked(fakeApi.runs.list).mockResolvedValue([run('rn_1'), run('rn_0', { status: 'failed', exitCode: 1, startedAt: '2026-01-01T09:00:00Z', endedAt: '2026-01-01T09:00:04Z', trigger: 'auto', attempt: 1, reason: 'exit status 1; auto-run tries again in 30s (attempt 2 of 3)' })]);
    vi.mocked(fakeApi.runs.log).mockResolvedValue({ runId: 'rn_1', status: 'running', lines: ['[2026-01-01T10:00:00Z] [airlock] run rn_1 of task tk_1'], totalLines: 1, offset: 0, truncated: false });
    vi.mocked(fakeApi.runs.stop).mockResolvedValue(run('rn_1', { status: 'stopped', exitCode: 143, endedAt: '2026-01-01T10:01:00Z', reason: 'stopped by the user' }));
    const { stores } = await renderPanel();

    const live = await screen.findByTestId('live-run');
    expect(live.getAttribute('data-run-id')).toBe('rn_1');
    expect(within(live).getByRole('progressbar')).toBeTruthy();
    await waitFor(() => expect(within(live).getAllByTestId('output-line')).toHaveLength(1));
    emit('run:output', { runId: 'rn_1', taskId: 'tk_1', lines: ['[2026-01-01T10:00:01Z] step 1: call get_next_action', '[2026-01-01T10:00:02Z] ok'], first: 1 });
    await waitFor(() => expect(within(live).getAllByTestId('output-line')).toHaveLength(3));
    expect(within(live).getAllByTestId('output-line')[2].textContent).toMatch(/ok$/);

    expect(screen.getByTestId('last-tool').textContent).toContain('none yet');
    emit('run:status', run('rn_1', { lastTool: { server: 'file-write', tool: 'file_write', status: 'running', at: new Date().toISOString() }, sessions: ['s'] }));
    await waitFor(() => expect(screen.getByTestId('last-tool').textContent).toContain('file-write__file_write'));
    expect(screen.getByTestId('last-tool').textContent).toContain('in progress');

    // A call its agent makes over another connection is not the run's.
    stores.approvals.requested(approval({ id: 'ap_elsewhere', session: 'elsewhere', exposedName: 'shell__exec' }));
    stores.approvals.requested(approval());
    const waiting = await screen.findByTestId('run-waiting-approval');
    expect(screen.getAllByTestId('run-waiting-approval')).toHaveLength(1);
    expect(waiting.textContent).toContain('file-write__file_write');
    await userEvent.click(within(waiting).getByRole('button', { name: 'Review' }));
    expect(stores.approvals.dialogOpen).toBe(true);

    // The earlier automatic run says what auto-run does next.
    const earlier = screen.getByTestId('run-row');
    expect(earlier.getAttribute('data-status')).toBe('failed');
    expect(within(earlier).getByTestId('run-reason').textContent).toContain('tries again in 30s (attempt 2 of 3)');
    expect(earlier.textContent).toContain('exit 1');
    expect(earlier.textContent).toContain('auto #1');

    await userEvent.click(within(screen.getByTestId('task-runs-panel')).getByRole('button', { name: 'Stop' }));
    expect(fakeApi.runs.stop, 'Stop asks first').not.toHaveBeenCalled();
    await userEvent.click(screen.getByRole('button', { name: 'Stop run' }));
    expect(fakeApi.runs.stop).toHaveBeenCalledWith('rn_1');
    await waitFor(() => expect(screen.queryByTestId('live-run')).toBeNull());
    // The run that ended here stays open with its output.
    const row = screen.getAllByTestId('run-row').find((r) => r.getAttribute('data-run-id') === 'rn_1')!;
    expect(row.getAttribute('data-status')).toBe('stopped');
    expect(within(row).getByTestId('run-reason').textContent).toBe('stopped by the user');
    expect(within(row).getAllByTestId('output-line')).toHaveLength(3);
    expect(screen.getByTestId('run-button')).toBeTruthy();
  });

  it('opens an ended run\'s log on demand', async () => {
    vi.mocked(fakeApi.runs.list).mockResolvedValue([run('rn_0', { status: 'completed', exitCode: 0, endedAt: '2026-01-01T10:00:09Z' })]);
    vi.mocked(fakeApi.runs.log).mockResolvedValue({ runId: 'rn_0', status: 'completed', lines: ['[2026-01-01T10:00:01Z] all 5 steps passed'], totalLines: 40, offset: 39, truncated: true });
    const { rerender } = await renderPanel();
    const row = await screen.findByTestId('run-row');
    expect(row.textContent).toContain('exit 0');
    expect(within(row).queryByTestId('run-output')).toBeNull();
    await userEvent.click(within(row).getByRole('button', { expanded: false }));
    await waitFor(() => expect(within(row).getByTestId('run-output').textContent).toContain('all 5 steps passed'));
    expect(within(row).getByTestId('run-output').textContent).toContain('39 earlier lines are in the log file');
    expect(fakeApi.runs.log).toHaveBeenCalledWith('rn_0', { tail: 500, offset: null });

    // The board hands over a fresh card object on each refresh: nothing starts over.
    await rerender({ task: { id: 'tk_1', assigneeId: 'ag_bob' } });
    expect(within(row).getByTestId('run-output').textContent).toContain('all 5 steps passed');
    expect(fakeApi.runs.list).toHaveBeenCalledTimes(1);
  });

  it('shows a failed run\'s last lines of output next to its exit status, without Airlock\'s own', async () => {
    vi.mocked(fakeApi.runs.list).mockResolvedValue([
      run('rn_1', { status: 'failed', exitCode: 1, endedAt: '2026-01-01T10:00:09Z', reason: 'exit status 1' }),
      run('rn_0', { status: 'completed', exitCode: 0, startedAt: '2026-01-01T09:00:00Z', endedAt: '2026-01-01T09:00:09Z' }),
    ]);
    vi.mocked(fakeApi.runs.log).mockResolvedValue({
      runId: 'rn_1', status: 'failed', totalLines: 12, offset: 7, truncated: true,
      lines: [
        '[2026-01-01T10:00:01Z] [airlock] started, process 42',
        '[2026-01-01T10:00:02Z] connecting to http://127.0.0.1:4750/mcp',
        '[2026-01-01T10:00:08Z] Error: invalid API key',
        '[2026-01-01T10:00:08Z]     at main (cli.js:12)',
        '[2026-01-01T10:00:09Z] [airlock] ended: failed (exit status 1)',
      ],
    });
    await renderPanel();
    const failed = (await screen.findAllByTestId('run-row')).find((r) => r.dataset.runId === 'rn_1')!;
    const last = await within(failed).findByTestId('run-last-output');
    expect(last.querySelector('pre')!.textContent).toBe('connecting to http://127.0.0.1:4750/mcp\nError: invalid API key\n    at main (cli.js:12)');
    expect(fakeApi.runs.log).toHaveBeenCalledWith('rn_1', { tail: 50, offset: null });
    expect(fakeApi.runs.log, 'a completed run\'s log is not read until opened').toHaveBeenCalledTimes(1);
    const completed = screen.getAllByTestId('run-row').find((r) => r.dataset.runId === 'rn_0')!;
    expect(within(completed).queryByTestId('run-last-output')).toBeNull();
  });

  it('says a run is stopping, with Stop disabled, until a process that ignores SIGTERM has ended', async () => {
    vi.mocked(fakeApi.runs.list).mockResolvedValue([run('rn_1')]);
    vi.mocked(fakeApi.runs.log).mockResolvedValue({ runId: 'rn_1', status: 'running', lines: [], totalLines: 0, offset: 0, truncated: false });
    let end!: (r: ReturnType<typeof run>) => void;
    vi.mocked(fakeApi.runs.stop).mockReturnValue(new Promise((r) => (end = r)));
    await renderPanel();
    const live = await screen.findByTestId('live-run');
    await userEvent.click(within(screen.getByTestId('task-runs-panel')).getByRole('button', { name: 'Stop' }));
    await userEvent.click(screen.getByRole('button', { name: 'Stop run' }));
    const stopping = await screen.findByTestId('run-stopping');
    expect(stopping.textContent).toContain('Stopping…');
    expect(stopping).toHaveProperty('disabled', true);
    expect(stopping.getAttribute('aria-busy')).toBe('true');
    expect(within(live).getByTestId('run-status').textContent).toBe('stopping');
    expect(within(live).getByTestId('run-stop-note').textContent).toContain('SIGKILL after');
    expect(screen.queryByRole('button', { name: 'Stop run' }), 'no second stop while the first one runs').toBeNull();

    end(run('rn_1', { status: 'stopped', exitCode: 137, endedAt: '2026-01-01T10:01:00Z', reason: 'stopped by the user' }));
    await waitFor(() => expect(screen.queryByTestId('live-run')).toBeNull());
    expect(screen.queryByTestId('run-stopping')).toBeNull();
    expect(screen.getByTestId('run-row').getAttribute('data-status')).toBe('stopped');
  });

  it('shows a run started elsewhere (auto-run, another window) as it starts', async () => {
    await renderPanel();
    await screen.findByTestId('run-button');
    vi.mocked(fakeApi.runs.log).mockResolvedValue({ runId: 'rn_7', status: 'running', lines: [], totalLines: 0, offset: 0, truncated: false });
    emit('run:status', run('rn_7', { trigger: 'auto', attempt: 1 }));
    const live = await screen.findByTestId('live-run');
    expect(live.textContent).toContain('auto-run, attempt 1');
    expect(screen.queryByTestId('run-button')).toBeNull();
  });

  it('keeps the runs of an agent deleted since, naming it so', async () => {
    vi.mocked(fakeApi.runs.list).mockResolvedValue([run('rn_0', { agentId: 'ag_gone', status: 'completed', exitCode: 0, endedAt: '2026-01-01T10:01:00Z' })]);
    await renderPanel();
    const row = await screen.findByTestId('run-row');
    expect(row.querySelector('.who')?.textContent).toBe('a deleted agent');
    expect(row.querySelector('.who')?.getAttribute('title')).toBe('ag_gone');
  });
});
