import { api } from '../api';
import type { Approval, RuleBreadth, RuleExpiry, RuleScope, Settings } from '../api';
import { on, onResync } from '../events';
import { errorText } from './util';

/** What the agent wants to do, as a verb for "wants to … X". */
export function verbOf(kind: string): string {
  return kind === 'prompts/get' ? 'get the prompt' : kind === 'resources/read' ? 'read' : 'call';
}

/**
 * What became of a call the dialog showed that ended without this window
 * deciding it, in words ("The call echo from alice timed out …").
 */
export function goneText(a: Approval): string {
  const what = `The call ${a.tool} from ${a.agent || 'an agent'}`;
  const by = a.decidedBy ? ` by ${a.decidedBy}` : ' elsewhere';
  switch (a.status) {
    case 'timeout':
      return `${what} timed out waiting for you and was declined; the agent was told so.`;
    case 'cancelled':
      return `${what} was cancelled: the agent stopped waiting for it.`;
    case 'expired':
      return `${what} ended: Airlock stopped while it waited.`;
    case 'approved':
      return `${what} was approved${by}.`;
    case 'declined':
      return `${what} was declined${by}.`;
    default:
      return `${what} is no longer waiting (${a.status || 'ended'}).`;
  }
}

/** The queue of calls waiting for a person, and the dialog that decides them. */
export class ApprovalsStore {
  /** Pending approvals, oldest first. */
  pending = $state<Approval[]>([]);
  loaded = $state(false);
  error = $state<string | null>(null);
  /** Whether the ToolApprovalDialog is showing. */
  dialogOpen = $state(false);
  /** The approval the dialog shows. */
  currentId = $state<string | null>(null);
  notificationPermission = $state<NotificationPermission | 'unsupported'>(
    typeof Notification === 'undefined' ? 'unsupported' : Notification.permission,
  );
  settings = $state<Settings | null>(null);
  /** The last call the open dialog showed that ended without this window (goneText says how); cleared when a call arrives or on dismiss. */
  gone = $state<Approval | null>(null);
  /** A word for the person after the dialog closed (what became of the call; the rule just added), until dismissed or the next call. */
  notice = $state<{ tone: 'info' | 'warn'; text: string; href: string; link: string } | null>(null);

  current: Approval | undefined = $derived(this.pending.find((a) => a.id === this.currentId));
  /** 0-based position of the dialog's approval in the queue. */
  index: number = $derived(this.pending.findIndex((a) => a.id === this.currentId));

  private seq = 0;
  /** What the events said while a load was in flight: its answer may predate them. */
  private duringLoad: { requested: Approval[]; resolved: Set<string> } | null = null;
  /** Every approval this store has shown or queued; one it has not seen opens the dialog. */
  private seen = new Set<string>();

  /**
   * Loads the queue (at start, and whenever events may have been missed).
   * Events that arrive while the answer is on its way win over it: a call
   * decided meanwhile stays decided, one requested meanwhile stays queued.
   */
  async load(): Promise<void> {
    const seq = ++this.seq;
    this.duringLoad = { requested: [], resolved: new Set() };
    try {
      const rows = (await api.approvals.pending()) ?? [];
      if (seq !== this.seq) return; // a newer load won
      const during = this.duringLoad ?? { requested: [], resolved: new Set<string>() };
      this.duringLoad = null;
      const list = rows.filter((a) => !during.resolved.has(a.id));
      for (const a of during.requested) {
        if (!during.resolved.has(a.id) && !list.some((x) => x.id === a.id)) list.push(a);
      }
      const fresh = list.filter((a) => !this.seen.has(a.id));
      fresh.forEach((a) => this.seen.add(a.id));
      this.pending = list;
      this.error = null;
      if (this.currentId && !list.some((a) => a.id === this.currentId)) this.currentId = list[0]?.id ?? null;
      if (list.length === 0) this.dialogOpen = false;
      // Calls nobody has seen yet (at start, or missed while the stream was down) need a person now.
      else if (fresh.length && !this.dialogOpen) this.open(fresh[0].id);
    } catch (err) {
      if (seq === this.seq) {
        this.duringLoad = null;
        this.error = errorText(err);
      }
    } finally {
      if (seq === this.seq) this.loaded = true;
    }
  }

