import { beforeEach, describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { emit, fakeApi, resetFakeApi, resync } from '../../testing/fakeApi';
import { testStores } from '../../testing/stores';
import type { AuditRecord } from '../../api';
import ActivityPage from './ActivityPage.svelte';

vi.mock('../../api', async () => (await import('../../testing/fakeApi')).fakeApiModule());

function rec(id: number, over: Partial<AuditRecord> = {}): AuditRecord {
  return {
    id, time: new Date().toISOString(), kind: 'tools/call', agent: 'owner', agentId: 'owner', client: 'claude-code', clientVersion: '2.1.0', session: 's1', server: 'everything', tool: `tool${id}`,
    arguments: '{"message":"hi"}', argsDigest: 'd', decision: 'allow', reason: 'rule r1', status: 'ok', latencyUs: 250, ...over,
  };
}

describe('ActivityPage', () => {
  beforeEach(() => resetFakeApi());

  it('exports the filtered calls as CSV', async () => {
    vi.mocked(fakeApi.activity.list).mockResolvedValue([rec(1, { server: 'fs' })]);
    vi.mocked(fakeApi.activity.export).mockResolvedValue('id,time\n1,now\n');
    const created: Blob[] = [];
    URL.createObjectURL = vi.fn((b: Blob) => { created.push(b); return 'blob:x'; });
    URL.revokeObjectURL = vi.fn();
    const clicked = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => {});
    const { stores, context } = testStores();
    stores.activity.filter.server = 'fs';
    render(ActivityPage, { context });
    await screen.findByText('tool1');
    await userEvent.click(screen.getByRole('button', { name: 'Export CSV' }));
    await waitFor(() => expect(fakeApi.activity.export).toHaveBeenCalledWith({ server: 'fs' }, 'csv'));
    await waitFor(() => expect(created.length).toBe(1));
    expect(clicked).toHaveBeenCalled();
    const text = await new Promise<string>((resolve) => {
      const r = new FileReader();
      r.onload = () => resolve(String(r.result));
      r.readAsText(created[0]);
    });
    expect(text).toBe('id,time\n1,now\n');
    clicked.mockRestore();
  });

  const tools = () => screen.getAllByTestId('activity-row').map((r) => r.querySelector('[data-testid=activity-tool]')!.textContent);

  it('adds live records from activity:new, newest (highest id) on top', async () => {
    vi.mocked(fakeApi.activity.list).mockResolvedValue([rec(2), rec(1)]);
    const { context } = testStores();
    render(ActivityPage, { context });
    await screen.findByText('tool2');
    emit('activity:new', [rec(3), rec(4)]);
    await waitFor(() => expect(tools()).toEqual(['tool4', 'tool3', 'tool2', 'tool1']));
  });

  it('sorts by id (arrival), not by when a request finished', async () => {
    // A long call (id 1) that finished after a short one (id 2) stays below it.
    vi.mocked(fakeApi.activity.list).mockResolvedValue([rec(1), rec(3), rec(2)]);
    const { context } = testStores();
    render(ActivityPage, { context });
    await screen.findByText('tool3');
    expect(tools()).toEqual(['tool3', 'tool2', 'tool1']);
    emit('activity:new', [rec(1, { latencyUs: 9_000_000 })]);
    await waitFor(() => expect(screen.getAllByTestId('activity-row')[2].textContent).toContain('9.00 s'));
    expect(tools()).toEqual(['tool3', 'tool2', 'tool1']);
  });

  it('turns a running row into its result in place, and never back', async () => {
    const { context } = testStores();
    render(ActivityPage, { context });
    await screen.findByText('No requests yet');
    emit('activity:new', [rec(7, { status: 'running', decision: '', latencyUs: 0 })]);
    const row = await screen.findByTestId('activity-row');
    expect(row.dataset.status).toBe('running');
    expect(row.textContent).toContain('running…');
    emit('activity:new', [rec(7, { status: 'ok', decision: 'approved', latencyUs: 1500 })]);
    await waitFor(() => expect(screen.getByTestId('activity-row').dataset.status).toBe('ok'));
    expect(screen.getAllByTestId('activity-row')).toHaveLength(1);
    expect(screen.getByTestId('activity-row').textContent).toContain('approved');
    // A late copy of the start must not undo the end.
    emit('activity:new', [rec(7, { status: 'running', decision: '' })]);
    // Events apply in order: once a later record shows, the late copy has
    // been handled.
    emit('activity:new', [rec(8, { tool: 'tool8' })]);
    await screen.findByText('tool8');
    const rows = screen.getAllByTestId('activity-row');
    expect(rows).toHaveLength(2);
    expect(rows.find((r) => !r.textContent?.includes('tool8'))?.dataset.status).toBe('ok');
  });

  it('shows the agent and the MCP client as two fields', async () => {
    vi.mocked(fakeApi.activity.list).mockResolvedValue([rec(1, { agent: 'inspector', client: 'inspector-cli', clientVersion: '2.12.0' })]);
    const { context } = testStores();
    render(ActivityPage, { context });
    await screen.findByText('tool1');
    expect(screen.getByTestId('activity-agent').textContent).toBe('inspector');
    expect(screen.getByTestId('activity-client').textContent).toBe('inspector-cli 2.12.0');
  });

  it('links a refused agent\'s request to the setting that would change it', async () => {
    const refused = rec(3, { agent: 'bob', agentId: 'ag_bob', decision: 'denied', status: 'error', errorCode: 'not_subscribed', error: "Role 'default' of agent 'bob' has no grant for server 'everything'" });
    vi.mocked(fakeApi.activity.list).mockResolvedValue([refused, rec(2, { decision: 'declined', status: 'error', errorCode: 'declined' })]);
    vi.mocked(fakeApi.activity.get).mockImplementation(async (id) => (id === 3 ? refused : rec(2)));
    const { context } = testStores();
    render(ActivityPage, { context });
    await userEvent.click(await screen.findByText('tool3'));
    const link = await screen.findByTestId('detail-setting');
    expect(link.textContent).toBe('Agents → bob → Role');
    expect(link.getAttribute('href')).toBe('#/agents/ag_bob?tab=role');
    await userEvent.click(screen.getByText('tool2'));
    await waitFor(() => expect(screen.queryByTestId('detail-setting')).toBeNull());
  });

  it('filters by kind and labels prompts and resource reads', async () => {
    vi.mocked(fakeApi.activity.list).mockResolvedValue([rec(1, { kind: 'resources/read', tool: 'file:///notes.md' })]);
    const { context } = testStores();
    render(ActivityPage, { context });
    await screen.findByText('file:///notes.md');
    expect(screen.getByTestId('activity-kind').textContent).toBe('resource');
    await userEvent.selectOptions(screen.getByLabelText('Filter by kind'), 'prompts/get');
    await waitFor(() => expect(fakeApi.activity.list).toHaveBeenLastCalledWith({ limit: 100, kind: 'prompts/get' }));
  });

  it('words decisions alike in the filter and the badges, and shows no latency for a call that never ran (found by a new-user test)', async () => {
    vi.mocked(fakeApi.activity.list).mockResolvedValue([rec(1, { decision: 'expired', status: 'error', latencyUs: 0, waitMs: 13300 })]);
    const { context } = testStores();
    render(ActivityPage, { context });
    await waitFor(() => expect(document.querySelector('tbody [data-decision="expired"]')).not.toBeNull());
    const row = document.querySelector('tbody [data-decision="expired"]')!.closest('tr')!;
    expect(row.textContent).not.toContain('0 µs');
    const options = [...(screen.getByLabelText('Filter by decision') as HTMLSelectElement).options].map((o) => o.textContent);
    expect(options).toContain('auto-allowed');
    expect(options).toContain('timed out');
    await userEvent.selectOptions(screen.getByLabelText('Filter by decision'), 'timed out');
    await waitFor(() => expect(fakeApi.activity.list).toHaveBeenLastCalledWith({ limit: 100, decision: 'timeout' }));
  });

  it('labels a call the agent cancelled as cancelled, not as an error (found by a new-user test)', async () => {
    vi.mocked(fakeApi.activity.list).mockResolvedValue([rec(1, { decision: 'error', status: 'error', errorCode: 'cancelled' })]);
    const { context } = testStores();
    render(ActivityPage, { context });
    await waitFor(() => expect(document.querySelector('tbody [data-decision="error"]')?.textContent).toBe('cancelled'));
  });

  it('reloads when events may have been missed', async () => {
    const { context } = testStores();
    render(ActivityPage, { context });
    await screen.findByText('No requests yet');
    vi.mocked(fakeApi.activity.list).mockResolvedValue([rec(5)]);
    resync();
    expect(await screen.findByText('tool5')).toBeTruthy();
  });

  it('does not add live records that the filter excludes', async () => {
    vi.mocked(fakeApi.activity.list).mockResolvedValue([rec(1, { decision: 'declined' })]);
    const { context } = testStores();
    render(ActivityPage, { context });
    await screen.findByText('tool1');
    await userEvent.selectOptions(screen.getByLabelText('Filter by decision'), 'declined');
    await waitFor(() => expect(fakeApi.activity.list).toHaveBeenLastCalledWith({ limit: 100, decision: 'declined' }));
    emit('activity:new', [rec(5, { decision: 'allow' })]);
    // Events apply in order: once a later matching record shows, the
    // excluded one has been handled.
    emit('activity:new', [rec(6, { decision: 'declined' })]);
    await screen.findByText('tool6');
    expect(screen.queryByText('tool5')).toBeNull();
  });

  it('opens the detail of a row with the whole record from Activity.Get', async () => {
    const long = JSON.stringify({ message: 'x'.repeat(3000) });
    vi.mocked(fakeApi.activity.list).mockResolvedValue([rec(1, { decision: 'declined', reason: 'declined by owner: not now', status: 'tool_error', arguments: long.slice(0, 2048) + '…(cut)' })]);
    vi.mocked(fakeApi.activity.get).mockResolvedValue(rec(1, { decision: 'declined', reason: 'declined by owner: not now', status: 'tool_error', arguments: long }));
    const { context } = testStores();
    render(ActivityPage, { context });
    await userEvent.click(await screen.findByText('tool1'));
    expect(fakeApi.activity.get).toHaveBeenCalledWith(1);
    await waitFor(() => expect(JSON.parse(screen.getByTestId('activity-args').textContent!)).toEqual({ message: 'x'.repeat(3000) }));
    expect(screen.getByText('declined by owner: not now')).toBeTruthy();
    expect(screen.getByTestId('detail-agent').textContent).toBe('owner');
    expect(screen.getByTestId('detail-client').textContent).toBe('claude-code 2.1.0');
  });

  it('opens a row with the keyboard and moves with the arrows', async () => {
    vi.mocked(fakeApi.activity.list).mockResolvedValue([rec(2), rec(1)]);
    vi.mocked(fakeApi.activity.get).mockImplementation(async (id) => rec(id));
    const { context } = testStores();
    render(ActivityPage, { context });
    await screen.findByText('tool2');
    screen.getAllByTestId('activity-row')[0].focus();
    await userEvent.keyboard('{Enter}');
    await waitFor(() => expect(screen.getByRole('complementary', { name: 'Request detail' }).textContent).toContain('tool2'));
    await userEvent.keyboard('{ArrowDown}');
    await waitFor(() => expect(screen.getByRole('complementary', { name: 'Request detail' }).textContent).toContain('tool1'));
    await userEvent.keyboard('{Escape}');
    await waitFor(() => expect(screen.queryByRole('complementary', { name: 'Request detail' })).toBeNull());
  });

  it('explains how to connect an agent when empty', async () => {
    const { context } = testStores();
    render(ActivityPage, { context, props: { onconnect: () => {} } });
    expect(await screen.findByText('No requests yet')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Connect an agent' })).toBeTruthy();
  });
});
