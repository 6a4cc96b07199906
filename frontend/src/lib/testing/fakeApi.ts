// A stand-in for lib/api in component tests: every facade method is a
// vi.fn, and tests push backend events with `emit`.
//
//   vi.mock('../../api', async () => (await import('../../testing/fakeApi')).fakeApiModule());
import { vi } from 'vitest';
import { ApiError } from '../api/transport';
import { CONDITION_OPS, DECISIONS } from '../api/types';
import type { Api, EventMap, EventName } from '../api';

type Fn = (payload: unknown) => void;
const handlers = new Map<string, Set<Fn>>();
const unauthorized = new Set<() => void>();

function makeApi(): Api {
  const names: (keyof Api)[] = [
    'ListServers', 'AddServer', 'UpdateServer', 'RemoveServer', 'RestartServer', 'AcceptToolChange', 'ImportServers', 'GetConfigState',
    'ListActivity', 'ExportActivity', 'GetInfo', 'ListRules', 'CreateRule', 'UpdateRule', 'DeleteRule', 'TestRule', 'ShadowedRules', 'GetRulesState', 'MoveRule',
    'ExportRules', 'ImportRules', 'ListApprovals', 'Approve', 'Decline', 'ApproveAndAddRule', 'GetSettings', 'SetSettings',
  ];
  return Object.fromEntries(names.map((n) => [n, vi.fn().mockResolvedValue(null)])) as unknown as Api;
}

export const fakeApi: Api = makeApi();

/** The mocked facade, with the default answers of an empty backend. */
export function resetFakeApi(): void {
  handlers.clear();
  unauthorized.clear();
  for (const fn of Object.values(fakeApi)) (fn as ReturnType<typeof vi.fn>).mockReset().mockResolvedValue(null);
  vi.mocked(fakeApi.ListServers).mockResolvedValue([]);
  vi.mocked(fakeApi.GetConfigState).mockResolvedValue({ path: '/tmp/servers.json', loadedAt: new Date().toISOString() });
  vi.mocked(fakeApi.ListActivity).mockResolvedValue([]);
  vi.mocked(fakeApi.ListRules).mockResolvedValue([]);
  vi.mocked(fakeApi.ShadowedRules).mockResolvedValue([]);
  vi.mocked(fakeApi.GetRulesState).mockResolvedValue({ version: 1 });
  vi.mocked(fakeApi.ListApprovals).mockResolvedValue([]);
  vi.mocked(fakeApi.GetSettings).mockResolvedValue({ approvalTimeoutSeconds: 300 });
}

/** Delivers a backend event to every subscriber. */
export function emit<K extends EventName>(name: K, payload: EventMap[K]): void {
  handlers.get(name)?.forEach((fn) => fn(payload));
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
    subscribe(name: string, fn: Fn) {
      let set = handlers.get(name);
      if (!set) handlers.set(name, (set = new Set()));
      set.add(fn);
      return () => set.delete(fn);
    },
    onReconnect: () => () => {},
    onUnauthorized(fn: () => void) {
      unauthorized.add(fn);
      return () => unauthorized.delete(fn);
    },
    transportKind: async () => 'http' as const,
  };
}
