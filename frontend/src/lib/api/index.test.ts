import { afterEach, describe, expect, it, vi } from 'vitest';

afterEach(() => {
  vi.unstubAllGlobals();
  vi.resetModules();
  localStorage.clear();
  history.replaceState(null, '', '/');
});

describe('the UI token', () => {
  it('is taken from the printed link, kept for this origin, out of the address bar, and sent as a header', async () => {
    history.replaceState(null, '', '/?token=abc#/rules');
    const fetch = vi.fn().mockResolvedValue(new Response('[]', { status: 200 }));
    vi.stubGlobal('fetch', fetch);
    const { api } = await import('./index');
    await api.servers.list();
    expect(location.search).toBe('');
    expect(location.hash).toBe('#/rules');
    expect(localStorage.getItem('airlock.uiToken')).toBe('abc');
    const init = fetch.mock.calls[0][1];
    expect(init.headers).toMatchObject({ Authorization: 'Bearer abc' });
    expect(init.credentials).toBe('omit');
  });

  it('is the one kept before when the address has none (another tab, a reload)', async () => {
    localStorage.setItem('airlock.uiToken', 'kept');
    const fetch = vi.fn().mockResolvedValue(new Response('[]', { status: 200 }));
    vi.stubGlobal('fetch', fetch);
    const { api } = await import('./index');
    await api.servers.list();
    expect(fetch.mock.calls[0][1].headers).toMatchObject({ Authorization: 'Bearer kept' });
  });
});
