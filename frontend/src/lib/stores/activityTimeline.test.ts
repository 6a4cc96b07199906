import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { emit, fakeApi, resetFakeApi } from '../testing/fakeApi';
import type { AuditRecord, Timeline } from '../api';
import { ActivityStore } from './activity.svelte';
import { ActivityTimelineStore, RELOAD_EVERY_MS } from './activityTimeline.svelte';

vi.mock('../api', async () => (await import('../testing/fakeApi')).fakeApiModule());

const rec = (id: number, over: Partial<AuditRecord> = {}): AuditRecord => ({
  id, time: new Date().toISOString(), kind: 'tools/call', agent: 'owner', session: 's', server: 'fs', tool: 't', arguments: '{}', argsDigest: '',
  decision: 'allow', reason: '', status: 'ok', latencyUs: 1, ...over,
});

const empty = (from: string, to: string): Timeline => ({ from, to, buckets: [], total: 0 });

/** The [from, to, buckets] of each Activity.Timeline call, times as ISO text. */
const calls = () => vi.mocked(fakeApi.activity.timeline).mock.calls.map(([, from, to, n]) => [from, to, n]);

describe('ActivityTimelineStore', () => {
  beforeEach(() => {
    resetFakeApi();
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-11-25T10:37:12.500Z'));
    vi.mocked(fakeApi.activity.timeline).mockImplementation(async (_f, from, to) => empty(from, to));
  });
  afterEach(() => vi.useRealTimers());

  it('asks for whole bars ending after now, for each span, with the filters', async () => {
    const store = new ActivityTimelineStore(() => ({ server: 'fs' }));
    await store.load();
    store.setSpan('day');
    await vi.waitFor(() => expect(calls()).toHaveLength(2));
    store.setSpan('week');
    await vi.waitFor(() => expect(calls()).toHaveLength(3));
    expect(calls()).toEqual([
      ['2026-11-25T09:38:00.000Z', '2026-11-25T10:38:00.000Z', 60],
      ['2026-11-24T10:45:00.000Z', '2026-11-25T10:45:00.000Z', 96],
      ['2026-11-18T11:00:00.000Z', '2026-11-25T11:00:00.000Z', 168],
    ]);
    expect(vi.mocked(fakeApi.activity.timeline).mock.calls[0][0]).toEqual({ server: 'fs' });
  });

  it('reloads for live records at most once per interval', async () => {
    const store = new ActivityTimelineStore(() => ({}));
    const off = store.connect();
    await store.load();
    expect(calls()).toHaveLength(1);
    vi.advanceTimersByTime(1000);
    store.poke();
    store.poke();
    vi.advanceTimersByTime(RELOAD_EVERY_MS - 1000 - 1);
    expect(calls()).toHaveLength(1); // still inside the interval after the load
    vi.advanceTimersByTime(1);
    expect(calls()).toHaveLength(2); // the two pokes made one reload
    await vi.waitFor(() => expect(store.loading).toBe(false));
    vi.advanceTimersByTime(RELOAD_EVERY_MS);
    store.poke(); // a while after the last load: at once
    vi.advanceTimersByTime(0);
    expect(calls()).toHaveLength(3);
    off();
  });

  it('slides the window when its last bar is over, only while connected', async () => {
    const store = new ActivityTimelineStore(() => ({}));
    const off = store.connect();
    await store.load();
    vi.advanceTimersByTime(47_500 + 50); // 10:38:00.050
    await vi.waitFor(() => expect(calls()).toHaveLength(2));
    expect(calls()[1]).toEqual(['2026-11-25T09:39:00.000Z', '2026-11-25T10:39:00.000Z', 60]);
    off();
    store.poke();
    vi.advanceTimersByTime(10 * 60_000);
    expect(calls()).toHaveLength(2);
  });

  it('keeps the newest answer when loads overlap', async () => {
    let first!: (t: Timeline) => void;
    vi.mocked(fakeApi.activity.timeline).mockReturnValueOnce(new Promise((r) => (first = r)));
    const store = new ActivityTimelineStore(() => ({}));
    const a = store.load();
    store.setSpan('day');
    await vi.waitFor(() => expect(store.data?.to).toBe('2026-11-25T10:45:00.000Z'));
    first(empty('old', 'old'));
    await a;
    expect(store.data?.to).toBe('2026-11-25T10:45:00.000Z');
  });
});

describe('ActivityStore with the chart', () => {
  beforeEach(() => {
    resetFakeApi();
    vi.mocked(fakeApi.activity.timeline).mockImplementation(async (_f, from, to) => empty(from, to));
  });
  afterEach(() => vi.useRealTimers());

  it('lists a picked range, and keeps it out of the chart, which follows the other filters', async () => {
    const store = new ActivityStore();
    store.filter.agent = 'a-1';
    store.pickRange({ since: '2026-11-25T10:05:00Z', until: '2026-11-25T10:06:00Z' });
    await vi.waitFor(() =>
      expect(fakeApi.activity.list).toHaveBeenLastCalledWith({ limit: 100, agent: 'a-1', since: '2026-11-25T10:05:00Z', until: '2026-11-25T10:06:00Z' }),
    );
    await store.timeline.load();
    expect(vi.mocked(fakeApi.activity.timeline).mock.lastCall?.[0]).toEqual({ agent: 'a-1' });
    expect(store.filtering).toBe(true);
    store.clearFilter();
    expect(store.range).toBeNull();
  });

  it('adds live records only inside the picked range', async () => {
    vi.mocked(fakeApi.activity.list).mockResolvedValue([]);
    const store = new ActivityStore();
    store.pickRange({ since: '2026-11-25T10:05:00Z', until: '2026-11-25T10:06:00Z' });
    await vi.waitFor(() => expect(store.loading).toBe(false));
    store.upsert([
      rec(1, { time: '2026-11-25T10:04:59.999Z' }),
      rec(2, { time: '2026-11-25T10:05:00Z' }),
      rec(3, { time: '2026-11-25T10:05:59.999Z' }),
      rec(4, { time: '2026-11-25T10:06:00Z' }),
    ]);
    expect(store.records.map((r) => r.id)).toEqual([3, 2]);
  });

  it('reloads the chart for live records that match the filters, not for others', async () => {
    vi.useFakeTimers();
    // Far from the end of a one-minute bar: the chart also reloads when its
    // last bar is over, which the real clock would reach here now and then.
    vi.setSystemTime(new Date('2026-11-25T10:37:12.500Z'));
    const store = new ActivityStore();
    store.filter.server = 'fs';
    const off = store.connect();
    await store.timeline.load();
    vi.advanceTimersByTime(RELOAD_EVERY_MS);
    emit('activity:new', [rec(1, { server: 'other' })]);
    vi.advanceTimersByTime(RELOAD_EVERY_MS);
    expect(fakeApi.activity.timeline).toHaveBeenCalledTimes(1);
    emit('activity:new', [rec(2, { server: 'fs' })]);
    vi.advanceTimersByTime(0);
    expect(fakeApi.activity.timeline).toHaveBeenCalledTimes(2);
    off();
  });
});
