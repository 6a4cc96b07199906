import { beforeEach, describe, expect, it, vi } from 'vitest';
import { emit, fakeApi, resetFakeApi } from '../testing/fakeApi';
import { overview } from '../testing/agents';
import type { Overview } from '../api';
import { BuiltinStore } from './builtin.svelte';

vi.mock('../api', async () => (await import('../testing/fakeApi')).fakeApiModule());

describe('BuiltinStore', () => {
  beforeEach(() => {
    resetFakeApi();
    vi.mocked(fakeApi.builtin.servers).mockResolvedValue(['file-read', 'file-write', 'shell-exec']);
  });

  it('keeps what builtin:changed said while a load was on its way', async () => {
    let answer!: (ov: Overview) => void;
    vi.mocked(fakeApi.builtin.get).mockReturnValue(new Promise((r) => (answer = r)));
    const store = new BuiltinStore();
    const off = store.connect();
    const loading = store.load();
    emit('builtin:changed', overview({ roots: ['/new'] }));
    answer(overview()); // read before the change
    await loading;
    expect(store.overview?.settings.roots).toEqual(['/new']);
    expect(store.servers).toEqual(['file-read', 'file-write', 'shell-exec']);
    off();
  });

  it('sends the whole settings with the change, and the server switches as the off list', async () => {
    vi.mocked(fakeApi.builtin.get).mockResolvedValue(overview({ roots: ['/p'] }));
    vi.mocked(fakeApi.builtin.update).mockImplementation(async (s) => ({ ...overview(), settings: s }));
    const store = new BuiltinStore();
    await store.load();
    await store.update({ ask: ['sudo', 'echo'] });
    expect(fakeApi.builtin.update).toHaveBeenLastCalledWith(expect.objectContaining({ roots: ['/p'], ask: ['sudo', 'echo'], deny: ['rm {-r,--recursive} {-f,--force}'] }));
    await store.setServerOn('shell-exec', false);
    expect(vi.mocked(fakeApi.builtin.update).mock.lastCall![0].off).toEqual(['shell-exec']);
    expect(store.isOn('shell-exec')).toBe(false);
    await store.setServerOn('shell-exec', true);
    expect(vi.mocked(fakeApi.builtin.update).mock.lastCall![0].off).toEqual([]);
  });

  it('leaves the settings as they were when the backend refuses a change', async () => {
    vi.mocked(fakeApi.builtin.get).mockResolvedValue(overview());
    const { ApiError } = await import('../api/transport');
    vi.mocked(fakeApi.builtin.update).mockRejectedValue(new ApiError('invalid', 'shellTimeoutSeconds must be between 1 and 3600, got 0'));
    const store = new BuiltinStore();
    await store.load();
    await expect(store.update({ shellTimeoutSeconds: 0 })).rejects.toThrow('shellTimeoutSeconds');
    expect(store.overview?.settings.shellTimeoutSeconds).toBe(60);
  });
});
