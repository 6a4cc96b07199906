import { beforeEach, describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor } from '@testing-library/svelte';
import { emit, fakeApi, resetFakeApi, triggerUnauthorized } from './lib/testing/fakeApi';
import type { Approval } from './lib/api';
import App from './App.svelte';

vi.mock('./lib/api', async () => (await import('./lib/testing/fakeApi')).fakeApiModule());

const approval = (id: string, tool: string): Approval => ({
  id, agent: 'cursor', session: 's', server: 'everything', tool, exposedName: `everything__${tool}`, arguments: {},
  risk: 'unknown', warning: '', reason: 'no rule matched', ruleSetVersion: 1, createdAt: new Date().toISOString(),
  deadline: new Date(Date.now() + 60_000).toISOString(), status: 'pending',
});

describe('App shell', () => {
  beforeEach(() => {
    resetFakeApi();
    location.hash = '#/activity';
  });

  it('opens the approval dialog on approval:requested from any screen and badges the queue', async () => {
    render(App);
    await screen.findByRole('heading', { name: 'Activity' });
    emit('approval:requested', approval('a1', 'echo'));
    expect((await screen.findByTestId('approval-tool')).textContent).toBe('echo');
    expect(screen.getByTestId('approvals-badge').textContent).toBe('1');
    emit('approval:requested', approval('a2', 'get-sum'));
    await waitFor(() => expect(screen.getByTestId('approvals-badge').textContent).toBe('2'));
    expect(screen.getByTestId('approval-tool').textContent).toBe('echo'); // the shown call stays put
    expect(screen.getByTestId('queue-position').textContent).toBe('1 of 2');
    expect(document.title).toContain('(2)');
    emit('approval:resolved', { ...approval('a1', 'echo'), status: 'approved' });
    await waitFor(() => expect(screen.getByTestId('approval-tool').textContent).toBe('get-sum'));
  });

  it('opens the dialog at start when calls are already waiting', async () => {
    vi.mocked(fakeApi.ListApprovals).mockResolvedValue([approval('a9', 'slow')]);
    render(App);
    expect((await screen.findByTestId('approval-tool')).textContent).toBe('slow');
  });

  it('shows the expired-link message on 401', async () => {
    render(App);
    triggerUnauthorized();
    expect(
      (await screen.findByRole('alert')).textContent!.replace(/\s+/g, ' '),
    ).toContain('This Airlock UI link has expired or is missing its token. Open the URL printed by airlock serve.');
  });
});
