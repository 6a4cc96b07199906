import { beforeEach, describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { emit, fakeApi, resetFakeApi, subscribedEvents, triggerUnauthorized } from './lib/testing/fakeApi';
import type { Approval } from './lib/api';
import App from './App.svelte';

vi.mock('./lib/api', async () => (await import('./lib/testing/fakeApi')).fakeApiModule());

const approval = (id: string, tool: string): Approval => ({
  id, kind: 'tools/call', agent: 'cursor', session: 's', ruleId: '', server: 'everything', tool, exposedName: `everything__${tool}`, arguments: {},
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
    vi.mocked(fakeApi.approvals.pending).mockResolvedValue([approval('a9', 'slow')]);
    render(App);
    expect((await screen.findByTestId('approval-tool')).textContent).toBe('slow');
  });

  it('puts the keyboard on "Review N waiting" when Escape closes a dialog that popped up over nothing, and back where it was otherwise', async () => {
    render(App);
    await screen.findByRole('heading', { name: 'Activity' });
    (document.activeElement as HTMLElement | null)?.blur();
    emit('approval:requested', approval('a1', 'echo'));
    await screen.findByTestId('approval-tool');
    await userEvent.keyboard('{Escape}');
    const back = await screen.findByRole('button', { name: 'Review 1 waiting' });
    await waitFor(() => expect(document.activeElement).toBe(back));
    await userEvent.keyboard('{Enter}');
    await screen.findByTestId('approval-tool');

    // Typing somewhere when it popped up: Escape gives that place its focus back.
    await userEvent.keyboard('{Escape}');
    const search = screen.getAllByRole('textbox')[0];
    search.focus();
    emit('approval:requested', approval('a2', 'get-sum'));
    await waitFor(() => expect(screen.queryByTestId('approval-tool')).not.toBeNull());
    await userEvent.keyboard('{Escape}');
    await waitFor(() => expect(document.activeElement).toBe(search));
  });

  it('says what became of the call on screen when it ends without the person: the next one, or a notice when none is left (found by a new-user test)', async () => {
    render(App);
    await screen.findByRole('heading', { name: 'Activity' });
    emit('approval:requested', { ...approval('a1', 'echo'), agent: 'alice' });
    emit('approval:requested', approval('a2', 'get-sum'));
    await screen.findByTestId('approval-tool');
    emit('approval:resolved', { ...approval('a1', 'echo'), agent: 'alice', status: 'cancelled' });
    expect((await screen.findByTestId('approval-withdrawn')).textContent).toContain('The call echo from alice was cancelled: the agent stopped waiting for it. This is the next one');
    emit('approval:resolved', { ...approval('a2', 'get-sum'), status: 'timeout' });
    const notice = await screen.findByTestId('approval-notice');
    expect(screen.queryByTestId('approval-tool')).toBeNull();
    expect(notice.getAttribute('role')).toBe('alert');
    expect(notice.textContent).toContain('The call get-sum from cursor timed out waiting for you and was declined');
    await userEvent.click(within(notice).getByRole('button', { name: 'Dismiss' }));
    expect(screen.queryByTestId('approval-notice')).toBeNull();

    // Another screen puts the notice away: it covered that screen's buttons.
    emit('approval:requested', approval('a4', 'echo'));
    await screen.findByTestId('approval-tool');
    emit('approval:resolved', { ...approval('a4', 'echo'), status: 'cancelled' });
    await screen.findByTestId('approval-notice');
    location.hash = '#/rules';
    window.dispatchEvent(new HashChangeEvent('hashchange'));
    await waitFor(() => expect(screen.queryByTestId('approval-notice')).toBeNull());
    location.hash = '#/activity';
    window.dispatchEvent(new HashChangeEvent('hashchange'));
    await screen.findByRole('heading', { name: 'Activity' });

    // A call this window decides itself leaves no notice.
    vi.mocked(fakeApi.approvals.decline).mockResolvedValue(undefined);
    emit('approval:requested', approval('a3', 'echo'));
    await screen.findByTestId('approval-tool');
    await userEvent.keyboard('{Escape}');
    emit('approval:resolved', { ...approval('a3', 'echo'), status: 'timeout' });
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Review 1 waiting' })).toBeNull());
    expect(screen.queryByTestId('approval-notice')).toBeNull(); // nobody was reading it
  });

  it('shows on every screen that the audit log cannot be written, and why', async () => {
    render(App);
    await screen.findByRole('heading', { name: 'Activity' });
    expect(screen.queryByTestId('audit-failed')).toBeNull();
    emit('audit:failed', { error: 'write audit.journal: no space left on device', at: '2026-01-01T10:00:00Z' });
    const banner = await screen.findByTestId('audit-failed');
    expect(banner.textContent).toContain('refuses');
    expect(banner.textContent).toContain('no space left on device');
    expect(banner.textContent).toContain('audit_unavailable');
    location.hash = '#/rules';
    await screen.findByRole('heading', { name: 'Rules' });
    expect(screen.getByTestId('audit-failed')).toBeTruthy();
    emit('audit:recovered', { failedAt: '2026-01-01T10:00:00Z', at: '2026-01-01T10:05:00Z' });
    await waitFor(() => expect(screen.queryByTestId('audit-failed')).toBeNull());
  });

  it('shows an audit failure that happened before the page opened', async () => {
    vi.mocked(fakeApi.system.auditStatus).mockResolvedValue({ lastFailure: { error: 'disk I/O error', at: '2026-01-01T10:00:00Z' } });
    render(App);
    expect((await screen.findByTestId('audit-failed')).textContent).toContain('disk I/O error');
  });

  it('subscribes only to the events of what it shows', async () => {
    location.hash = '#/servers';
    render(App);
    await screen.findByRole('heading', { name: 'Servers' });
    const shell = ['agents:changed', 'approval:requested', 'approval:resolved', 'audit:failed', 'audit:recovered', 'chat:conversation', 'chat:message', 'run:auto', 'run:output', 'run:status', 'server:status', 'servers:changed'];
    // The Servers screen counts the rules that name a server in its Remove question.
    await waitFor(() => expect(subscribedEvents()).toEqual([...shell, 'rules:changed'].sort()));
    location.hash = '#/activity';
    await screen.findByRole('heading', { name: 'Activity' });
    await waitFor(() => expect(subscribedEvents()).toEqual(['activity:new', ...shell].sort()));
    location.hash = '#/rules';
    await screen.findByRole('heading', { name: 'Rules' });
    await waitFor(() => expect(subscribedEvents()).toEqual([...shell, 'rules:changed'].sort()));
    location.hash = '#/builtin';
    await screen.findByRole('heading', { name: 'Built-in tools' });
    await waitFor(() => expect(subscribedEvents()).toEqual([...shell, 'builtin:changed'].sort()));
    location.hash = '#/board';
    await screen.findByRole('heading', { name: 'Board' });
    await waitFor(() => expect(subscribedEvents()).toEqual([...shell, 'board:changed', 'execution:changed'].sort()));
    location.hash = '#/chat';
    await screen.findByRole('heading', { name: 'Chat' });
    await waitFor(() => expect(subscribedEvents()).toEqual(shell));
  });

  it('shows the expired-link message on 401', async () => {
    render(App);
    triggerUnauthorized();
    expect(
      (await screen.findByRole('alert')).textContent!.replace(/\s+/g, ' '),
    ).toContain('This Airlock UI link has expired or is missing its token (each start of Airlock makes a new one). Open the URL printed by airlock serve.');
  });
});
