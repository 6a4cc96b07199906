// The typed facade over the Go `api.API`: the only module the rest of the
// UI uses to reach the backend. Tests mock this module.
import { ApiError, httpTransport, wailsAvailable, wailsTransport, type Transport } from './transport';
import type {
  ActivityFilter,
  Approval,
  AuditRecord,
  ConfigState,
  EventMap,
  EventName,
  Explanation,
  ImportResult,
  Info,
  Rule,
  RuleBreadth,
  RuleExpiry,
  RuleId,
  RuleInput,
  RulesChanged,
  ServerConfig,
  ServerView,
  Settings,
  ShadowInfo,
  TestCall,
} from './types';

export { ApiError };
export type * from './types';
export { CONDITION_OPS, DECISIONS } from './types';

const unauthorizedListeners = new Set<() => void>();

/** Registers fn to run when the backend says the UI's credential is missing or expired. */
export function onUnauthorized(fn: () => void): () => void {
  unauthorizedListeners.add(fn);
  return () => unauthorizedListeners.delete(fn);
}

function mockRequested(): boolean {
  return typeof location !== 'undefined' && new URLSearchParams(location.search).get('mock') === '1';
}

let transport: Promise<Transport> | null = null;

function getTransport(): Promise<Transport> {
  transport ??= (async () => {
    if (wailsAvailable()) return wailsTransport();
    // Demo data only in development and only when asked for: never a silent
    // fallback, and production builds do not contain it at all.
    if (import.meta.env.DEV && mockRequested()) return (await import('./mock')).mockTransport();
    return httpTransport({ onUnauthorized: () => unauthorizedListeners.forEach((fn) => fn()) });
  })();
  return transport;
}

/** The transport in use ('wails' | 'http' | 'mock'), for UI that differs by host. */
export async function transportKind(): Promise<Transport['kind']> {
  return (await getTransport()).kind;
}

function call<T>(method: string, ...args: unknown[]): Promise<T> {
  return getTransport().then((t) => t.call(method, args) as Promise<T>);
}

/** Subscribes to a backend event; returns the unsubscribe function at once. */
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

/** Runs fn after the event stream reconnected, so stores can resynchronise. */
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

export const api = {
  // Servers
  ListServers: () => call<ServerView[] | null>('ListServers'),
  AddServer: (cfg: ServerConfig) => call<ServerView>('AddServer', cfg),
  UpdateServer: (cfg: ServerConfig) => call<ServerView>('UpdateServer', cfg),
  RemoveServer: (id: string) => call<null>('RemoveServer', id),
  RestartServer: (id: string) => call<null>('RestartServer', id),
  AcceptToolChange: (server: string, tool: string) => call<null>('AcceptToolChange', server, tool),
  ImportServers: (text: string) => call<ImportResult>('ImportServers', text),
  GetConfigState: () => call<ConfigState>('GetConfigState'),
  // Activity
  ListActivity: (filter: ActivityFilter) => call<AuditRecord[] | null>('ListActivity', filter),
  ExportActivity: (filter: ActivityFilter, format: 'json' | 'csv') => call<string>('ExportActivity', filter, format),
  GetInfo: () => call<Info>('GetInfo'),
  // Rules
  ListRules: () => call<Rule[] | null>('ListRules'),
  CreateRule: (input: RuleInput) => call<Rule>('CreateRule', input),
  UpdateRule: (id: RuleId, input: RuleInput) => call<Rule>('UpdateRule', id, input),
  DeleteRule: (id: RuleId) => call<null>('DeleteRule', id),
  TestRule: (t: TestCall) => call<Explanation>('TestRule', t),
  MoveRule: (id: RuleId, delta: -1 | 1) => call<Rule[]>('MoveRule', id, delta),
  ShadowedRules: () => call<ShadowInfo[] | null>('ShadowedRules'),
  GetRulesState: () => call<RulesChanged>('GetRulesState'),
  ExportRules: () => call<string>('ExportRules'),
  ImportRules: (text: string, replace: boolean) => call<number>('ImportRules', text, replace),
  // Approvals
  ListApprovals: () => call<Approval[] | null>('ListApprovals'),
  Approve: (id: string) => call<null>('Approve', id),
  Decline: (id: string, reason: string) => call<null>('Decline', id, reason),
  ApproveAndAddRule: (id: string, breadth: RuleBreadth, expiry: RuleExpiry) =>
    call<null>('ApproveAndAddRule', id, breadth, expiry),
  // Settings
  GetSettings: () => call<Settings>('GetSettings'),
  SetSettings: (s: Settings) => call<null>('SetSettings', s),
};

export type Api = typeof api;
