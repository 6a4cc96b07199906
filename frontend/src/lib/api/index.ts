// The typed client of the Go facade: the only module the rest of the UI uses
// to reach the backend. The client itself is generated from Go
// (generated.ts); this module picks the transport. Tests mock this module.
import { createClient, type Client, type EventMap, type EventName } from './generated';
import { ApiError, httpTransport, wailsAvailable, wailsTransport, type Transport } from './transport';

export { ApiError };
export type * from './types';
export { CONDITION_OPS, DECISIONS, REQUEST_KINDS, REQUEST_KIND_OF, RULE_KINDS } from './types';
export type { Client };

const unauthorizedListeners = new Set<() => void>();

/** Registers fn to run when the backend says the UI's credential is missing or expired. */
export function onUnauthorized(fn: () => void): () => void {
  unauthorizedListeners.add(fn);
  return () => unauthorizedListeners.delete(fn);
}

function mockRequested(): boolean {
  return typeof location !== 'undefined' && new URLSearchParams(location.search).get('mock') === '1';
}

/** Where the page keeps the UI token: this origin's own (port included). */
const TOKEN_KEY = 'airlock.uiToken';

/**
 * The UI token: the one of the link `airlock serve` printed, kept for this
 * origin and taken out of the address bar, or the one kept before. It goes
 * as a header, never as a cookie (browsers send cookies to every port of a
 * host, a page an agent serves included).
 */
function uiToken(): string | null {
  try {
    if (typeof location !== 'undefined') {
      const url = new URL(location.href);
      const fromLink = url.searchParams.get('token');
      if (fromLink) {
        localStorage.setItem(TOKEN_KEY, fromLink);
        url.searchParams.delete('token');
        history.replaceState(history.state, '', url.pathname + url.search + url.hash);
      }
    }
    return localStorage.getItem(TOKEN_KEY);
  } catch {
    return null; // storage turned off: the API says 401 and the app says why
  }
}

let transport: Promise<Transport> | null = null;

function getTransport(): Promise<Transport> {
  transport ??= (async () => {
    if (wailsAvailable()) return wailsTransport();
    // Demo data only in development and only when asked for: never a silent
    // fallback, and production builds do not contain it at all.
    if (import.meta.env.DEV && mockRequested()) return (await import('./mock')).mockTransport();
    uiToken(); // keeps the link's token before anything asks
    return httpTransport({ token: uiToken, onUnauthorized: () => unauthorizedListeners.forEach((fn) => fn()) });
  })();
  return transport;
}

/** The transport in use ('wails' | 'http' | 'mock'), for UI that differs by host. */
export async function transportKind(): Promise<Transport['kind']> {
  return (await getTransport()).kind;
}

/** The backend: api.<area>.<method>(…), e.g. api.servers.list(). */
export const api: Client = createClient((method, args) => getTransport().then((t) => t.call(method, args)));

/**
 * Subscribes to a backend event; returns the unsubscribe function at once.
 * Over HTTP the event stream carries only the topics someone subscribed to.
 */
export function subscribe<K extends EventName>(name: K, fn: (payload: EventMap[K]) => void): () => void {
  let off: (() => void) | null = null;
  let cancelled = false;
  void getTransport().then((t) => {
    if (!cancelled) off = t.subscribe(name, fn as (p: unknown) => void);
  });
  return () => {
    cancelled = true;
    off?.();
  };
}

/**
 * Runs fn whenever events may have been missed — the stream (re)opened or
 * the backend said this client fell behind (events:lagged) — so stores
 * reload what they show.
 */
export function onReconnect(fn: () => void): () => void {
  let off: (() => void) | null = null;
  let cancelled = false;
  void getTransport().then((t) => {
    if (!cancelled) off = t.onReconnect(fn);
  });
  return () => {
    cancelled = true;
    off?.();
  };
}
