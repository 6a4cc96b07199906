import { describe, expect, it, vi } from 'vitest';
import { createClient } from './generated';
import { ApiError, httpTransport, toApiError, wailsTransport, type WailsWindow } from './transport';

function response(status: number, body: string): Response {
  return new Response(body, { status, headers: { 'Content-Type': 'application/json' } });
}

/** A stand-in for the browser's EventSource that tests drive by hand. */
class FakeEventSource {
  static all: FakeEventSource[] = [];
  readonly url: string;
  closed = false;
  readyState = 0;
  private listeners = new Map<string, ((e: Event) => void)[]>();
  constructor(url: string) {
    this.url = url;
    FakeEventSource.all.push(this);
  }
  addEventListener(name: string, fn: (e: Event) => void) {
    this.listeners.set(name, [...(this.listeners.get(name) ?? []), fn]);
  }
  close() {
    this.closed = true;
  }
  /** The server sent an event (or the connection opened, for 'open'). */
  fire(name: string, data?: unknown) {
    const e = name === 'open' || name === 'error' ? new Event(name) : new MessageEvent(name, { data: JSON.stringify(data) });
    for (const fn of this.listeners.get(name) ?? []) fn(e);
  }
  get topics(): string {
    return decodeURIComponent(new URL(this.url, 'http://x').searchParams.get('topics') ?? '');
  }
  static open(): FakeEventSource[] {
    return FakeEventSource.all.filter((s) => !s.closed);
  }
}

const tick = () => new Promise((r) => setTimeout(r, 0));

/**
 * A fetch that hands out event-stream tickets t1, t2, … and answers other
 * calls with rpc (200 {} by default).
 */
function apiFetch(rpc: (url: string) => Response = () => response(200, '{}')) {
  let n = 0;
  return vi.fn(async (input: RequestInfo | URL) => {
    const url = String(input);
    return url.endsWith('/api/events/ticket') ? response(200, JSON.stringify({ ticket: `t${++n}` })) : rpc(url);
  });
}

function streaming() {
  FakeEventSource.all = [];
  return httpTransport({ fetch: apiFetch(), token: () => 'T', EventSource: FakeEventSource as unknown as typeof EventSource });
}

describe('http transport', () => {
  it('POSTs positional arguments to /api/rpc/Area.Method and returns the JSON result', async () => {
    const fetch = vi.fn().mockResolvedValue(response(200, '{"id":"a"}'));
    const api = createClient((m, a) => httpTransport({ fetch }).call(m, a));
    expect(await api.rules.update('r1', { kind: 'tool', serverId: null, toolName: 'echo', toolPattern: null, autoApprove: true, priority: 2, conditions: [], agentId: null, sessionId: null, expiresAt: null })).toEqual({ id: 'a' });
    const [url, init] = fetch.mock.calls[0];
    expect(url).toBe('/api/rpc/Rules.Update');
    expect(init).toMatchObject({ method: 'POST', credentials: 'omit' });
    expect(JSON.parse(init.body)).toEqual(['r1', { kind: 'tool', serverId: null, toolName: 'echo', toolPattern: null, autoApprove: true, priority: 2, conditions: [], agentId: null, sessionId: null, expiresAt: null }]);
  });

  it('sends the UI token as a bearer header, never with cookies (they reach every port of the host)', async () => {
    const fetch = vi.fn().mockResolvedValue(response(200, '[]'));
    await httpTransport({ fetch, token: () => 'secret' }).call('Servers.List', []);
    const init = fetch.mock.calls[0][1];
    expect(init.headers).toMatchObject({ Authorization: 'Bearer secret' });
    expect(init.credentials).toBe('omit');
  });

  it('returns null for an empty 200 body', async () => {
    const t = httpTransport({ fetch: vi.fn().mockResolvedValue(response(200, '')) });
    expect(await t.call('Approvals.Approve', ['x'])).toBeNull();
  });

  it('turns an error body into an ApiError', async () => {
    const t = httpTransport({ fetch: vi.fn().mockResolvedValue(response(400, '{"code":"invalid","message":"priority must be an integer","hint":"use 0"}')) });
    const err = await t.call('Rules.Create', [{}]).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'invalid', message: 'priority must be an integer', hint: 'use 0', status: 400 });
  });

  it('reports 401 to onUnauthorized', async () => {
    const onUnauthorized = vi.fn();
    const t = httpTransport({ fetch: vi.fn().mockResolvedValue(response(401, 'unauthorized')), onUnauthorized });
    const err = await t.call('Servers.List', []).catch((e) => e);
    expect(onUnauthorized).toHaveBeenCalled();
    expect(err).toMatchObject({ code: 'unauthorized', status: 401 });
  });
});

