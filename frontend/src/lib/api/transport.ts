// The two ways to reach the Go facade `api.API`: Wails bindings in the
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

export interface Transport {
  readonly kind: 'wails' | 'http' | 'mock';
  call(method: string, args: unknown[]): Promise<unknown>;
  /** Subscribes to a named backend event; returns the unsubscribe function. */
  subscribe(name: string, fn: (payload: unknown) => void): () => void;
  /** Called after the event stream reconnected (events may have been missed). */
  onReconnect(fn: () => void): () => void;
}

type WailsMethod = (...args: unknown[]) => Promise<unknown>;

interface WailsWindow {
  go?: { api?: { API?: Record<string, WailsMethod> } };
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

export function wailsAvailable(w: unknown = globalThis): boolean {
  return !!(w as WailsWindow).go?.api?.API;
}

export function wailsTransport(w: WailsWindow = globalThis as WailsWindow): Transport {
  return {
    kind: 'wails',
    async call(method, args) {
      const fn = w.go?.api?.API?.[method];
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
    // Wails events are in-process: nothing can be missed.
    onReconnect: () => () => {},
  };
}

export interface HttpOptions {
  base?: string;
  fetch?: typeof fetch;
  onUnauthorized?: () => void;
}

export function httpTransport(opts: HttpOptions = {}): Transport {
  const base = opts.base ?? '';
  const doFetch = opts.fetch ?? ((...a: Parameters<typeof fetch>) => fetch(...a));
  let source: EventSource | null = null;
  const listeners = new Map<string, Set<(payload: unknown) => void>>();
  const reconnectListeners = new Set<() => void>();
  let everOpened = false;

  function attach(name: string) {
    source?.addEventListener(name, (e) => {
      let payload: unknown;
      try {
        payload = JSON.parse((e as MessageEvent<string>).data);
      } catch {
        return;
      }
      for (const fn of listeners.get(name) ?? []) fn(payload);
    });
  }

  function ensureSource() {
    if (source || typeof EventSource === 'undefined') return;
    source = new EventSource(`${base}/api/events`, { withCredentials: true });
    source.addEventListener('open', () => {
      if (everOpened) for (const fn of reconnectListeners) fn();
      everOpened = true;
    });
    for (const name of listeners.keys()) attach(name);
  }

  return {
    kind: 'http',
    async call(method, args) {
      let res: Response;
      try {
        res = await doFetch(`${base}/api/rpc/${method}`, {
          method: 'POST',
          credentials: 'same-origin',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(args),
        });
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
        attach(name);
      }
      set.add(fn);
      ensureSource();
      return () => set.delete(fn);
    },
    onReconnect(fn) {
      reconnectListeners.add(fn);
      return () => reconnectListeners.delete(fn);
    },
  };
}
