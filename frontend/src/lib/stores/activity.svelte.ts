import { api } from '../api';
import type { ActivityFilter, AuditRecord } from '../api';
import { on, onResync } from '../events';
import { errorText } from './util';

const PAGE = 100;
/** Live rows kept in memory; older ones are a "Load older" away. */
const MAX_ROWS = 1000;

export type ActivityFilterFields = Required<Pick<ActivityFilter, 'agent' | 'server' | 'tool' | 'decision'>>;

export function matches(r: AuditRecord, f: ActivityFilterFields): boolean {
  return (
    (!f.agent || r.agent === f.agent) &&
    (!f.server || r.server === f.server) &&
    (!f.tool || r.tool === f.tool) &&
    (!f.decision || r.decision === f.decision)
  );
}

/** The audit log, newest first, filtered, with live prepends. */
export class ActivityStore {
  records = $state<AuditRecord[]>([]);
  filter = $state<ActivityFilterFields>({ agent: '', server: '', tool: '', decision: '' });
  loading = $state(false);
  loaded = $state(false);
  hasMore = $state(false);
  error = $state<string | null>(null);
  private seq = 0;

  private query(): ActivityFilter {
    const q: ActivityFilter = { limit: PAGE };
    for (const k of ['agent', 'server', 'tool', 'decision'] as const) {
      const v = this.filter[k].trim();
      if (v) q[k] = v;
    }
    return q;
  }

  /** The records matching the current filters, as a JSON or CSV file's text. */
  async exportText(format: 'json' | 'csv'): Promise<string> {
    const q = this.query();
    delete q.limit;
    return api.ExportActivity(q, format);
  }

  async load(): Promise<void> {
    const seq = ++this.seq;
    this.loading = true;
    try {
      const rows = (await api.ListActivity(this.query())) ?? [];
      if (seq !== this.seq) return; // a newer filter won
      this.records = rows;
      this.hasMore = rows.length >= PAGE;
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

  async loadOlder(): Promise<void> {
    const last = this.records.at(-1);
    if (!last) return;
    this.loading = true;
    try {
      const rows = (await api.ListActivity({ ...this.query(), beforeId: last.id })) ?? [];
      this.records = [...this.records, ...rows.filter((r) => !this.records.some((x) => x.id === r.id))];
      this.hasMore = rows.length >= PAGE;
    } catch (err) {
      this.error = errorText(err);
    } finally {
      this.loading = false;
    }
  }

  /** Adds a batch from `activity:new`, keeping newest first and no duplicates. */
  prepend(batch: AuditRecord[]): void {
    const seen = new Set(this.records.map((r) => r.id));
    const fresh = batch.filter((r) => !seen.has(r.id) && matches(r, this.filter));
    if (fresh.length === 0) return;
    fresh.sort((a, b) => b.id - a.id);
    this.records = [...fresh, ...this.records].slice(0, MAX_ROWS);
  }

  connect(): () => void {
    const offs = [on('activity:new', (batch) => this.prepend(batch ?? [])), onResync(() => void this.load())];
    return () => offs.forEach((off) => off());
  }
}
