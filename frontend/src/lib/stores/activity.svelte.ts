import { api } from '../api';
import type { ActivityFilter, AuditRecord } from '../api';
import { on, onResync } from '../events';
import { errorText } from './util';
import { ActivityTimelineStore } from './activityTimeline.svelte';

const PAGE = 100;
/** Live rows kept in memory; older ones are a "Load older" away. */
const MAX_ROWS = 1000;

export type ActivityFilterFields = Required<Pick<ActivityFilter, 'agent' | 'server' | 'tool' | 'kind' | 'decision'>>;
const FILTER_KEYS = ['agent', 'server', 'tool', 'kind', 'decision'] as const;

export function emptyFilter(): ActivityFilterFields {
  return { agent: '', server: '', tool: '', kind: '', decision: '' };
}

/** A stretch of time the table is narrowed to (a bar picked in the chart): since inclusive, until exclusive. */
export interface TimeRange {
  since: string;
  until: string;
}

/**
 * Whether r passes f (and range), as the backend's filter would decide:
 * agent matches the label or the id; times compare to the millisecond.
 */
export function matches(r: AuditRecord, f: ActivityFilterFields, range: TimeRange | null = null): boolean {
  const agent = f.agent.trim();
  const t = Date.parse(r.time);
  return (
    (!agent || r.agent === agent || r.agentId === agent) &&
    (!f.server.trim() || r.server === f.server.trim()) &&
    (!f.tool.trim() || r.tool === f.tool.trim()) &&
    (!f.kind || r.kind === f.kind) &&
    (!f.decision || r.decision === f.decision) &&
    (!range || (t >= Date.parse(range.since) && t < Date.parse(range.until)))
  );
}

/**
 * Merges a newer version of a record into what we hold: a record is sent
 * when its request begins (status running) and again when it ends, and a
 * late "running" must never undo an end already shown.
 */
function newer(old: AuditRecord, next: AuditRecord): AuditRecord {
  return next.status === 'running' && old.status !== 'running' ? old : next;
}

/**
 * The audit log, newest first by id (ids are arrival order), filtered. Live
 * records are upserted by id, so a running call's row turns into its result
 * in place.
 */
export class ActivityStore {
  records = $state<AuditRecord[]>([]);
  filter = $state<ActivityFilterFields>(emptyFilter());
  /** The time range picked in the chart, or null for all times. */
  range = $state<TimeRange | null>(null);
  /** The chart above the table: the same filters, not the range. */
  readonly timeline = new ActivityTimelineStore(() => this.filterQuery());
  loading = $state(false);
  loaded = $state(false);
  hasMore = $state(false);
  error = $state<string | null>(null);
  private seq = 0;
  /** Live records that arrived while a load was in flight: applied on top of its answer. */
  private arrivedDuringLoad: AuditRecord[] | null = null;

  /** The filters the table and the chart share. */
  private filterQuery(): ActivityFilter {
    const q: ActivityFilter = {};
    for (const k of FILTER_KEYS) {
      const v = this.filter[k].trim();
      if (v) q[k] = v;
    }
    return q;
  }

  private query(): ActivityFilter {
    const q: ActivityFilter = { limit: PAGE, ...this.filterQuery() };
    if (this.range) Object.assign(q, this.range);
    return q;
  }

  get filtering(): boolean {
    return this.range !== null || FILTER_KEYS.some((k) => this.filter[k] !== '');
  }

  clearFilter(): void {
    this.filter = emptyFilter();
    this.range = null;
  }

  /** Narrows the table to range (a bar of the chart), or to all times again with null. */
  pickRange(range: TimeRange | null): void {
    this.range = range;
    void this.load();
  }

  /** The records matching the current filters, as a JSON or CSV file's text. */
  async exportText(format: 'json' | 'csv'): Promise<string> {
    const q = this.query();
    delete q.limit;
    return api.activity.export(q, format);
  }

  async load(): Promise<void> {
    const seq = ++this.seq;
    this.loading = true;
    this.arrivedDuringLoad = [];
    try {
      const rows = (await api.activity.list(this.query())) ?? [];
      if (seq !== this.seq) return; // a newer filter won
      const arrived = this.arrivedDuringLoad ?? [];
      this.arrivedDuringLoad = null;
      this.records = [...rows].sort((a, b) => b.id - a.id);
      this.hasMore = rows.length >= PAGE;
      this.error = null;
      this.upsert(arrived);
    } catch (err) {
      if (seq === this.seq) {
        this.arrivedDuringLoad = null;
        this.error = errorText(err);
      }
    } finally {
      if (seq === this.seq) {
        this.loading = false;
        this.loaded = true;
      }
    }
  }

  async loadOlder(): Promise<void> {
    const last = this.records.at(-1);
    if (!last) return;
    this.loading = true;
    try {
      const rows = (await api.activity.list({ ...this.query(), beforeId: last.id })) ?? [];
      const have = new Set(this.records.map((r) => r.id));
      this.records = [...this.records, ...rows.filter((r) => !have.has(r.id)).sort((a, b) => b.id - a.id)];
      this.hasMore = rows.length >= PAGE;
    } catch (err) {
      this.error = errorText(err);
    } finally {
      this.loading = false;
    }
  }

  /**
   * Applies a batch from `activity:new`: a record we show is replaced in
   * place; a new one that passes the filters is inserted by id — unless it
   * is older than the oldest row loaded while older pages exist, where it
   * belongs to a page not loaded yet.
   */
  upsert(batch: AuditRecord[]): void {
    if (batch.length === 0) return;
    this.arrivedDuringLoad?.push(...batch);
    const byId = new Map(this.records.map((r) => [r.id, r]));
    const oldest = this.records.at(-1)?.id ?? -Infinity;
    let changed = false;
    for (const r of batch) {
      const have = byId.get(r.id);
      if (have) {
        const next = newer(have, r);
        if (next !== have) {
          byId.set(r.id, next);
          changed = true;
        }
      } else if (matches(r, this.filter, this.range) && (!this.hasMore || r.id > oldest)) {
        byId.set(r.id, r);
        changed = true;
      }
    }
    if (!changed) return;
    this.records = [...byId.values()].sort((a, b) => b.id - a.id).slice(0, MAX_ROWS);
  }

  /** Fetches one whole record (List cuts long arguments). */
  get(id: number): Promise<AuditRecord> {
    return api.activity.get(id);
  }

  /**
   * Subscribes to live records, for the table and the chart; the Activity
   * screen calls it while it shows.
   */
  connect(): () => void {
    const offs = [
      this.timeline.connect(),
      on('activity:new', (batch) => {
        this.upsert(batch ?? []);
        if ((batch ?? []).some((r) => matches(r, this.filter))) this.timeline.poke();
      }),
      onResync(() => {
        void this.load();
        void this.timeline.load();
      }),
    ];
    return () => offs.forEach((off) => off());
  }
}
