import { describe, expect, it, vi } from 'vitest';
import { ApiError, httpTransport, toApiError, wailsTransport } from './transport';

function response(status: number, body: string): Response {
  return new Response(body, { status, headers: { 'Content-Type': 'application/json' } });
}

describe('http transport', () => {
  it('POSTs positional arguments and returns the JSON result', async () => {
    const fetch = vi.fn().mockResolvedValue(response(200, '[{"id":"a"}]'));
    const t = httpTransport({ fetch });
    expect(await t.call('UpdateRule', ['r1', { priority: 2 }])).toEqual([{ id: 'a' }]);
    const [url, init] = fetch.mock.calls[0];
    expect(url).toBe('/api/rpc/UpdateRule');
    expect(init).toMatchObject({ method: 'POST', credentials: 'same-origin', body: '["r1",{"priority":2}]' });
  });

  it('returns null for an empty 200 body', async () => {
    const t = httpTransport({ fetch: vi.fn().mockResolvedValue(response(200, '')) });
    expect(await t.call('Approve', ['x'])).toBeNull();
  });

  it('turns an error body into an ApiError', async () => {
    const t = httpTransport({ fetch: vi.fn().mockResolvedValue(response(400, '{"code":"invalid","message":"priority must be an integer","hint":"use 0"}')) });
    const err = await t.call('CreateRule', [{}]).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'invalid', message: 'priority must be an integer', hint: 'use 0', status: 400 });
  });

  it('reports 401 to onUnauthorized', async () => {
    const onUnauthorized = vi.fn();
    const t = httpTransport({ fetch: vi.fn().mockResolvedValue(response(401, 'unauthorized')), onUnauthorized });
    const err = await t.call('ListServers', []).catch((e) => e);
    expect(onUnauthorized).toHaveBeenCalled();
    expect(err).toMatchObject({ code: 'unauthorized', status: 401 });
  });
});

describe('wails transport', () => {
  it('calls window.go.api.API.<Method> and normalises rejections', async () => {
    const Decline = vi.fn().mockRejectedValue({ code: 'conflict', message: 'decided already' });
    const t = wailsTransport({ go: { api: { API: { Decline } } } });
    const err = await t.call('Decline', ['a1', 'no']).catch((e) => e);
    expect(Decline).toHaveBeenCalledWith('a1', 'no');
    expect(err).toMatchObject({ code: 'conflict', message: 'decided already' });
  });

  it('subscribes through runtime.EventsOn', () => {
    const off = vi.fn();
    const EventsOn = vi.fn().mockReturnValue(off);
    const t = wailsTransport({ runtime: { EventsOn } });
    const fn = vi.fn();
    t.subscribe('rules:changed', fn)();
    expect(EventsOn.mock.calls[0][0]).toBe('rules:changed');
    EventsOn.mock.calls[0][1]({ version: 3 });
    expect(fn).toHaveBeenCalledWith({ version: 3 });
    expect(off).toHaveBeenCalled();
  });
});

describe('toApiError', () => {
  it('parses JSON strings (Wails ErrorFormatter output) and plain strings', () => {
    expect(toApiError('{"code":"not_found","message":"no such rule"}')).toMatchObject({ code: 'not_found', message: 'no such rule' });
    expect(toApiError('boom')).toMatchObject({ code: 'internal', message: 'boom' });
  });
});
