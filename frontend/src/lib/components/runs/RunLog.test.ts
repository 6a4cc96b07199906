import { beforeEach, describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { emit, fakeApi, resetFakeApi } from '../../testing/fakeApi';
import { testStores } from '../../testing/stores';
import RunLog from './RunLog.svelte';

vi.mock('../../api', async () => (await import('../../testing/fakeApi')).fakeApiModule());

const LINE_PX = 18;

/**
 * jsdom lays nothing out: the log box gets a height of 100px and a content
 * height of one line per output line, as a browser would give it.
 */
function layOut(box: HTMLElement) {
  Object.defineProperty(box, 'clientHeight', { configurable: true, get: () => 100 });
  Object.defineProperty(box, 'scrollHeight', { configurable: true, get: () => box.querySelectorAll('.line').length * LINE_PX });
}

const lines = (from: number, n: number) => Array.from({ length: n }, (_, i) => `[2026-01-01T10:00:00Z] line ${from + i}`);

describe('RunLog', () => {
  beforeEach(() => {
    resetFakeApi();
    vi.mocked(fakeApi.runs.log).mockResolvedValue({ runId: 'rn_1', status: 'running', lines: lines(0, 20), totalLines: 20, offset: 0, truncated: false });
  });

  it('keeps to the newest line until the reader scrolls up, then stays put and offers the way back', async () => {
    const { stores, context } = testStores();
    const off = stores.runs.connect();
    render(RunLog, { context, props: { runId: 'rn_1', live: true } });
    const box = await screen.findByRole('log');
    layOut(box);
    emit('run:output', { runId: 'rn_1', taskId: 'tk_1', lines: lines(20, 5), first: 20 });
    await waitFor(() => expect(box.scrollTop).toBe(25 * LINE_PX));
    expect(box.getAttribute('data-following')).toBe('true');

    // The reader scrolls up: new output does not pull the view down.
    box.scrollTop = 40;
    await fireEvent.scroll(box);
    expect(box.getAttribute('data-following')).toBe('false');
    emit('run:output', { runId: 'rn_1', taskId: 'tk_1', lines: lines(25, 3), first: 25 });
    const jump = await screen.findByTestId('jump-to-end');
    await waitFor(() => expect(jump.textContent).toContain('3 new lines'));
    expect(box.scrollTop, 'the view stays where the reader put it').toBe(40);
    expect(screen.getByText(/paused — scrolled up/)).toBeTruthy();

    await userEvent.click(jump);
    expect(box.scrollTop).toBe(28 * LINE_PX);
    expect(box.getAttribute('data-following')).toBe('true');
    emit('run:output', { runId: 'rn_1', taskId: 'tk_1', lines: lines(28, 2), first: 28 });
    await waitFor(() => expect(box.scrollTop).toBe(30 * LINE_PX));
    expect(screen.queryByTestId('jump-to-end')).toBeNull();
    off();
  });

  it('tells Airlock\'s own lines apart and shows each line\'s time', async () => {
    vi.mocked(fakeApi.runs.log).mockResolvedValue({
      runId: 'rn_1', status: 'completed', totalLines: 2, offset: 0, truncated: false,
      lines: ['[2026-01-01T10:00:00Z] [airlock] command: claude -p …', '[2026-01-01T10:00:01Z] hello'],
    });
    const { context } = testStores();
    render(RunLog, { context, props: { runId: 'rn_1', live: false, logPath: '/data/logs/rn_1.log' } });
    const out = await screen.findAllByTestId('output-line');
    expect(out.map((l) => l.classList.contains('note'))).toEqual([true, false]);
    expect(out[1].querySelector('time')!.getAttribute('datetime')).toBe('2026-01-01T10:00:01Z');
    expect(out[1].textContent).toMatch(/hello$/);
    expect(screen.getByText('/data/logs/rn_1.log')).toBeTruthy();
    expect(screen.getByRole('log').getAttribute('aria-live'), 'an ended run is not announced').toBe('off');
  });
});
