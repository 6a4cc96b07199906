import { api } from '../api';
import type { Explanation, Rule, RuleId, RuleInput, RuleLint, ShadowInfo, TestCall } from '../api';
import { on, onResync } from '../events';
import { errorText } from './util';

/** The HITL rules in evaluation order (tool rules, then prompt rules, then resource rules), and which of them can never fire. */
export class RulesStore {
  rules = $state<Rule[]>([]);
  shadowed = $state<ShadowInfo[]>([]);
  version = $state<number | null>(null);
  /** Why the rules file was rejected (the last good rules stay in force). */
  fileError = $state<string | null>(null);
  loading = $state(false);
  loaded = $state(false);
  error = $state<string | null>(null);

  private seq = 0;

  async load(): Promise<void> {
    const seq = ++this.seq;
    this.loading = true;
    try {
      const [rules, shadowed, state] = await Promise.all([api.rules.list(), api.rules.shadowed(), api.rules.state()]);
      if (seq !== this.seq) return; // a newer load (after a newer change) won
      this.rules = rules ?? [];
      this.shadowed = shadowed ?? [];
      this.version = state?.version ?? null;
      this.fileError = state?.fileError || null;
      this.error = null;
    } catch (err) {
      if (seq === this.seq) this.error = errorText(err);
    } finally {
      if (seq === this.seq) {
        this.loading = false;
        this.loaded = true;
      }
    }
  }

  connect(): () => void {
    const offs = [
      on('rules:changed', (p) => {
        this.version = p?.version ?? null;
        this.fileError = p?.fileError || null;
        void this.load();
      }),
      onResync(() => void this.load()),
    ];
    return () => offs.forEach((off) => off());
  }

  shadowOf(id: RuleId): ShadowInfo | undefined {
    return this.shadowed.find((s) => String(s.ruleId) === String(id));
  }

  /**
   * The rule's number in evaluation order (1 = checked first) over every
   * rule, as the backend's explanations name it ("rule #3 [id]"); 0 for a
   * rule not in the list.
   */
  position(id: RuleId | null | undefined): number {
    return id == null ? 0 : this.rules.findIndex((r) => r.id === id) + 1;
  }

  /** "#3" for a listed rule, else the id itself. */
  label(id: RuleId): string {
    const n = this.position(id);
    return n > 0 ? `#${n}` : id;
  }

  async create(input: RuleInput): Promise<Rule> {
    const r = await api.rules.create(input);
    await this.load();
    return r;
  }

  async update(id: RuleId, input: RuleInput): Promise<Rule> {
    const r = await api.rules.update(id, input);
    await this.load();
    return r;
  }

  async remove(id: RuleId): Promise<void> {
    await api.rules.delete(id);
    await this.load();
  }

  /**
   * Moves a rule one place in evaluation order. The backend picks the
   * priority (with the same ordering rules the engine uses), renumbering
   * when equal priorities leave no room.
   */
  async move(id: RuleId, delta: -1 | 1): Promise<void> {
    await api.rules.move(id, delta);
    await this.load();
  }

  test(call: TestCall): Promise<Explanation> {
    return api.rules.test(call);
  }

  /** Warnings about a rule being written (unknown server, a name as agents see it, a global rule). */
  lint(input: RuleInput): Promise<RuleLint> {
    return api.rules.lint(input);
  }

  exportText(): Promise<string> {
    return api.rules.export();
  }

  async importText(text: string, replace: boolean): Promise<number> {
    const n = await api.rules.import(text, replace);
    await this.load();
    return n;
  }
}

export function toInput(r: Rule): RuleInput {
  return {
    kind: r.kind || 'tool',
    serverId: r.serverId ?? null,
    toolName: r.toolName ?? null,
    toolPattern: r.toolPattern ?? null,
    autoApprove: r.autoApprove,
    priority: r.priority,
    conditions: r.conditions ?? [],
    agentId: r.agentId ?? null,
    sessionId: r.sessionId ?? null,
    expiresAt: r.expiresAt ?? null,
  };
}

export { errorText };
