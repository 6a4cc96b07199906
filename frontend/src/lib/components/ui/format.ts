import { currentTime } from './clock.svelte';

/**
 * Bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F,
 * U+061C) reorder the text around them: "gnp.exe" after U+202E reads
 * "exe.png". Text agents wrote shows them as visible marks instead, so
 * what a person reads (a path to approve, a task title) is what it says
 * (found by a new-user test).
 */
export function hasControls(text: string): boolean {
  return /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/.test(text);
}

export function showControls(text: string): string {
  return text.replace(/[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/g, (c) => `⟨U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}⟩`);
}

/** Pretty JSON for display; text that is not JSON is shown as it is. */
export function prettyJson(value: unknown): string {
  if (typeof value === 'string') {
    try {
      return showControls(JSON.stringify(JSON.parse(value), null, 2));
    } catch {
      return showControls(value);
    }
  }
  return showControls(JSON.stringify(value ?? null, null, 2));
}

export function relTime(iso: string, now = currentTime()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  const s = Math.round((now - t) / 1000);
  if (s < 5) return 'just now';
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return new Date(t).toLocaleDateString();
}

export function clockTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
}

/** A date and a 24-hour time ("Nov 26, 2026 17:51:09"), as the screens show one moment. */
export function fullTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return `${d.toLocaleDateString([], { year: 'numeric', month: 'short', day: 'numeric' })} ${clockTime(iso)}`;
}

export function latency(us: number): string {
  if (us < 1000) return `${us} µs`;
  if (us < 1_000_000) return `${(us / 1000).toFixed(us < 10_000 ? 1 : 0)} ms`;
  return `${(us / 1_000_000).toFixed(2)} s`;
}

/** A number of seconds in words: "45 s", "10 min", "1 h 30 min". */
export function seconds(n: number): string {
  const h = Math.floor(n / 3600);
  const m = Math.floor((n % 3600) / 60);
  const s = n % 60;
  const parts = [h && `${h} h`, m && `${m} min`, s && `${s} s`].filter(Boolean);
  return parts.length ? parts.join(' ') : '0 s';
}

/** mm:ss until the deadline (never negative). */
export function countdown(deadlineIso: string, now: number): string {
  const left = Math.max(0, Math.ceil((Date.parse(deadlineIso) - now) / 1000));
  const m = Math.floor(left / 60);
  const s = left % 60;
  return `${m}:${String(s).padStart(2, '0')}`;
}

/** An MCP client's self-description, "claude-code 2.1.0"; empty when it gave none. */
export function clientLabel(name?: string, version?: string): string {
  return [name, version].filter(Boolean).join(' ');
}

/**
 * A command line as a shell would read it back: arguments with spaces or
 * shell characters in single quotes, so `sh -c 'echo hi; exit 3'` does not
 * read as three commands.
 */
export function commandLine(command: string, args: readonly string[] = []): string {
  const quote = (a: string) => (a !== '' && /^[A-Za-z0-9_\-./=:@%+,]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
  return [command, ...args].map(quote).join(' ');
}

/** A piece of text as shown: plain, or a web address to open. */
export type TextPart = { text: string; href?: string };

/**
 * Splits text at the http(s) addresses in it, so a message can show them as
 * links. Only http and https: an agent's message must not offer a
 * `javascript:` or `file:` link. Punctuation that ends a sentence, and a
 * closing bracket with no opening one in the address, stay text.
 */
export function linkParts(text: string): TextPart[] {
  text = showControls(text);
  const parts: TextPart[] = [];
  const re = /\bhttps?:\/\/[^\s<>"'`]+/gi;
  let last = 0;
  for (const m of text.matchAll(re)) {
    let url = m[0];
    for (;;) {
      const end = url.at(-1) ?? '';
      if ('.,;:!?'.includes(end)) url = url.slice(0, -1);
      else if (end === ')' && url.split('(').length < url.split(')').length) url = url.slice(0, -1);
      else if (end === ']' && url.split('[').length < url.split(']').length) url = url.slice(0, -1);
      else break;
    }
    let ok = false;
    try {
      ok = ['http:', 'https:'].includes(new URL(url).protocol);
    } catch {
      ok = false;
    }
    if (!ok) continue;
    const at = m.index ?? 0;
    if (at > last) parts.push({ text: text.slice(last, at) });
    parts.push({ text: url, href: url });
    last = at + url.length;
  }
  if (last < text.length) parts.push({ text: text.slice(last) });
  return parts;
}
