// A stand-in for lib/api in component tests: every method of the generated
// client is a vi.fn (api.servers.list, api.rules.test, …), and tests push
// backend events with `emit` and missed-event resyncs with `resync`.
//
//   vi.mock('../../api', async () => (await import('../../testing/fakeApi')).fakeApiModule());
import { vi, type Mock } from 'vitest';
import { ApiError } from '../api/transport';
import { createClient, type Client, type EventMap, type EventName } from '../api/generated';
import { CONDITION_OPS, DECISIONS, REQUEST_KINDS, REQUEST_KIND_OF, RULE_KINDS } from '../api/types';

type Fn = (payload: unknown) => void;
const handlers = new Map<string, Set<Fn>>();
const reconnect = new Set<() => void>();
const unauthorized = new Set<() => void>();

/** The generated client's shape, with a vi.fn in place of every method. */
function makeApi(): Client {
  const shape = createClient(async () => null) as unknown as Record<string, Record<string, unknown>>;
  const out: Record<string, Record<string, Mock>> = {};
  for (const [area, methods] of Object.entries(shape)) {
    out[area] = Object.fromEntries(Object.keys(methods).map((m) => [m, vi.fn().mockResolvedValue(null)]));
  }
  return out as unknown as Client;
}

export const fakeApi: Client = makeApi();

/** Every method of the fake, for resetting. */
function allMethods(): Mock[] {
  return Object.values(fakeApi as unknown as Record<string, Record<string, Mock>>).flatMap((area) => Object.values(area));
}

/** The mocked client, with the default answers of an empty backend. */
export function resetFakeApi(): void {
  handlers.clear();
  reconnect.clear();
  unauthorized.clear();
  for (const fn of allMethods()) fn.mockReset().mockResolvedValue(null);
  vi.mocked(fakeApi.servers.list).mockResolvedValue([]);
  vi.mocked(fakeApi.servers.configState).mockResolvedValue({ path: '/tmp/servers.json', loadedAt: new Date().toISOString() });
  vi.mocked(fakeApi.activity.list).mockResolvedValue([]);
  vi.mocked(fakeApi.rules.list).mockResolvedValue([]);
  vi.mocked(fakeApi.rules.shadowed).mockResolvedValue([]);
  vi.mocked(fakeApi.rules.state).mockResolvedValue({ version: 1 });
  vi.mocked(fakeApi.rules.lint).mockImplementation(async (input) => ({ input, warnings: [] }));
  vi.mocked(fakeApi.approvals.pending).mockResolvedValue([]);
  vi.mocked(fakeApi.system.settings).mockResolvedValue({ approvalTimeoutSeconds: 300 });
  vi.mocked(fakeApi.system.auditStatus).mockResolvedValue({ lastFailure: null });
  vi.mocked(fakeApi.runs.live).mockResolvedValue([]);
  vi.mocked(fakeApi.runs.auto).mockResolvedValue({ tasks: [] });
  vi.mocked(fakeApi.runs.list).mockResolvedValue([]);
  vi.mocked(fakeApi.runs.profiles).mockResolvedValue([]);
  vi.mocked(fakeApi.runs.templates).mockResolvedValue([]);
  vi.mocked(fakeApi.runs.placeholders).mockResolvedValue({});
}

/** Delivers a backend event to every subscriber. */
export function emit<K extends EventName>(name: K, payload: EventMap[K]): void {
  handlers.get(name)?.forEach((fn) => fn(payload));
}

/** Acts as if events may have been missed (reconnect or events:lagged). */
export function resync(): void {
  reconnect.forEach((fn) => fn());
}

/** The event names someone is subscribed to now. */
export function subscribedEvents(): string[] {
  return [...handlers].filter(([, set]) => set.size > 0).map(([name]) => name).sort();
}

/** Acts as if the backend answered 401. */
export function triggerUnauthorized(): void {
  unauthorized.forEach((fn) => fn());
}

export function fakeApiModule() {
  return {
    api: fakeApi,
    ApiError,
    CONDITION_OPS,
    DECISIONS,
    REQUEST_KINDS,
    REQUEST_KIND_OF,
    RULE_KINDS,
    subscribe(name: string, fn: Fn) {
      let set = handlers.get(name);
      if (!set) handlers.set(name, (set = new Set()));
      set.add(fn);
      return () => set.delete(fn);
    },
    onReconnect(fn: () => void) {
      reconnect.add(fn);
      return () => reconnect.delete(fn);
    },
    onUnauthorized(fn: () => void) {
      unauthorized.add(fn);
      return () => unauthorized.delete(fn);
    },
    transportKind: async () => 'http' as const,
  };
}
