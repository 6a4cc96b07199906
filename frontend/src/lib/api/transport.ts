// The two ways to reach the Go facade (backend/api): Wails bindings in the
// desktop window, HTTP + SSE when the UI is served by `airlock serve`.
// Nothing outside lib/api knows which one is in use.

/** An error from the backend, with the code and hint of core.Error. */
export class ApiError extends Error {
  readonly code: string;
  readonly hint?: string;
  /** HTTP status when the error came over HTTP. */
  readonly status?: number;

  constructor(code: string, message: string, hint?: string, status?: number) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.hint = hint;
    this.status = status;
  }
}

/** The event that tells a receiver it fell behind and must reload what it shows. */
export const LAGGED = 'events:lagged';

/** The topic of an event name: the part before the colon ("approval" for "approval:requested"). */
export function topicOf(name: string): string {
  const i = name.indexOf(':');
  return i < 0 ? name : name.slice(0, i);
}

export interface Transport {
  readonly kind: 'wails' | 'http' | 'mock';
  /** Calls "Area.Method" with positional arguments. */
  call(method: string, args: unknown[]): Promise<unknown>;
  /** Subscribes to a named backend event; returns the unsubscribe function. */
  subscribe(name: string, fn: (payload: unknown) => void): () => void;
  /**
   * Called when events may have been missed (the stream reconnected, was
   * re-opened for more topics, or the backend said the receiver lagged):
   * stores reload what they show.
   */
  onReconnect(fn: () => void): () => void;
}

type WailsMethod = (...args: unknown[]) => Promise<unknown>;

export interface WailsWindow {
  go?: { api?: Record<string, Record<string, WailsMethod> | undefined> };
  runtime?: { EventsOn(name: string, cb: (...data: unknown[]) => void): () => void };
}

/** Turns whatever a transport rejected with into an ApiError. */
export function toApiError(err: unknown, status?: number): ApiError {
  if (err instanceof ApiError) return err;
  if (typeof err === 'string') {
    try {
      return toApiError(JSON.parse(err), status);
    } catch {
      return new ApiError('internal', err, undefined, status);
    }
  }
  if (err && typeof err === 'object') {
    const o = err as { code?: unknown; message?: unknown; hint?: unknown };
    if (typeof o.message === 'string') {
      return new ApiError(
        typeof o.code === 'string' ? o.code : 'internal',
        o.message,
        typeof o.hint === 'string' && o.hint ? o.hint : undefined,
        status,
      );
    }
  }
  return new ApiError('internal', String(err), undefined, status);
}

function splitMethod(method: string): [area: string, name: string] {
  const i = method.indexOf('.');
  return i < 0 ? ['', method] : [method.slice(0, i), method.slice(i + 1)];
}

/** Whether the page runs inside the Wails window (its bindings are present). */
export function wailsAvailable(w: unknown = globalThis): boolean {
  const api = (w as WailsWindow).go?.api;
  return !!api && Object.keys(api).length > 0;
}

export function wailsTransport(w: WailsWindow = globalThis as WailsWindow): Transport {
  const reconnectListeners = new Set<() => void>();
  // Wails events are in-process, but the backend still tells a window that
  // fell behind to reload (the hub drops events rather than block).
  let laggedOff: (() => void) | null = null;
  return {
    kind: 'wails',
    async call(method, args) {
      const [area, name] = splitMethod(method);
      const fn = w.go?.api?.[area]?.[name];
      if (!fn) throw new ApiError('internal', `The desktop app has no method ${method}.`);
      try {
        const result = await fn(...args);
        return result ?? null;
      } catch (err) {
        throw toApiError(err);
      }
    },
    subscribe(name, fn) {
      if (!w.runtime) return () => {};
      return w.runtime.EventsOn(name, (payload: unknown) => fn(payload));
    },
    onReconnect(fn) {
      reconnectListeners.add(fn);
      if (!laggedOff && w.runtime) laggedOff = w.runtime.EventsOn(LAGGED, () => reconnectListeners.forEach((f) => f()));
      return () => reconnectListeners.delete(fn);
    },
  };
}

export interface HttpOptions {
  base?: string;
  fetch?: typeof fetch;
  /**
   * The UI token, sent as a bearer header. Never a cookie: browsers send a
   * host's cookies to every port of it, including a page an agent serves.
   */
  token?: () => string | null;
  onUnauthorized?: () => void;
  /** The EventSource constructor (tests pass a fake). */
  EventSource?: typeof EventSource;
}

/**
 * HTTP transport: POST /api/rpc/<Area>.<Method> and one EventSource on
 * /api/events?topics=… carrying the topics someone listens to. When a
 * subscription needs a topic the open stream lacks, the stream is re-opened
 * with the topics wanted now. Each time the stream opens (first open,
 * automatic reconnect, re-open for more topics) events may have been missed,
 * so the reconnect listeners run.
 */
/** EventSource.CLOSED (the constant is not on every EventSource stand-in). */
const CLOSED = 2;
/** How long a refused event stream waits before it is opened again. */
const STREAM_RETRY_MS = 3000;