  connect(): () => void {
    const offs = [
      on('approval:requested', (a) => this.requested(a)),
      on('approval:resolved', (a) => this.resolved(a.id, a)),
      onResync(() => void this.load()),
    ];
    return () => offs.forEach((off) => off());
  }

  requested(a: Approval): void {
    this.gone = null;
    this.notice = null;
    this.duringLoad?.requested.push(a);
    this.seen.add(a.id);
    if (this.pending.some((x) => x.id === a.id)) return;
    this.pending = [...this.pending, a];
    if (!this.dialogOpen) {
      this.currentId = a.id;
      this.dialogOpen = true;
    }
    this.notify(a);
  }

  /**
   * Removes a decided approval; the dialog moves on to the next one. ended
   * is the call as it ended, when an event said so (not this window's own
   * decision): if the dialog was showing it, gone keeps it.
   */
  resolved(id: string, ended?: Approval): void {
    this.duringLoad?.resolved.add(id);
    const i = this.pending.findIndex((a) => a.id === id);
    if (i < 0) return;
    this.gone = ended && this.dialogOpen && this.currentId === id ? { ...this.pending[i], ...ended } : null;
    if (this.gone && this.pending.length === 1) this.notice = { tone: 'warn', text: goneText(this.gone), href: '#/activity', link: 'See its record' };
    const next = this.pending.filter((a) => a.id !== id);
    if (this.currentId === id) {
      this.currentId = next[Math.min(i, next.length - 1)]?.id ?? null;
    }
    this.pending = next;
    if (next.length === 0) this.dialogOpen = false;
  }

  open(id?: string): void {
    this.notice = null;
    this.currentId = id ?? (this.current ? this.currentId : (this.pending[0]?.id ?? null));
    this.dialogOpen = this.currentId != null;
  }

  close(): void {
    this.dialogOpen = false;
  }

  dismissNotice(): void {
    this.notice = null;
  }

  step(delta: number): void {
    const n = this.pending.length;
    if (n === 0) return;
    const i = (Math.max(this.index, 0) + delta + n) % n;
    this.currentId = this.pending[i].id;
  }

  async approve(id: string): Promise<void> {
    await api.approvals.approve(id);
    this.notice = null;
    this.resolved(id);
  }

  async decline(id: string, reason: string): Promise<void> {
    await api.approvals.decline(id, reason);
    this.notice = null;
    this.resolved(id);
  }

  /** Approves the call and adds the rule; rule is how the person chose it, in words, for the notice that confirms it. */
  async approveAndAddRule(id: string, breadth: RuleBreadth, expiry: RuleExpiry, scope: RuleScope, rule = ''): Promise<void> {
    const a = this.pending.find((p) => p.id === id); // the event that it was decided may come first
    await api.approvals.approveAndAddRule(id, breadth, expiry, scope);
    this.resolved(id);
    this.notice = {
      tone: 'info',
      text: `Approved ${a?.tool ?? 'the call'}, and added a rule${rule ? `: ${rule}` : ''}. Calls it matches now go through without asking.`,
      href: '#/rules',
      link: 'See the new rule',
    };
  }

  async loadSettings(): Promise<void> {
    this.settings = await api.system.settings();
  }

  async saveSettings(s: Settings): Promise<void> {
    await api.system.setSettings(s);
    this.settings = s;
  }

  async requestNotifications(): Promise<void> {
    if (typeof Notification === 'undefined') return;
    this.notificationPermission = await Notification.requestPermission();
  }

  /** Shows a system notification when the tab is hidden and the person allowed it. */
  private notify(a: Approval): void {
    if (typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
    if (typeof document === 'undefined' || !document.hidden) return;
    try {
      const n = new Notification(`Approval needed: ${a.tool}`, {
        body: `${a.agent || 'An agent'} wants to ${verbOf(a.kind)} ${a.tool} on ${a.server}.`,
        tag: `airlock-approval-${a.id}`,
        requireInteraction: true,
      });
      n.onclick = () => {
        window.focus();
        this.open(a.id);
        n.close();
      };
    } catch {
      // Some browsers only allow notifications from a service worker; the badge still shows.
    }
  }
}