describe('http event stream', () => {
  it('opens one stream for the topics subscribed together and delivers their events', async () => {
    const t = streaming();
    const requested = vi.fn();
    const status = vi.fn();
    t.subscribe('approval:requested', requested);
    t.subscribe('approval:resolved', vi.fn());
    t.subscribe('server:status', status);
    await tick();
    expect(FakeEventSource.all).toHaveLength(1);
    const s = FakeEventSource.all[0];
    expect(s.url.startsWith('/api/events?topics=')).toBe(true);
    expect(s.topics).toBe('approval,server');
    // Opened with a ticket got with the token (an EventSource sends no headers), not with cookies.
    expect(new URL(s.url, 'http://x').searchParams.get('ticket')).toBe('t1');
    s.fire('approval:requested', { id: 'a1' });
    s.fire('server:status', { id: 'fs' });
    expect(requested).toHaveBeenCalledWith({ id: 'a1' });
    expect(status).toHaveBeenCalledWith({ id: 'fs' });
  });

  it('re-opens the stream when the topics grow, and resyncs once it is open', async () => {
    const t = streaming();
    const resync = vi.fn();
    t.onReconnect(resync);
    t.subscribe('approval:requested', vi.fn());
    await tick();
    const first = FakeEventSource.all[0];
    first.fire('open');
    expect(resync).toHaveBeenCalledTimes(1); // what was loaded before the stream listened may be stale

    // A topic the stream already carries: no new stream.
    t.subscribe('approval:resolved', vi.fn());
    await tick();
    expect(FakeEventSource.all).toHaveLength(1);

    const batch = vi.fn();
    const off = t.subscribe('activity:new', batch);
    await tick();
    expect(first.closed).toBe(true);
    const [second] = FakeEventSource.open();
    expect(second.topics).toBe('activity,approval');
    second.fire('open');
    expect(resync).toHaveBeenCalledTimes(2); // events of the old topics may have been missed in between
    second.fire('activity:new', [{ id: 1 }]);
    expect(batch).toHaveBeenCalledWith([{ id: 1 }]);

    // Unsubscribing keeps the stream (fewer reconnects); the next growth drops the unused topic.
    off();
    second.fire('activity:new', [{ id: 2 }]);
    expect(batch).toHaveBeenCalledTimes(1);
    t.subscribe('rules:changed', vi.fn());
    await tick();
    expect(FakeEventSource.open().map((s) => s.topics)).toEqual(['approval,rules']);
  });

  it('tells the app at once when the token gets no ticket (a link of an earlier run)', async () => {
    FakeEventSource.all = [];
    const fetch = vi.fn().mockResolvedValue(response(401, '{"code":"unauthorized","message":"no"}'));
    const onUnauthorized = vi.fn();
    const t = httpTransport({ fetch, token: () => 'old', onUnauthorized, EventSource: FakeEventSource as unknown as typeof EventSource });
    t.subscribe('approvals:changed', () => {});
    await vi.waitFor(() => expect(onUnauthorized).toHaveBeenCalledOnce());
    expect(fetch.mock.calls[0][0]).toBe('/api/events/ticket');
    expect(FakeEventSource.all).toHaveLength(0);
  });

  it('tells the app at once when the stream is refused for want of a valid token (after a restart)', async () => {
    FakeEventSource.all = [];
    let restarted = false;
    const fetch = apiFetch(() => (restarted ? response(401, '{"code":"unauthorized","message":"no"}') : response(200, '{}')));
    const onUnauthorized = vi.fn();
    const t = httpTransport({ fetch, token: () => 'T', onUnauthorized, EventSource: FakeEventSource as unknown as typeof EventSource });
    t.subscribe('approvals:changed', () => {});
    await vi.waitFor(() => expect(FakeEventSource.all).toHaveLength(1));
    const s = FakeEventSource.all[0];
    const calls = fetch.mock.calls.length;
    s.readyState = 0; // a dropped connection the browser retries: nothing to do yet
    s.fire('error');
    await tick();
    expect(fetch.mock.calls).toHaveLength(calls);
    restarted = true;
    s.readyState = 2; // refused: the browser gave up
    s.fire('error');
    await vi.waitFor(() => expect(onUnauthorized).toHaveBeenCalledOnce());
    expect(fetch.mock.calls[calls][0]).toBe('/api/rpc/System.Settings');
  });

  it('opens a refused stream again later when the token is still good', async () => {
    vi.useFakeTimers();
    try {
      FakeEventSource.all = [];
      const fetch = apiFetch();
      const onUnauthorized = vi.fn();
      const t = httpTransport({ fetch, token: () => 'T', onUnauthorized, EventSource: FakeEventSource as unknown as typeof EventSource });
      t.subscribe('approvals:changed', () => {});
      await vi.advanceTimersByTimeAsync(0);
      const s = FakeEventSource.all[0];
      s.readyState = 2;
      s.fire('error');
      await vi.advanceTimersByTimeAsync(3000);
      expect(onUnauthorized).not.toHaveBeenCalled();
      expect(FakeEventSource.open()).toHaveLength(1);
      expect(FakeEventSource.open()[0]).not.toBe(s);
      expect(FakeEventSource.open()[0].topics).toBe('approvals');
      // With a new ticket: the first one is spent.
      expect(new URL(FakeEventSource.open()[0].url, 'http://x').searchParams.get('ticket')).toBe('t2');
    } finally {
      vi.useRealTimers();
    }
  });

  it('treats events:lagged like a reconnect: stores reload', async () => {
    const t = streaming();
    const resync = vi.fn();
    t.onReconnect(resync);
    t.subscribe('activity:new', vi.fn());
    await tick();
    FakeEventSource.all[0].fire('events:lagged', { dropped: 12 });
    expect(resync).toHaveBeenCalledTimes(1);
  });
});

