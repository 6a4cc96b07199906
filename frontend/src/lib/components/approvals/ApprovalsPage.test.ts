import { beforeEach, describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { fakeApi, resetFakeApi } from '../../testing/fakeApi';
import { testStores } from '../../testing/stores';
import type { Approval } from '../../api';
import ApprovalsPage from './ApprovalsPage.svelte';

vi.mock('../../api', async () => (await import('../../testing/fakeApi')).fakeApiModule());

function approval(id: string, args: unknown): Approval {
  return {
    id, kind: 'tools/call', agent: 'worker-a', agentId: 'agt_1', client: 'claude-code', clientVersion: '2.1.0', purpose: 'task', session: 's', server: 'filesystem',
    tool: 'write_file', exposedName: 'filesystem__write_file', arguments: args, risk: 'destructive', warning: '', ruleId: '', reason: 'no rule matched',
    ruleSetVersion: 1, createdAt: new Date().toISOString(), deadline: new Date(Date.now() + 60_000).toISOString(), status: 'pending',
  };
}

async function setup(queue: Approval[]) {
  vi.mocked(fakeApi.approvals.pending).mockResolvedValue(queue);
  const { stores, context } = testStores();
  render(ApprovalsPage, { context });
  await waitFor(() => expect(screen.getAllByTestId('approval-row')).toHaveLength(queue.length));
  return stores;
}

describe('ApprovalsPage', () => {
  beforeEach(() => resetFakeApi());

  it('shows each waiting call with its arguments on one line', async () => {
    const long = 'x'.repeat(500);
    await setup([approval('a1', { path: '/tmp/notes.txt' }), approval('a2', { content: long }), approval('a3', {})]);
    const cells = screen.getAllByTestId('approval-row-args');
    expect(cells[0].textContent).toBe('{"path":"/tmp/notes.txt"}');
    expect(cells[1].textContent!.length).toBeLessThan(100);
    expect(cells[1].textContent!.endsWith('…')).toBe(true);
    expect(cells[1].getAttribute('title')).toContain('xxxx');
    expect(cells[2].textContent).toBe('—');
  });

  it('declines every waiting call after asking once more, and only those', async () => {
    const stores = await setup([approval('a1', {}), approval('a2', {})]);
    await userEvent.click(screen.getByRole('button', { name: 'Decline all…' }));
    expect(fakeApi.approvals.decline).not.toHaveBeenCalled();
    // A call arriving while the person reads the question is not in the batch.
    stores.approvals.pending = [...stores.approvals.pending, approval('a3', {})];
    await userEvent.click(screen.getByRole('button', { name: 'Decline 2' }));
    await waitFor(() => expect(fakeApi.approvals.decline).toHaveBeenCalledTimes(2));
    expect(vi.mocked(fakeApi.approvals.decline).mock.calls.map((c) => c[0])).toEqual(['a1', 'a2']);
    await waitFor(() => expect(screen.getAllByTestId('approval-row')).toHaveLength(1));
    expect(screen.queryByRole('alertdialog')).toBeNull();
  });

  it('can be cancelled', async () => {
    await setup([approval('a1', {}), approval('a2', {})]);
    await userEvent.click(screen.getByRole('button', { name: 'Decline all…' }));
    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(fakeApi.approvals.decline).not.toHaveBeenCalled();
    // The keyboard goes back to the button that asked (found by a new-user test: it fell to the page).
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Decline all…' })));
    await userEvent.keyboard('{Enter}');
    await userEvent.keyboard('{Escape}');
    expect(screen.queryByRole('alertdialog')).toBeNull();
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Decline all…' })));
  });
});
