// The backend's JSON types come from Go (generated.ts, `go generate
// ./backend/api`). This file adds only what the UI needs on top: the string
// unions and constants the screens switch on, and the old names some
// components still use.
export type * from './generated';
import type { Condition, State, TestResult } from './generated';

/** How a server is reached; the server form's choices. */
export type ServerTransport = 'stdio' | 'http' | 'sse';

export type ServerState = 'starting' | 'running' | 'restarting' | 'failed' | 'stopped';

/** Decisions recorded in the audit log (core.Decision*). */
export type Decision = 'allow' | 'approved' | 'declined' | 'timeout' | 'expired' | 'denied' | 'error';
export const DECISIONS: Decision[] = ['allow', 'approved', 'declined', 'timeout', 'expired', 'denied', 'error'];

/** Result statuses recorded in the audit log; `running` until the request ends. */
export type CallStatus = 'running' | 'ok' | 'tool_error' | 'error';

/**
 * The MCP methods that pass the pipeline (core.Kind*): an agent's requests,
 * then the requests a server makes of the agent's client during a call,
 * which Airlock relays.
 */
export type RequestKind = 'tools/call' | 'prompts/get' | 'resources/read' | 'sampling/createMessage' | 'elicitation/create';
export const REQUEST_KINDS: RequestKind[] = ['tools/call', 'prompts/get', 'resources/read', 'sampling/createMessage', 'elicitation/create'];
/** Audit records also log refused foreign-session requests, subscriptions and completions. */
export type AuditKind = RequestKind | 'session' | 'resources/subscribe' | 'completion/complete';

/** What a rule applies to (hitl.Kind*), in the order the backend lists them. */
export type RuleKind = 'tool' | 'prompt' | 'resource' | 'sampling' | 'elicitation';
export const RULE_KINDS: RuleKind[] = ['tool', 'prompt', 'resource', 'sampling', 'elicitation'];

/** The request kind a rule of kind k decides. */
export const REQUEST_KIND_OF: Record<RuleKind, RequestKind> = {
  tool: 'tools/call',
  prompt: 'prompts/get',
  resource: 'resources/read',
  sampling: 'sampling/createMessage',
  elicitation: 'elicitation/create',
};

/** A verdict's outcome (core.Allow/Ask/Deny). */
export type Outcome = 'allow' | 'ask' | 'deny';

export type ConditionOp = 'equals' | 'glob' | 'prefix' | 'regex' | 'inside';
export const CONDITION_OPS: ConditionOp[] = ['equals', 'glob', 'prefix', 'regex', 'inside'];

/** How risky a call is, from the tool's annotations (hitl.Risk*). */
export type Risk = 'destructive' | 'open_world' | 'modifies' | 'read_only' | 'unknown';
export type ApprovalStatus = 'pending' | 'approved' | 'declined' | 'timeout' | 'expired' | 'cancelled';

/** "Approve and add rule": how broad the new rule is, and when it expires. */
export type RuleBreadth = 'tool' | 'tool_args' | 'server';
/** Who a rule made from an approval is for: only the agent that made the call, or every agent. */
export type RuleScope = 'agent' | 'session' | 'everyone';
export type RuleExpiry = 'none' | '1h' | '8h' | '24h';

/** Rule ids are opaque to the UI: whatever the backend returns is passed back. */
export type RuleId = string;

// Older names, kept where a rename would only churn.
export type ConfigState = State;
export type Explanation = TestResult;
export type RuleCondition = Condition;
