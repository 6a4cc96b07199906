import { beforeEach, describe, expect, it, vi } from 'vitest';
import { fakeApi, resetFakeApi } from '../testing/fakeApi';
import type { AuditRecord } from '../api';
import { ActivityStore } from './activity.svelte';

vi.mock('../api', async () => (await import('../testing/fakeApi')).fakeApiModule());

const rec = (id: number, over: Partial<AuditRecord> = {}): AuditRecord => ({
  id, time: '', kind: 'tools/call', agent: 'owner', session: 's', server: 'fs', tool: 't', arguments: '{}', argsDigest: '',
  decision: 'allow', reason: '', status: 'ok', latencyUs: 1, ...over,
});

describe('ActivityStore', () => {
  beforeEach(() => resetFakeApi());

  it('keeps a record that ended while a load was in flight as ended', async () => {
    let answer!: (rows: AuditRecord[]) => void;
    vi.mocked(fakeApi.activity.list).mockReturnValue(new Promise((r) => (answer = r)));
    const store = new ActivityStore();
    const loading = store.load();
    // The database answered with the record still running; its end arrived live meanwhile.
    store.upsert([rec(5, { status: 'ok', decision: 'approved' })]);
    answer([rec(5, { status: 'running', decision: '' }), rec(4)]);
    await loading;
    expect(store.records.map((r) => [r.id, r.status])).toEqual([[5, 'ok'], [4, 'ok']]);
  });

  it('does not insert a live record older than the loaded page when older pages exist', async () => {
    vi.mocked(fakeApi.activity.list).mockResolvedValue(Array.from({ length: 100 }, (_, i) => rec(200 - i)));
    const store = new ActivityStore();
    await store.load();
    expect(store.hasMore).toBe(true);
    store.upsert([rec(50), rec(300)]);
    expect(store.records[0].id).toBe(300);
    expect(store.records.some((r) => r.id === 50)).toBe(false);
  });

  it('matches the agent filter on the label or the id, as the backend does', () => {
    const store = new ActivityStore();
    store.filter.agent = 'a-1';
    store.upsert([rec(1, { agent: 'Alice', agentId: 'a-1' }), rec(2, { agent: 'Bob', agentId: 'b-2' })]);
    expect(store.records.map((r) => r.id)).toEqual([1]);
  });
});
