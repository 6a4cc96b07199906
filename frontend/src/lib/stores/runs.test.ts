import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../api';
import type { LogChunk } from '../api';
import { emit, fakeApi, resetFakeApi, resync } from '../testing/fakeApi';
import { agentView } from '../testing/agents';
import { profile, run } from '../testing/runs';
import { MAX_OUTPUT_LINES, RunsStore } from './runs.svelte';

vi.mock('../api', async () => (await import('../testing/fakeApi')).fakeApiModule());

const flush = () => new Promise((r) => setTimeout(r, 0));

function chunk(lines: string[], more: Partial<LogChunk> = {}): LogChunk {
  return { runId: 'rn_1', status: 'running', lines, totalLines: lines.length, offset: 0, truncated: false, ...more };
}

/** A promise the test resolves when it wants the backend to answer. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('RunsStore', () => {
  let store: RunsStore;
  let off: () => void;

  beforeEach(() => {
    resetFakeApi();
    store = new RunsStore();
    off = store.connect();
    return () => off();
  });

  it('follows a run: the log\'s tail, batches that came during the read without repeats, then every batch', async () => {
    const read = deferred<LogChunk>();
    vi.mocked(fakeApi.runs.log).mockReturnValue(read.promise);
    const stop = store.follow('rn_1');
    expect(store.output.rn_1.loading).toBe(true);
    expect(fakeApi.runs.log).toHaveBeenCalledWith('rn_1', { tail: 500, offset: null });

    // While the log is read, a batch comes whose first line the log already has.
    emit('run:output', { runId: 'rn_1', taskId: 'tk_1', lines: ['[t2] two', '[t3] three'], first: 9 });
    emit('run:output', { runId: 'rn_other', taskId: 'tk_9', lines: ['not ours'], first: 0 });
    read.resolve(chunk(['[t0] zero', '[t1] one', '[t2] two'], { offset: 7, totalLines: 10 }));
    await flush();
    expect(store.output.rn_1).toMatchObject({ lines: ['[t0] zero', '[t1] one', '[t2] two', '[t3] three'], earlier: 7, loading: false, error: null });

    emit('run:output', { runId: 'rn_1', taskId: 'tk_1', lines: ['[t4] four'], first: 13, dropped: 3 });
    expect(store.output.rn_1.lines.at(-1)).toBe('[t4] four');
    expect(store.output.rn_1.dropped, 'lines the backend could not stream').toBe(3);

    stop();
    await flush();
    expect(store.output.rn_1, 'nobody follows the run any more').toBeUndefined();
    emit('run:output', { runId: 'rn_1', taskId: 'tk_1', lines: ['[t5] five'], first: 14 });
    expect(store.output.rn_1).toBeUndefined();
  });

  it('shows a line once when its batch comes after the log read that gave it', async () => {
    // A line is in the log file at once and in run:output a moment later:
    // a view opened in between read Airlock's first lines, then got them
    // again (new-user test: "[airlock]" lines twice in the live view).
    const first = ['[t0] [airlock] run rn_1 of task tk_1', '[t0] [airlock] command: claude', '[t0] [airlock] started, process 42'];
    vi.mocked(fakeApi.runs.log).mockResolvedValue(chunk(first));
    store.follow('rn_1');
    await flush();
    emit('run:output', { runId: 'rn_1', taskId: 'tk_1', lines: [...first, '[t0] hello'], first: 0 });
    expect(store.output.rn_1.lines).toEqual([...first, '[t0] hello']);
    // A line that repeats the one before it is a new line all the same.
    emit('run:output', { runId: 'rn_1', taskId: 'tk_1', lines: ['[t0] hello'], first: 4 });
    expect(store.output.rn_1.lines).toEqual([...first, '[t0] hello', '[t0] hello']);
  });

  it('keeps the output when another view follows the same run at once', async () => {
    vi.mocked(fakeApi.runs.log).mockResolvedValue(chunk(['[t0] zero']));
    const first = store.follow('rn_1');
    await flush();
    first();
    const second = store.follow('rn_1');
    await flush();
    expect(store.output.rn_1.lines).toEqual(['[t0] zero']);
    expect(fakeApi.runs.log, 'the log is read once').toHaveBeenCalledTimes(1);
    second();
  });

  it('keeps the newest lines of a long run and counts the rest as earlier', async () => {
    vi.mocked(fakeApi.runs.log).mockResolvedValue(chunk([]));
    store.follow('rn_1');
    await flush();
    const many = Array.from({ length: MAX_OUTPUT_LINES + 5 }, (_, i) => `[t] ${i}`);
    emit('run:output', { runId: 'rn_1', taskId: 'tk_1', lines: many, first: 0 });
    expect(store.output.rn_1.lines).toHaveLength(MAX_OUTPUT_LINES);
    expect(store.output.rn_1.lines[0]).toBe('[t] 5');
    expect(store.output.rn_1.earlier).toBe(5);
  });

  it('shows the live lines when the log cannot be read, with the reason', async () => {
    const read = deferred<LogChunk>();
    vi.mocked(fakeApi.runs.log).mockReturnValue(read.promise.then(() => Promise.reject(new ApiError('log_unavailable', 'the log file of this run no longer exists'))));
    store.follow('rn_1');
    emit('run:output', { runId: 'rn_1', taskId: 'tk_1', lines: ['[t] live'], first: 0 });
    read.resolve(chunk([]));
    await flush();
    expect(store.output.rn_1).toMatchObject({ lines: ['[t] live'], error: 'the log file of this run no longer exists' });
  });

  it('keeps the runs alive from Live and run:status; a status during the load wins over its answer', async () => {
    const live = deferred<ReturnType<typeof run>[]>();
    vi.mocked(fakeApi.runs.live).mockReturnValue(live.promise);
    const loading = store.loadLive();
    emit('run:status', run('rn_1', { status: 'completed', exitCode: 0 }));
    emit('run:status', run('rn_2', { taskId: 'tk_2' }));
    live.resolve([run('rn_1'), run('rn_3', { taskId: 'tk_3' })]);
    await loading;
    expect(store.live.map((r) => r.id).sort(), 'rn_1 ended meanwhile, rn_2 started meanwhile').toEqual(['rn_2', 'rn_3']);
    expect(store.isRunning('tk_3')).toBe(true);
    emit('run:status', run('rn_3', { taskId: 'tk_3', status: 'stopped' }));
    expect(store.isRunning('tk_3')).toBe(false);
  });

  it('keeps a task\'s runs current, newest first, and the latest call of a run that ended', async () => {
    vi.mocked(fakeApi.runs.list).mockResolvedValue([run('rn_1', { status: 'failed', startedAt: '2026-01-01T09:00:00Z', exitCode: 1 })]);
    await store.loadTask('tk_1');
    const call = { server: 'everything', tool: 'echo', status: 'running', at: '2026-01-01T10:00:01Z' };
    emit('run:status', run('rn_2', { lastTool: call }));
    expect(store.byTask.tk_1.map((r) => r.id)).toEqual(['rn_2', 'rn_1']);
    emit('run:status', run('rn_2', { status: 'completed', exitCode: 0, lastTool: null }));
    expect(store.byTask.tk_1[0]).toMatchObject({ status: 'completed', lastTool: call });
    emit('run:status', run('rn_9', { taskId: 'tk_other' }));
    expect(store.byTask.tk_other, 'tasks nobody looks at are not kept').toBeUndefined();
    store.forgetTask('tk_1');
    expect(store.byTask.tk_1).toBeUndefined();
  });

  it('reads everything shown again after a resync', async () => {
    vi.mocked(fakeApi.runs.log).mockResolvedValue(chunk(['[t0] a']));
    await store.loadTask('tk_1');
    store.follow('rn_1');
    await flush();
    vi.mocked(fakeApi.runs.list).mockClear();
    vi.mocked(fakeApi.runs.live).mockResolvedValue([run('rn_1')]);
    vi.mocked(fakeApi.runs.log).mockResolvedValue(chunk(['[t0] a', '[t1] b']));
    resync();
    await flush();
    expect(fakeApi.runs.list).toHaveBeenCalledWith('tk_1');
    expect(store.live.map((r) => r.id)).toEqual(['rn_1']);
    expect(store.output.rn_1.lines).toEqual(['[t0] a', '[t1] b']);
  });

  it('keeps a refused start on its task until dismissed or tried again', async () => {
    vi.mocked(fakeApi.runs.start).mockRejectedValueOnce(new ApiError('command_not_found', 'the command /nope does not exist', 'check the command of the agent\'s run profile'));
    expect(await store.start('tk_1')).toBeNull();
    expect(store.refusals.tk_1).toEqual({ code: 'command_not_found', message: 'the command /nope does not exist', hint: 'check the command of the agent\'s run profile' });
    expect(store.starting.tk_1).toBeUndefined();
    vi.mocked(fakeApi.runs.start).mockResolvedValueOnce(run('rn_5'));
    expect(await store.start('tk_1')).toMatchObject({ id: 'rn_5' });
    expect(store.refusals.tk_1).toBeUndefined();
    expect(store.isRunning('tk_1')).toBe(true);
  });

  describe('blocker', () => {
    const bob = agentView('ag_bob', 'bob', 'worker', 'ag_owner', { tokens: [{ id: 'tok_1', agentId: 'ag_bob', prefix: 'alk_x', legacy: false, createdAt: '' }] });
    beforeEach(() => {
      store.profiles = { ag_bob: profile('ag_bob') };
      store.profilesLoaded = true;
    });

    it.each([
      ['unassigned', { id: 'tk_1', assigneeId: '' }, bob, 'Assign the task to an AI agent', undefined],
      ['a person', { id: 'tk_1', assigneeId: 'ag_bob' }, { ...bob, human: true }, 'bob is a person', undefined],
      ['suspended', { id: 'tk_1', assigneeId: 'ag_bob' }, { ...bob, status: 'suspended' }, 'bob is suspended', '#/agents/ag_bob?tab=status'],
      ['no profile', { id: 'tk_1', assigneeId: 'ag_carol' }, { ...bob, id: 'ag_carol', name: 'carol' }, 'carol has no run profile', '#/agents/ag_carol?tab=run'],
      ['no token', { id: 'tk_1', assigneeId: 'ag_bob' }, { ...bob, tokens: [] }, 'bob has no connection token', '#/agents/ag_bob?tab=connect'],
    ])('%s', (_name, task, agent, reason, href) => {
      const b = store.blocker(task, agent);
      expect(b?.reason).toContain(reason);
      expect(b?.href).toBe(href);
    });

    it('lets a ready agent run, one task at a time', () => {
      expect(store.blocker({ id: 'tk_1', assigneeId: 'ag_bob' }, bob)).toBeNull();
      store.status(run('rn_1', { taskId: 'tk_2' }));
      expect(store.blocker({ id: 'tk_1', assigneeId: 'ag_bob' }, bob)?.reason).toContain('bob is running another task');
    });
  });
});
