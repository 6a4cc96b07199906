import { beforeEach, describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { emit, fakeApi, resetFakeApi } from '../../testing/fakeApi';
import { testStores } from '../../testing/stores';
import type { AuditRecord } from '../../api';
import ActivityPage from './ActivityPage.svelte';

vi.mock('../../api', async () => (await import('../../testing/fakeApi')).fakeApiModule());

function rec(id: number, over: Partial<AuditRecord> = {}): AuditRecord {
  return {
    id, time: new Date().toISOString(), agent: 'claude-code', session: 's1', server: 'everything', tool: `tool${id}`,
    arguments: '{"message":"hi"}', argsDigest: 'd', decision: 'allow', reason: 'rule r1', status: 'ok', latencyUs: 250, ...over,
  };
}

describe('ActivityPage', () => {
  beforeEach(() => resetFakeApi());

  it('exports the filtered calls as CSV', async () => {
    vi.mocked(fakeApi.ListActivity).mockResolvedValue([rec(1, { server: 'fs' })]);
    vi.mocked(fakeApi.ExportActivity).mockResolvedValue('id,time\n1,now\n');
    const created: Blob[] = [];
    URL.createObjectURL = vi.fn((b: Blob) => { created.push(b); return 'blob:x'; });
    URL.revokeObjectURL = vi.fn();
    const clicked = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => {});
    const { stores, context } = testStores();
    stores.activity.filter.server = 'fs';
    render(ActivityPage, { context });
    await screen.findByText('tool1');
    await userEvent.click(screen.getByRole('button', { name: 'Export CSV' }));
    await waitFor(() => expect(fakeApi.ExportActivity).toHaveBeenCalledWith({ server: 'fs' }, 'csv'));
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

  it('prepends live records from activity:new, newest on top', async () => {
    vi.mocked(fakeApi.ListActivity).mockResolvedValue([rec(2), rec(1)]);
    const { stores, context } = testStores();
    const off = stores.activity.connect();
    render(ActivityPage, { context });
    await screen.findByText('tool2');
    emit('activity:new', [rec(3), rec(4)]);
    await waitFor(() => {
      const tools = screen.getAllByTestId('activity-row').map((r) => r.querySelectorAll('td')[3].textContent);
      expect(tools).toEqual(['tool4', 'tool3', 'tool2', 'tool1']);
    });
    off();
  });

  it('does not prepend live records that the filter excludes', async () => {
    vi.mocked(fakeApi.ListActivity).mockResolvedValue([rec(1, { decision: 'declined' })]);
    const { stores, context } = testStores();
    const off = stores.activity.connect();
    render(ActivityPage, { context });
    await screen.findByText('tool1');
    await userEvent.selectOptions(screen.getByLabelText('Filter by decision'), 'declined');
    await waitFor(() => expect(fakeApi.ListActivity).toHaveBeenLastCalledWith({ limit: 100, decision: 'declined' }));
    emit('activity:new', [rec(5, { decision: 'allow' })]);
    await new Promise((r) => setTimeout(r, 10));
    expect(screen.queryByText('tool5')).toBeNull();
    off();
  });

  it('opens the detail of a row with its arguments', async () => {
    vi.mocked(fakeApi.ListActivity).mockResolvedValue([rec(1, { decision: 'declined', reason: 'declined by owner: not now', status: 'tool_error' })]);
    const { context } = testStores();
    render(ActivityPage, { context });
    await userEvent.click(await screen.findByText('tool1'));
    expect(JSON.parse(screen.getByTestId('activity-args').textContent!)).toEqual({ message: 'hi' });
    expect(screen.getByText('declined by owner: not now')).toBeTruthy();
  });

  it('explains how to connect an agent when empty', async () => {
    const { context } = testStores();
    render(ActivityPage, { context, props: { onconnect: () => {} } });
    expect(await screen.findByText('No tool calls yet')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Connect an agent' })).toBeTruthy();
  });
});
