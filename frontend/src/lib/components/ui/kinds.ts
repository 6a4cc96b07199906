// Words for request kinds and rule kinds, shared by every screen.
import type { RuleKind } from '../../api';

/** Short label of a request kind (tools/call → "tool"). */
export function kindLabel(kind: string): string {
  switch (kind) {
    case 'tools/call':
      return 'tool';
    case 'prompts/get':
      return 'prompt';
    case 'resources/read':
      return 'resource';
    case 'session':
      return 'session';
  }
  return kind || 'tool';
}

/** What the target of a request kind is called ("Tool", "Prompt", "Resource"). */
export function targetNoun(kind: string): string {
  return kind === 'prompts/get' ? 'Prompt' : kind === 'resources/read' ? 'Resource' : 'Tool';
}

/** The rule kinds as the Rules page names them. */
export const RULE_KIND_LABELS: Record<RuleKind, string> = { tool: 'Tool calls', prompt: 'Prompts', resource: 'Resource reads' };

export function ruleKindOf(kind: string | undefined): RuleKind {
  return kind === 'prompt' || kind === 'resource' ? kind : 'tool';
}
