// Mirrors of the Go facade's JSON types (backend/core). Keep field names in
// sync with the json tags there.

export type Transport = 'stdio' | 'http' | 'sse';

export interface ServerConfig {
  id: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
  type?: Transport;
  headers?: Record<string, string>;
  disabled?: boolean;
  /** Fields Airlock does not know; kept so import → export loses nothing. */
  extra?: Record<string, unknown>;
}

export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface ToolInfo {
  serverId: string;
  name: string;
  exposedName: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  annotations?: ToolAnnotations;
  /** Set when the server now describes the tool differently from the definition you accepted. */
  changed?: ToolChange;
}

export interface ToolChange {
  /** Which parts changed: title, description, inputSchema, outputSchema, annotations. */
  fields: string[];
  /** The accepted definition, as JSON text. */
  accepted: string;
  since: string;
}

export type ServerState = 'starting' | 'running' | 'restarting' | 'failed' | 'stopped';

export interface ServerStatus {
  id: string;
  transport: string;
  state: ServerState;
  pid?: number;
  restarts: number;
  lastError?: string;
  stderrTail: string[] | null;
  tools: ToolInfo[] | null;
  since: string;
}

export interface ServerView {
  config: ServerConfig;
  status: ServerStatus;
}

export interface ConfigState {
  path: string;
  /** The last invalid edit of the servers file; the last good config is kept. */
  error?: string;
  loadedAt: string;
}

export interface ImportResult {
  added: string[] | null;
  skipped: { id: string; reason: string }[] | null;
}

export type Decision = 'allow' | 'approved' | 'declined' | 'timeout' | 'expired' | 'denied' | 'error';
export const DECISIONS: Decision[] = ['allow', 'approved', 'declined', 'timeout', 'expired', 'denied', 'error'];

export type CallStatus = 'ok' | 'tool_error' | 'error';

export interface AuditRecord {
  /** The MCP client's own name and version, as it reported them (shown, never used to decide). */
  client?: string;
  id: number;
  time: string;
  agent: string;
  session: string;
  server: string;
  tool: string;
  /** JSON text with secrets redacted. */
  arguments: string;
  argsDigest: string;
  decision: Decision;
  reason: string;
  ruleId?: string;
  ruleSetVersion?: number;
  approver?: string;
  waitMs?: number;
  status: CallStatus;
  errorCode?: string;
  error?: string;
  latencyUs: number;
}

export interface ActivityFilter {
  agent?: string;
  server?: string;
  tool?: string;
  decision?: string;
  beforeId?: number;
  limit?: number;
}

export interface Info {
  version: string;
  mcpUrl: string;
  sseUrl: string;
  agentToken: string;
  dataDir: string;
  configPath: string;
}

export type ConditionOp = 'equals' | 'glob' | 'prefix' | 'regex' | 'inside';
export const CONDITION_OPS: ConditionOp[] = ['equals', 'glob', 'prefix', 'regex', 'inside'];

export interface RuleCondition {
  path: string;
  op: ConditionOp;
  value: string;
}

/** Rule ids are opaque to the UI: whatever the backend returns is passed back. */
export type RuleId = string;

export interface RuleInput {
  serverId: string | null;
  toolName: string | null;
  toolPattern: string | null;
  autoApprove: boolean;
  priority: number;
  conditions: RuleCondition[];
  agentId: string | null;
  sessionId: string | null;
  expiresAt: string | null;
}

export interface Rule extends RuleInput {
  id: RuleId;
  createdAt: string;
  updatedAt: string;
}

export interface TestCall {
  serverId: string;
  toolName: string;
  /** JSON text of the call's arguments. */
  arguments: string;
  agentId?: string;
  sessionId?: string;
}

export interface Explanation {
  decision: { autoApprove: boolean; ruleId: RuleId | null; ruleSetVersion: number; reason: string };
  fired: Rule | null;
  skipped: { rule: Rule; why: string }[] | null;
}

export interface ShadowInfo {
  ruleId: RuleId;
  byRuleId: RuleId;
  why: string;
}

export type Risk = 'destructive' | 'open_world' | 'read_only' | 'unknown';
export type ApprovalStatus = 'pending' | 'approved' | 'declined' | 'timeout' | 'expired' | 'cancelled';

export interface Approval {
  /** The MCP client's own name and version, as it reported them. */
  client?: string;
  id: string;
  agent: string;
  session: string;
  server: string;
  tool: string;
  exposedName: string;
  arguments: unknown;
  annotations?: ToolAnnotations;
  risk: Risk;
  warning: string;
  /** A built-in policy that always asks a person for this call. */
  forcedBy?: string;
  ruleId?: RuleId;
  reason: string;
  ruleSetVersion: number;
  createdAt: string;
  deadline: string;
  status: ApprovalStatus;
  decidedBy?: string;
  declineReason?: string;
}

export type RuleBreadth = 'tool' | 'tool_args' | 'server';
export type RuleExpiry = 'none' | '1h' | '8h' | '24h';

export interface Settings {
  approvalTimeoutSeconds: number;
}

export interface RulesChanged {
  version: number;
  /** The rules file in the data directory could not be applied; the last good rules stay. */
  fileError?: string;
}

/** Payloads of the events the backend pushes, by name. */
export interface EventMap {
  'activity:new': AuditRecord[];
  'server:status': ServerStatus;
  'servers:changed': ConfigState;
  'approval:requested': Approval;
  'approval:resolved': Approval;
  'rules:changed': RulesChanged;
}
export type EventName = keyof EventMap;
