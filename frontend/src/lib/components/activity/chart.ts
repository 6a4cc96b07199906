// Labels and scales of the Activity chart, kept out of the component so
// that they read (and test) as plain functions.
import type { TimelineBucket } from '../../api';
import { SERIES, type Span } from '../../stores/activityTimeline.svelte';

/** The top of the count axis: n rounded up to 1, 2 or 5 times a power of ten (at least 1). */
export function niceMax(n: number): number {
  if (n <= 1) return 1;
  const p = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 5, 10]) if (m * p >= n) return m * p;
  return 10 * p;
}

const clock = (d: Date) => d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
const dayClock = (d: Date) =>
  d.toLocaleString([], { weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });

/** Minutes between axis labels, in local time: every 10 minutes, 3 hours, or day. */
const TICK_MINUTES: Record<Span, number> = { hour: 10, day: 180, week: 1440 };

/** The axis label of a bar starting at iso, or '' when it starts at no round local time. */
export function tickLabel(iso: string, span: Span): string {
  const d = new Date(iso);
  const minutes = d.getHours() * 60 + d.getMinutes();
  if (d.getSeconds() !== 0 || d.getMilliseconds() !== 0 || minutes % TICK_MINUTES[span] !== 0) return '';
  // "Fri 20": the locale's weekday, then the day (locales order the pair differently when asked for both).
  return span === 'week' ? `${d.toLocaleDateString([], { weekday: 'short' })} ${d.getDate()}` : clock(d);
}

/** "10:05–10:06" (or "Tue 14:00–15:00" on the week's chart): the bar's stretch of time, local. */
export function bucketRange(b: Pick<TimelineBucket, 'start' | 'end'>, span: Span): string {
  const start = new Date(b.start);
  const end = new Date(b.end);
  return `${span === 'week' ? dayClock(start) : clock(start)}–${clock(end)}`;
}

/** What a screen reader says for a bar: its time, its total and its decisions. */
export function barLabel(b: TimelineBucket, span: Span): string {
  const parts = SERIES.filter((s) => b[s.key] > 0).map((s) => `${b[s.key]} ${s.label}`);
  const total = b.total === 0 ? 'no requests' : `${b.total} ${b.total === 1 ? 'request' : 'requests'}`;
  return `${bucketRange(b, span)}: ${total}${parts.length ? ` (${parts.join(', ')})` : ''}`;
}
