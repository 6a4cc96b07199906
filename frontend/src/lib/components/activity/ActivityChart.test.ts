import { beforeEach, describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { fakeApi, resetFakeApi } from '../../testing/fakeApi';
import { testStores } from '../../testing/stores';
import type { AuditRecord, Timeline, TimelineBucket } from '../../api';
import ActivityPage from './ActivityPage.svelte';
import { barLabel, bucketRange, niceMax, tickLabel } from './chart';

vi.mock('../../api', async () => (await import('../../testing/fakeApi')).fakeApiModule());

const rec = (id: number): AuditRecord => ({
  id, time: new Date().toISOString(), kind: 'tools/call', agent: 'owner', session: 's', server: 'fs', tool: `tool${id}`, arguments: '{}', argsDigest: '',
  decision: 'allow', reason: '', status: 'ok', latencyUs: 1,
});

const zero = { allowed: 0, approved: 0, refused: 0, expired: 0, errors: 0, pending: 0, other: 0 };

/** A timeline of n one-minute bars from `from` (ms), with counts for some bars. */
function timeline(from: number, n: number, counts: Record<number, Partial<TimelineBucket>> = {}): Timeline {
  const buckets = Array.from({ length: n }, (_, i): TimelineBucket => {
    const c = { ...zero, ...counts[i] };
    const total = c.allowed + c.approved + c.refused + c.expired + c.errors + c.pending + c.other;
    return { start: new Date(from + i * 60_000).toISOString(), end: new Date(from + (i + 1) * 60_000).toISOString(), ...c, total };
  });
  return { from: buckets[0].start, to: buckets[n - 1].end, buckets, total: buckets.reduce((s, b) => s + b.total, 0) };
}

const from = Date.parse('2026-11-25T09:38:00Z');

async function renderWith(tl: Timeline) {
  vi.mocked(fakeApi.activity.list).mockResolvedValue([rec(1)]);
  vi.mocked(fakeApi.activity.timeline).mockResolvedValue(tl);
  const { stores, context } = testStores();
  render(ActivityPage, { context });
  await screen.findByText('tool1');
  const chart = await screen.findByTestId('activity-chart');
  return { stores, chart };
}

describe('ActivityChart', () => {
  beforeEach(() => resetFakeApi());

  it('stacks each bar by decision, says its counts to screen readers, and shows a legend and the total', async () => {
    const tl = timeline(from, 60, { 58: { allowed: 2, refused: 1 }, 59: { approved: 1, errors: 1 } });
    const { chart } = await renderWith(tl);
    const bars = await within(chart).findAllByTestId('chart-bar');
    expect(bars).toHaveLength(60);
    expect(bars[58].getAttribute('aria-label')).toBe(`${bucketRange(tl.buckets[58], 'hour')}: 3 requests (2 auto-allowed, 1 declined / denied)`);
    expect(bars[58].querySelectorAll('rect.seg')).toHaveLength(2);
    expect(bars[0].querySelectorAll('rect.seg')).toHaveLength(0);
    expect(within(chart).getByTestId('chart-total').textContent).toBe('5 requests');
    const legend = within(chart).getByRole('list', { name: 'Decisions' });
    expect(within(legend).getAllByRole('listitem').map((li) => li.textContent)).toEqual(['auto-allowed', 'approved', 'declined / denied', 'timed out / expired', 'error']);
    // Only the newest bar is in the tab order (the arrows move between bars).
    expect(bars.filter((b) => b.getAttribute('tabindex') === '0')).toEqual([bars[59]]);
  });

  it('shows a tooltip with the bar\'s time and counts on hover and on focus', async () => {
    const tl = timeline(from, 60, { 10: { allowed: 4, expired: 1 } });
    const { chart } = await renderWith(tl);
    const bars = await within(chart).findAllByTestId('chart-bar');
    await fireEvent.mouseEnter(bars[10]);
    const tip = await within(chart).findByTestId('chart-tooltip');
    expect(tip.textContent).toContain(bucketRange(tl.buckets[10], 'hour'));
    expect(tip.textContent).toContain('auto-allowed4');
    expect(tip.textContent).toContain('timed out / expired1');
    expect(tip.textContent).toContain('total5');
    await fireEvent.mouseLeave(bars[10]);
    await waitFor(() => expect(within(chart).queryByTestId('chart-tooltip')).toBeNull());
    bars[3].focus();
    expect((await within(chart).findByTestId('chart-tooltip')).textContent).toContain('No requests');
  });

  it('lists the requests of a clicked bar, and shows all times again from the filter bar', async () => {
    const tl = timeline(from, 60, { 20: { allowed: 1 } });
    const { chart } = await renderWith(tl);
    const bars = await within(chart).findAllByTestId('chart-bar');
    await userEvent.click(bars[20]);
    await waitFor(() =>
      expect(fakeApi.activity.list).toHaveBeenLastCalledWith({ limit: 100, since: tl.buckets[20].start, until: tl.buckets[20].end }),
    );
    expect(bars[20].getAttribute('aria-pressed')).toBe('true');
    expect(bars[21].classList.contains('dim')).toBe(true);
    expect(screen.getByTestId('activity-range').textContent).toContain(bucketRange(tl.buckets[20], 'hour'));
    await userEvent.click(screen.getByRole('button', { name: 'Show all times' }));
    await waitFor(() => expect(fakeApi.activity.list).toHaveBeenLastCalledWith({ limit: 100 }));
    expect(screen.queryByTestId('activity-range')).toBeNull();
    expect(bars[20].getAttribute('aria-pressed')).toBe('false');
  });

  it('moves between bars with the arrow keys and picks one with Enter; Escape shows all times', async () => {
    const tl = timeline(from, 60, { 57: { approved: 2 } });
    const { chart } = await renderWith(tl);
    const bars = await within(chart).findAllByTestId('chart-bar');
    bars[59].focus();
    await userEvent.keyboard('{ArrowLeft}{ArrowLeft}');
    expect(document.activeElement).toBe(bars[57]);
    await userEvent.keyboard('{Enter}');
    await waitFor(() =>
      expect(fakeApi.activity.list).toHaveBeenLastCalledWith({ limit: 100, since: tl.buckets[57].start, until: tl.buckets[57].end }),
    );
    await userEvent.keyboard('{Escape}');
    await waitFor(() => expect(fakeApi.activity.list).toHaveBeenLastCalledWith({ limit: 100 }));
  });

  it('switches the range and follows the filters', async () => {
    await renderWith(timeline(from, 60));
    await userEvent.click(screen.getByRole('button', { name: '24 h' }));
    await waitFor(() => expect(vi.mocked(fakeApi.activity.timeline).mock.lastCall?.[3]).toBe(96));
    expect(screen.getByRole('button', { name: '24 h' }).getAttribute('aria-pressed')).toBe('true');
    await userEvent.selectOptions(screen.getByLabelText('Filter by decision'), 'declined');
    await waitFor(() => expect(vi.mocked(fakeApi.activity.timeline).mock.lastCall?.[0]).toEqual({ decision: 'declined' }));
  });

  it('says when the range has no requests', async () => {
    const { chart } = await renderWith(timeline(from, 60));
    expect((await within(chart).findByTestId('chart-empty')).textContent).toContain('No requests in the last hour.');
    expect(within(chart).queryAllByTestId('chart-bar')).toHaveLength(0);
  });

  it('is not shown before the first request (the page explains how to connect an agent)', async () => {
    const { context } = testStores();
    render(ActivityPage, { context });
    await screen.findByText('No requests yet');
    expect(screen.queryByTestId('activity-chart')).toBeNull();
  });
});

describe('chart labels', () => {
  it('rounds the count axis up to 1, 2 or 5 times a power of ten', () => {
    expect([0, 1, 2, 3, 7, 10, 11, 45, 120].map(niceMax)).toEqual([1, 1, 2, 5, 10, 10, 20, 50, 200]);
  });

  it('labels the axis at round local times only', () => {
    const local = (h: number, m: number) => new Date(2026, 10, 25, h, m).toISOString();
    expect(tickLabel(local(10, 20), 'hour')).not.toBe('');
    expect(tickLabel(local(10, 25), 'hour')).toBe('');
    expect(tickLabel(local(9, 0), 'day')).not.toBe('');
    expect(tickLabel(local(10, 0), 'day')).toBe('');
    expect(tickLabel(local(0, 0), 'week')).toContain('25');
    expect(tickLabel(local(12, 0), 'week')).toBe('');
  });

  it('names a bar without requests', () => {
    const b = timeline(from, 1).buckets[0];
    expect(barLabel(b, 'hour')).toBe(`${bucketRange(b, 'hour')}: no requests`);
  });
});