describe('wails transport', () => {
  it('calls window.go.api.<Area>.<Method> and normalises rejections', async () => {
    const Decline = vi.fn().mockRejectedValue({ code: 'conflict', message: 'decided already' });
    const w: WailsWindow = { go: { api: { Approvals: { Decline } } } };
    const api = createClient((m, a) => wailsTransport(w).call(m, a));
    const err = await api.approvals.decline('a1', 'no').catch((e) => e);
    expect(Decline).toHaveBeenCalledWith('a1', 'no');
    expect(err).toMatchObject({ code: 'conflict', message: 'decided already' });
  });

  it('says which method the desktop app lacks', async () => {
    const err = (await wailsTransport({ go: { api: { Servers: {} } } }).call('Servers.List', []).catch((e) => e)) as ApiError;
    expect(err.message).toBe('The desktop app has no method Servers.List.');
  });

  it('subscribes through runtime.EventsOn, and events:lagged resyncs', () => {
    const handlers = new Map<string, (p: unknown) => void>();
    const off = vi.fn();
    const EventsOn = vi.fn((name: string, cb: (p: unknown) => void) => {
      handlers.set(name, cb);
      return off;
    });
    const t = wailsTransport({ runtime: { EventsOn } });
    const fn = vi.fn();
    t.subscribe('rules:changed', fn)();
    handlers.get('rules:changed')!({ version: 3 });
    expect(fn).toHaveBeenCalledWith({ version: 3 });
    expect(off).toHaveBeenCalled();
    const resync = vi.fn();
    t.onReconnect(resync);
    handlers.get('events:lagged')!({ dropped: 4 });
    expect(resync).toHaveBeenCalledTimes(1);
  });
});

describe('toApiError', () => {
  it('parses JSON strings (Wails ErrorFormatter output) and plain strings', () => {
    expect(toApiError('{"code":"not_found","message":"no such rule"}')).toMatchObject({ code: 'not_found', message: 'no such rule' });
    expect(toApiError('boom')).toMatchObject({ code: 'internal', message: 'boom' });
  });
});