export function httpTransport(opts: HttpOptions = {}): Transport {
  const base = opts.base ?? '';
  const doFetch = opts.fetch ?? ((...a: Parameters<typeof fetch>) => fetch(...a));
  const ES = opts.EventSource ?? (typeof EventSource === 'undefined' ? undefined : EventSource);
  const listeners = new Map<string, Set<(payload: unknown) => void>>();
  const reconnectListeners = new Set<() => void>();
  let source: EventSource | null = null;
  /** The topics the open source streams. */
  let openTopics = new Set<string>();
  let pending = false;

  const resync = () => reconnectListeners.forEach((fn) => fn());

  function headers(): Record<string, string> {
    const tok = opts.token?.();
    return { 'Content-Type': 'application/json', ...(tok ? { Authorization: `Bearer ${tok}` } : {}) };
  }

  /** A plain call to the API, with the token. */
  function post(path: string, body: string): Promise<Response> {
    return doFetch(`${base}${path}`, { method: 'POST', credentials: 'omit', headers: headers(), body });
  }

  /**
   * A ticket that opens the event stream once (an EventSource cannot send
   * the token). null when the token is refused: the app is told.
   */
  async function ticket(): Promise<string | null> {
    const res = await post('/api/events/ticket', '');
    if (res.status === 401) {
      opts.onUnauthorized?.();
      return null;
    }
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    return ((await res.json()) as { ticket: string }).ticket;
  }
  /** Counts opens: an open whose ticket comes after a newer one gives up. */
  let opens = 0;

  function wantedTopics(): Set<string> {
    const t = new Set<string>();
    for (const [name, set] of listeners) if (set.size > 0 && name !== LAGGED) t.add(topicOf(name));
    return t;
  }

  function dispatch(name: string, e: Event) {
    let payload: unknown;
    try {
      payload = JSON.parse((e as MessageEvent<string>).data);
    } catch {
      return;
    }
    for (const fn of listeners.get(name) ?? []) fn(payload);
  }

  function attach(s: EventSource, name: string) {
    s.addEventListener(name, (e) => dispatch(name, e));
  }

  async function open(topics: Set<string>) {
    source?.close();
    source = null;
    openTopics = topics;
    const mine = ++opens;
    let t: string | null;
    try {
      t = await ticket();
    } catch {
      // Airlock unreachable or failing: try again later.
      setTimeout(() => {
        if (mine === opens) void open(openTopics);
      }, STREAM_RETRY_MS);
      return;
    }
    if (t === null || mine !== opens) return;
    const q = [...topics].sort().join(',');
    const s = new ES!(`${base}/api/events?topics=${encodeURIComponent(q)}&ticket=${encodeURIComponent(t)}`);
    source = s;
    // Every open, the first included, resyncs: what a store loaded before
    // the stream was listening (or while it was down) may be stale.
    s.addEventListener('open', () => {
      if (source === s) resync();
    });
    s.addEventListener(LAGGED, () => {
      if (source === s) resync();
    });
    // A dropped connection is retried by the browser; a refused one (any
    // answer but 200) closes the stream for good. After a restart of
    // `airlock serve` the page's token is no longer valid: ask with a plain
    // call, whose 401 tells the app (the sign-in screen shows at once, not
    // at the next click). Anything else: open the stream again later.
    // (A dropped connection the browser retries comes back with the spent
    // ticket, is refused, and so ends here too: opened anew with a new one.)
    s.addEventListener('error', () => {
      if (source !== s || s.readyState !== CLOSED) return;
      void post('/api/rpc/System.Settings', '[]')
        .then((res) => res.status === 401)
        .catch(() => false)
        .then((unauthorized) => {
          if (source !== s) return;
          if (unauthorized) {
            opts.onUnauthorized?.();
            return;
          }
          setTimeout(() => {
            if (source === s) void open(openTopics);
          }, STREAM_RETRY_MS);
        });
    });
    for (const name of listeners.keys()) if (name !== LAGGED) attach(s, name);
  }

  /**
   * Opens or re-opens the stream when a topic is wanted that it lacks.
   * Batched to the end of the current task, so a screen that subscribes to
   * several topics at once opens one stream. Topics nobody wants any more
   * stay until the next re-open: fewer reconnects, and extra events are
   * harmless.
   */
  function reconcile() {
    if (pending || !ES) return;
    pending = true;
    queueMicrotask(() => {
      pending = false;
      const want = wantedTopics();
      if (want.size === 0) return;
      if ([...want].every((t) => openTopics.has(t))) return;
      void open(want);
    });
  }

  return {
    kind: 'http',
    async call(method, args) {
      let res: Response;
      try {
        res = await post(`/api/rpc/${method}`, JSON.stringify(args));
      } catch (err) {
        throw new ApiError('unavailable', `Airlock is not reachable (${String(err)}).`, 'Is `airlock serve` still running?');
      }
      const text = await res.text();
      if (res.status === 401) opts.onUnauthorized?.();
      if (!res.ok) {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          body = { code: res.status === 401 ? 'unauthorized' : 'internal', message: text || res.statusText || `HTTP ${res.status}` };
        }
        throw toApiError(body, res.status);
      }
      return text ? JSON.parse(text) : null;
    },
    subscribe(name, fn) {
      let set = listeners.get(name);
      if (!set) {
        set = new Set();
        listeners.set(name, set);
        if (source && name !== LAGGED) attach(source, name);
      }
      set.add(fn);
      reconcile();
      return () => set.delete(fn);
    },
    onReconnect(fn) {
      reconnectListeners.add(fn);
      return () => reconnectListeners.delete(fn);
    },
  };
}
