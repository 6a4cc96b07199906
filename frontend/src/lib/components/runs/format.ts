// How runs read in the UI: durations, log lines, tool calls, outcomes.
import type { AutoState, Run, ToolCall } from '../../api';
import { clockTime } from '../ui/format';

/** "4s", "2m 05s", "1h 03m": from start to end (or now, while it runs). */
export function duration(startIso: string, endIso: string | null | undefined, now = Date.now()): string {
  const start = Date.parse(startIso);
  if (Number.isNaN(start)) return '';
  const end = endIso ? Date.parse(endIso) : now;
  const s = Math.max(0, Math.round((end - start) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** A log line: "[2026-01-02T03:04:05Z] text", with Airlock's own lines ("[airlock] …") told apart. */
export interface LogLine {
  /** The line's time, local HH:MM:SS; empty when the line has none. */
  time: string;
  iso: string;
  text: string;
  airlock: boolean;
}

const STAMP = /^\[(\d{4}-\d\d-\d\dT[0-9:.]+Z)\] ?/;

export function splitLine(line: string): LogLine {
  const m = STAMP.exec(line);
  const iso = m?.[1] ?? '';
  const text = m ? line.slice(m[0].length) : line;
  const d = iso ? new Date(iso) : null;
  const time = d && !Number.isNaN(d.getTime()) ? d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }) : '';
  return { time, iso, text, airlock: text.startsWith('[airlock]') };
}

/** A tool call as agents see its name: server__tool (Airlock's own tools by their bare name). */
export function toolName(c: ToolCall): string {
  return c.server && c.server !== 'airlock' ? `${c.server}__${c.tool}` : c.tool;
}

/** What a call's status means, in words. */
export function callStatus(status: string): string {
  switch (status) {
    case 'running':
      return 'in progress';
    case 'ok':
      return 'done';
    case 'tool_error':
      return 'the tool reported an error';
    case 'error':
      return 'refused or failed';
    default:
      return status;
  }
}

/** The badge tone of a run status. */
export const RUN_TONE: Record<string, string> = { running: 'info', completed: 'ok', failed: 'danger', stopped: 'warn' };

/** What started the run, in words: "by hand", "auto-run, attempt 2". */
export function trigger(r: Run): string {
  if (r.trigger === 'auto') return r.attempt > 0 ? `auto-run, attempt ${r.attempt}` : 'auto-run';
  return 'started by hand';
}

/** What started the run, briefly (for a row): "by hand", "auto #2". */
export function triggerShort(r: Run): string {
  if (r.trigger === 'auto') return r.attempt > 0 ? `auto #${r.attempt}` : 'auto';
  return 'by hand';
}

/** How the process ended: "exit 0", "exit 143", or that it never started. */
export function exitText(r: Run): string {
  if (r.status === 'running') return '';
  if (r.exitCode === null || r.exitCode === undefined) return 'no process';
  return `exit ${r.exitCode}`;
}

/** What auto-run holds for a task, in words: a card's badge and the sentence that explains it. */
export function autoText(a: AutoState, agent: string): { badge: string; tone: string; text: string } {
  switch (a.state) {
    case 'gave_up':
      return {
        badge: 'auto-run gave up',
        tone: 'danger',
        text: `Auto-run gave up: ${a.failures === 1 ? 'its attempt' : `all ${a.failures} attempts`} failed. See why in Runs, fix it, then press Run (or move the task out of In progress and back).`,
      };
    case 'retry':
      return {
        badge: a.at ? `retry ${clockTime(a.at)}` : 'retry',
        tone: 'warn',
        text: `Attempt ${a.failures} of ${a.maxAttempts} failed; auto-run tries again${a.at ? ` at ${clockTime(a.at)}` : ' soon'}.`,
      };
    case 'agent_busy':
      return { badge: 'queued', tone: 'muted', text: `Auto-run starts it when ${agent} finishes the task it is running now.` };
    case 'waiting':
      return {
        badge: 'queued',
        tone: 'muted',
        text: `Auto-run starts it when a run ends: it runs at most ${a.maxConcurrent} ${a.maxConcurrent === 1 ? 'task' : 'tasks'} at a time (Run settings).`,
      };
    default:
      return { badge: a.state, tone: 'muted', text: `Auto-run: ${a.state}.` };
  }
}
