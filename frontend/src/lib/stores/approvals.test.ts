import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fakeApi, resetFakeApi } from '../testing/fakeApi';
import type { Approval } from '../api';
import { ApprovalsStore } from './approvals.svelte';

vi.mock('../api', async () => (await import('../testing/fakeApi')).fakeApiModule());

const a = (id: string): Approval => ({
  id, kind: 'tools/call', agent: 'cursor', session: 's', ruleId: '', server: 'fs', tool: 'write_file', exposedName: 'fs__write_file', arguments: {},
  risk: 'destructive', warning: '', reason: '', ruleSetVersion: 1, createdAt: '', deadline: '', status: 'pending',
});

describe('ApprovalsStore', () => {
  beforeEach(() => resetFakeApi());
  afterEach(() => vi.unstubAllGlobals());

  it('shows a Notification for a new approval only when permitted and the tab is hidden', () => {
    const shown: string[] = [];
    class FakeNotification {
      static permission = 'granted';
      onclick: (() => void) | null = null;
      constructor(title: string) {
        shown.push(title);
      }
      close() {}
    }
    vi.stubGlobal('Notification', FakeNotification);
    const hidden = vi.spyOn(document, 'hidden', 'get');

    const store = new ApprovalsStore();
    hidden.mockReturnValue(false);
    store.requested(a('1'));
    expect(shown).toEqual([]);

    hidden.mockReturnValue(true);
    store.requested(a('2'));
    expect(shown).toEqual(['Approval needed: write_file']);

    FakeNotification.permission = 'denied';
    store.requested(a('3'));
    expect(shown).toHaveLength(1);
    hidden.mockRestore();
  });

  it('keeps the queue oldest first, ignores duplicates, and steps around it', () => {
    const store = new ApprovalsStore();
    store.requested(a('1'));
    store.requested(a('2'));
    store.requested(a('2'));
    expect(store.pending.map((x) => x.id)).toEqual(['1', '2']);
    expect(store.currentId).toBe('1');
    store.step(1);
    expect(store.currentId).toBe('2');
    store.step(1);
    expect(store.currentId).toBe('1');
    store.resolved('1');
    expect(store.currentId).toBe('2');
    store.resolved('2');
    expect(store.dialogOpen).toBe(false);
  });

  it('keeps what events said while a load was on its way', async () => {
    let answer!: (rows: Approval[]) => void;
    vi.mocked(fakeApi.approvals.pending).mockReturnValue(new Promise((r) => (answer = r)));
    const store = new ApprovalsStore();
    const loading = store.load();
    store.requested(a('new')); // requested after the backend read its queue
    store.requested(a('old'));
    store.resolved('old'); // decided after the backend read its queue
    answer([a('old')]);
    await loading;
    expect(store.pending.map((x) => x.id)).toEqual(['new']);
    expect(store.currentId).toBe('new');
    expect(store.dialogOpen).toBe(true);
  });

  it('opens the dialog for waiting calls it has never seen, not again for ones the person closed', async () => {
    const store = new ApprovalsStore();
    vi.mocked(fakeApi.approvals.pending).mockResolvedValue([a('1')]);
    await store.load();
    expect(store.dialogOpen).toBe(true);
    store.close();
    await store.load(); // a resync: nothing new
    expect(store.dialogOpen).toBe(false);
    vi.mocked(fakeApi.approvals.pending).mockResolvedValue([a('1'), a('2')]);
    await store.load(); // a call whose event was missed
    expect(store.dialogOpen).toBe(true);
    expect(store.currentId).toBe('2');
  });
});
