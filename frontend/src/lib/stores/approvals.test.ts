import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { resetFakeApi } from '../testing/fakeApi';
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
});
