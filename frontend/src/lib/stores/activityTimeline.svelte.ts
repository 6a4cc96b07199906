import { api } from '../api';
import type { ActivityFilter, Timeline, TimelineBucket } from '../api';
import { errorText } from './util';

/** The ranges the Activity chart offers, each with bars of a whole number of minutes. */
export const SPANS = {
  hour: { label: 'Last hour', short: '1 h', ms: 3_600_000, buckets: 60 },
  day: { label: 'Last 24 hours', short: '24 h', ms: 86_400_000, buckets: 96 },
  week: { label: 'Last 7 days', short: '7 d', ms: 7 * 86_400_000, buckets: 168 },
} as const;
export type Span = keyof typeof SPANS;

/** Live records reload the chart at most this often (a full reload, not a count kept in the page). */
export const RELOAD_EVERY_MS = 3000;

/**
 * The decision groups the chart stacks, bottom up, with the colour of their
 * decision badge in the table.
 */
export const SERIES = [
  { key: 'allowed', label: 'auto-allowed', color: 'var(--ok)', decisions: ['allow'] },
  { key: 'approved', label: 'approved', color: 'var(--accent)', decisions: ['approved'] },
  { key: 'refused', label: 'declined / denied', color: 'var(--danger)', decisions: ['declined', 'denied'] },
  { key: 'expired', label: 'timed out / expired', color: 'var(--warn)', decisions: ['timeout', 'expired'] },
  { key: 'errors', label: 'error', color: 'var(--muted)', decisions: ['error'] },
  { key: 'pending', label: 'deciding', color: 'var(--info)', decisions: [''] },
  { key: 'other', label: 'other', color: 'var(--faint)', decisions: [] },
] as const satisfies readonly { key: keyof TimelineBucket; label: string; color: string; decisions: readonly string[] }[];
export type SeriesKey = (typeof SERIES)[number]['key'];

/**
 * The Activity chart: requests per bar of time by decision, for the table's
 * filters (not its time range — picking a bar sets that). The window ends
 * at the next whole bar after now and slides when a bar's time is over;
 * live records reload it, throttled.
 */
export class ActivityTimelineStore {
  span = $state<Span>('hour');
  data = $state<Timeline | null>(null);
  loading = $state(false);
  loaded = $state(false);
  error = $state<string | null>(null);
  private seq = 0;
  private lastLoad = -Infinity;
  private reloadTimer: ReturnType<typeof setTimeout> | undefined;
  private slideTimer: ReturnType<typeof setTimeout> | undefined;
  private connected = false;

  /** filter gives the table's filters; now is the clock (tests set it). */
  constructor(
    private filter: () => ActivityFilter,
    private now: () => number = Date.now,
  ) {}

  /** The window for the span at now: whole bars, the last one holding now. */
  window(): { from: Date; to: Date } {
    const { ms, buckets } = SPANS[this.span];
    const width = ms / buckets;
    const to = Math.floor(this.now() / width) * width + width;
    return { from: new Date(to - ms), to: new Date(to) };
  }

  setSpan(span: Span): void {
    if (span === this.span) return;
    this.span = span;
    this.data = null;
    this.loaded = false;
    void this.load();
  }

  async load(): Promise<void> {
    const seq = ++this.seq;
    clearTimeout(this.reloadTimer);
    this.reloadTimer = undefined;
    this.lastLoad = this.now();
    const { from, to } = this.window();
    this.loading = true;
    try {
      const data = await api.activity.timeline(this.filter(), from.toISOString(), to.toISOString(), SPANS[this.span].buckets);
      if (seq !== this.seq) return; // a newer span, filter or record won
      this.data = data ?? null;
      this.error = null;
    } catch (err) {
      if (seq === this.seq) this.error = errorText(err);
    } finally {
      if (seq === this.seq) {
        this.loading = false;
        this.loaded = true;
        this.scheduleSlide(to.getTime());
      }
    }
  }

  /**
   * Asks for a reload because matching records arrived: now if the last
   * load is a while ago, else once RELOAD_EVERY_MS after it (bursts of
   * records make one reload).
   */
  poke(): void {
    if (!this.connected || this.reloadTimer !== undefined) return;
    const wait = Math.max(0, this.lastLoad + RELOAD_EVERY_MS - this.now());
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = undefined;
      void this.load();
    }, wait);
  }

  /** While the screen shows, the window slides when its last bar's time is over. */
  connect(): () => void {
    this.connected = true;
    return () => {
      this.connected = false;
      clearTimeout(this.reloadTimer);
      clearTimeout(this.slideTimer);
      this.reloadTimer = this.slideTimer = undefined;
    };
  }

  private scheduleSlide(to: number): void {
    clearTimeout(this.slideTimer);
    if (!this.connected) return;
    this.slideTimer = setTimeout(() => void this.load(), Math.max(0, to - this.now()) + 50);
  }
}
