// Words for request kinds and rule kinds, shared by every screen, so a
// prompt is never called a tool and a resource is named by its URI.
import { REQUEST_KIND_OF, RULE_KINDS } from '../../api';
import type { RuleKind } from '../../api';

/** How the screens word one kind of request and the rules that decide it. */
export interface KindWords {
  /** The rule kind ("tool"). */
  rule: string;
  /** The MCP method ("tools/call"). */
  request: string;
  /** A rule group or filter ("Tool calls"). */
  group: string;
  /** The badge on a rule ("tool calls"). */
  badge: string;
  /** The badge on a request ("tool"). */
  short: string;
  /** One request, as a heading ("Tool call"). */
  noun: string;
  /** What a global rule of this kind covers ("every tool"). */
  every: string;
  /** What the rule decides, for the form. */
  hint: string;
  /**
   * The rule's name fields, or null when requests of this kind have no name
   * of their own (sampling and elicitation requests come from a server).
   */
  names: { name: string; anyName: string; pattern: string; patternEg: string; badgeName: string; badgePattern: string } | null;
  /** A request a server makes of the agent's client while it handles a call. */
  relay: boolean;
}

const WORDS: Record<RuleKind, KindWords> = {
  tool: {
    rule: 'tool', request: REQUEST_KIND_OF.tool, group: 'Tool calls', badge: 'tool calls', short: 'tool', noun: 'Tool call', every: 'every tool',
    hint: 'Decides tools/call: an agent calling a tool.',
    names: { name: 'Tool name', anyName: 'any tool', pattern: 'Tool pattern', patternEg: 'e.g. read_*', badgeName: 'tool', badgePattern: 'pattern' },
    relay: false,
  },
  prompt: {
    rule: 'prompt', request: REQUEST_KIND_OF.prompt, group: 'Prompts', badge: 'prompts', short: 'prompt', noun: 'Prompt', every: 'every prompt',
    hint: 'Decides prompts/get: an agent fetching a prompt template.',
    names: { name: 'Prompt name', anyName: 'any prompt', pattern: 'Prompt pattern', patternEg: 'e.g. review_*', badgeName: 'prompt', badgePattern: 'pattern' },
    relay: false,
  },
  resource: {
    rule: 'resource', request: REQUEST_KIND_OF.resource, group: 'Resource reads', badge: 'resource reads', short: 'resource', noun: 'Resource read', every: 'every resource',
    hint: 'Decides resources/read: an agent reading a resource, matched by its URI.',
    names: { name: 'Resource URI', anyName: 'any resource', pattern: 'URI pattern', patternEg: 'e.g. file:///home/me/projects/*', badgeName: 'uri', badgePattern: 'uri pattern' },
    relay: false,
  },
  sampling: {
    rule: 'sampling', request: REQUEST_KIND_OF.sampling, group: 'Sampling', badge: 'sampling', short: 'sampling', noun: 'Sampling request', every: 'every sampling request',
    hint: "Decides sampling/createMessage: a server asking the agent's model for a message while it handles a call.",
    names: null,
    relay: true,
  },
  elicitation: {
    rule: 'elicitation', request: REQUEST_KIND_OF.elicitation, group: 'Elicitation', badge: 'elicitation', short: 'elicitation', noun: 'Elicitation request', every: 'every elicitation request',
    hint: "Decides elicitation/create: a server asking the agent's user for input while it handles a call.",
    names: null,
    relay: true,
  },
};

/** A kind this UI does not know yet: named by its own word, never mistaken for a tool. */
function unknownWords(rule: string, request: string): KindWords {
  return {
    rule, request, group: rule, badge: rule, short: rule, noun: request || rule, every: `every ${rule} request`,
    hint: `Decides ${request || rule} requests.`, names: null, relay: false,
  };
}

/** The words for a rule kind ("" is a tool rule, as in rules files of seed 002). */
export function ruleWords(kind: string | undefined): KindWords {
  const k = kind || 'tool';
  return (WORDS as Record<string, KindWords>)[k] ?? unknownWords(k, '');
}

/** The words for a request kind (an MCP method; "" is a tool call). */
export function requestWords(kind: string | undefined): KindWords {
  const k = kind || 'tools/call';
  return Object.values(WORDS).find((w) => w.request === k) ?? unknownWords(k.split('/')[0], k);
}

/**
 * Audit kinds that are not request kinds rules decide: a request refused at
 * the door, a resource subscription (refused ones are recorded), and a
 * completion (argument suggestions for a prompt or resource template).
 */
const AUDIT_ONLY: Record<string, { short: string; noun: string }> = {
  session: { short: 'session', noun: 'Refused session request' },
  'resources/subscribe': { short: 'subscribe', noun: 'Resource subscription' },
  'completion/complete': { short: 'completion', noun: 'Completion' },
};

/** Short label of a request kind (tools/call → "tool"); "session" for a refused session request. */
export function kindLabel(kind: string): string {
  return AUDIT_ONLY[kind]?.short ?? requestWords(kind).short;
}

/** One request of this kind, as a heading ("Tool call", "Resource read"). */
export function targetNoun(kind: string): string {
  return AUDIT_ONLY[kind]?.noun ?? requestWords(kind).noun;
}

/** The rule kinds the Rules page offers, in evaluation order. */
export const RULE_KIND_WORDS: KindWords[] = RULE_KINDS.map((k) => WORDS[k]);
