import { api, ApiError } from '../api';
import type { AgentView, AutoState, AutoStates, CommandCheck, Profile, Run, RunnerSettings, RunOutput, Template } from '../api';
import { on, onResync } from '../events';
import { agentHref } from '../route';
import { errorText } from './util';

/** Run statuses (runner.Status*): the board's execution records. */
export type RunStatus = 'running' | 'completed' | 'failed' | 'stopped';

/** Runner error codes the UI points somewhere for (runner.E*). */
export const RUN_ERRORS = {
  noProfile: 'no_run_profile',
  unknownTemplate: 'unknown_template',
  unknownPlaceholder: 'unknown_placeholder',
  workDirOutsideRoots: 'workdir_outside_roots',
  noToken: 'agent_has_no_token',
  commandNotFound: 'command_not_found',
  runFailed: 'run_failed',
  agentBusy: 'agent_busy',
} as const;

/** How many lines of a run's log a view keeps; older ones stay in the log file. */
export const MAX_OUTPUT_LINES = 2000;
/** How many of the log's last lines a view starts with. */
export const LOG_TAIL = 500;

/** How many of a failed run's last lines its row shows. */
export const LAST_OUTPUT_LINES = 6;
/** How many of the log's last lines are read to find them (Airlock's notes among them). */
const LAST_OUTPUT_READ = 50;
/** A line of Airlock's own in a run's log: "[time] [airlock] …". */
const AIRLOCK_LINE = /^\[[^\]]*\] \[airlock\]/;

/** A run's output as a view shows it: the log's tail, then what run:output adds. */
export interface RunLog {
  lines: string[];
  /** Lines of the log file before the first line kept here. */
  earlier: number;
  /** Lines the backend left out of the events (the run wrote too fast); they are in the log file. */
  dropped: number;
  loading: boolean;
  error: string | null;
}

/** Why the Run button cannot start a run, and where that is fixed. */
export interface RunBlocker {
  reason: string;
  /** An in-app link to the setting that would change it. */
  href?: string;
  linkText?: string;
}

/** A refused start, kept on the task it was tried on until dismissed or retried. */
export interface StartRefusal {
  code: string;
  message: string;
  hint?: string;
}

interface Follow {
  count: number;
  /** run:output batches that came while the log was being read. */
  pending: RunOutput[] | null;
  /**
   * The index of the line after the last one shown (RunOutput.first): a
   * line is in the log file before its batch is sent, so a batch may bring
   * lines the log read gave already.
   */
  next: number;
}

/**
 * Agent runs (SPEC §9): the launcher templates and placeholders, each AI
 * agent's run profile, the runner's settings, the runs alive now (the
 * board's cards show them), the runs of the tasks being looked at, and the
 * live output of the runs being watched. run:status keeps the runs current,
 * run:output streams the output (batched by the backend), and a resync
 * reloads all of it.
 */
export class RunsStore {
  templates = $state<Template[]>([]);
  /** {{name}} → what it becomes. */
  placeholders = $state<Record<string, string>>({});
  /** Run profiles by agent id. */
  profiles = $state<Record<string, Profile>>({});
  profilesLoaded = $state(false);
  settings = $state<RunnerSettings | null>(null);
  /** The runs alive now, oldest first. */
  live = $state<Run[]>([]);
  /**
   * The tasks in progress auto-run holds back, by task id: waiting for a
   * free place or for their agent, retrying later, or given up on.
   */
  auto = $state<Record<string, AutoState>>({});
  /** The runs of tasks someone looks at, newest first, by task id. */
  byTask = $state<Record<string, Run[]>>({});
  /** Output of the runs being watched, by run id. */
  output = $state<Record<string, RunLog>>({});
  /**
   * The last lines a failed run's process wrote (Airlock's own lines left
   * out), by run id: why it failed, next to its exit status. Read once.
   */
  lastOutput = $state<Record<string, string[]>>({});
  /** A start refused on a task, by task id. */
  refusals = $state<Record<string, StartRefusal>>({});
  /** Runs whose Stop was confirmed and that have not ended yet, by run id. */
  stopping = $state<Record<string, boolean>>({});
  /** Tasks whose Run was pressed and has not answered yet. */
  starting = $state<Record<string, boolean>>({});
  error = $state<string | null>(null);

  private follows = new Map<string, Follow>();
  private tailReads = new Set<string>();
  private liveSeq = 0;
  /** Counts run:auto events and loads: a load answered after an event is older than it. */
  private autoSeq = 0;
  /** Run ids whose run:status came during a Live load: the event is newer than the answer. */
  private liveDuringLoad: Map<string, Run> | null = null;

  /** Subscribes to run events; returns the unsubscribe function. */
  connect(): () => void {
    const offs = [
      on('run:status', (r) => this.status(r)),
      on('run:output', (o) => this.append(o)),
      on('run:auto', (a) => {
        this.autoSeq++;
        this.setAuto(a);
      }),
      onResync(() => void this.resync()),
    ];
    return () => offs.forEach((off) => off());
  }

  /** Loads the runs alive now (the cards' indicators), and what auto-run holds back. */
  async loadLive(): Promise<void> {
    void this.loadAuto();
    const seq = ++this.liveSeq;
    this.liveDuringLoad = new Map();
    try {
      const runs = (await api.runs.live()) ?? [];
      if (seq !== this.liveSeq) return;
      const during = this.liveDuringLoad ?? new Map<string, Run>();
      const list = runs.filter((r) => !during.has(r.id));
      for (const r of during.values()) if (r.status === 'running') list.push(r);
      this.live = list;
      this.error = null;
    } catch (err) {
      if (seq === this.liveSeq) this.error = errorText(err);
    } finally {
      if (seq === this.liveSeq) this.liveDuringLoad = null;
    }
  }

  /** Loads what auto-run holds back; a run:auto event during the load wins. */
  async loadAuto(): Promise<void> {
    const seq = ++this.autoSeq;
    try {
      const a = await api.runs.auto();
      if (seq === this.autoSeq && a) this.setAuto(a);
    } catch {
      // The cards go without it; the next event or resync brings it.
    }
  }

  private setAuto(a: AutoStates): void {
    this.auto = Object.fromEntries((a.tasks ?? []).map((t) => [t.taskId, t]));
  }

  /** What auto-run holds for task id, when it holds it back. */
  autoState(taskId: string): AutoState | undefined {
    return this.auto[taskId];
  }

  /** Loads what the profile screen needs: templates, placeholders and every profile. */
  async loadProfiles(): Promise<void> {
    const [templates, placeholders, profiles] = await Promise.all([api.runs.templates(), api.runs.placeholders(), api.runs.profiles()]);
    this.templates = (templates ?? []).map(fullTemplate);
    this.placeholders = placeholders ?? {};
    this.profiles = Object.fromEntries((profiles ?? []).map((p) => [p.agentId, fullProfile(p)]));
    this.profilesLoaded = true;
  }

  async loadSettings(): Promise<RunnerSettings> {
    const s = await api.runs.settings();
    this.settings = s;
    return s;
  }

  /** Stores the runner's settings (all of them; refused values change nothing). */
  async saveSettings(s: RunnerSettings): Promise<RunnerSettings> {
    const saved = await api.runs.setSettings(s);
    this.settings = saved;
    return saved;
  }

  template(id: string | undefined): Template | undefined {
    return id ? this.templates.find((t) => t.id === id) : undefined;
  }

  profile(agentId: string | undefined): Profile | undefined {
    return agentId ? this.profiles[agentId] : undefined;
  }

  /** Checks and stores an agent's profile; a refusal (ApiError) changes nothing. */
  async setProfile(agentId: string, p: Profile): Promise<Profile> {
    const saved = fullProfile(await api.runs.setProfile(agentId, p));
    this.profiles = { ...this.profiles, [agentId]: saved };
    return saved;
  }

  /**
   * Whether the program profile p launches is found now, as a run would
   * look for it: a warning when it is not (the profile is saved all the
   * same), null when the check could not be made.
   */
  async checkCommand(p: Profile): Promise<CommandCheck | null> {
    try {
      return (await api.runs.checkCommand(p)) ?? null;
    } catch {
      return null;
    }
  }

  async deleteProfile(agentId: string): Promise<void> {
    await api.runs.deleteProfile(agentId);
    const { [agentId]: _gone, ...rest } = this.profiles;
    this.profiles = rest;
  }

  /** The run of task id alive now. */
  liveRun(taskId: string): Run | undefined {
    return this.live.find((r) => r.taskId === taskId);
  }

  isRunning(taskId: string): boolean {
    return this.live.some((r) => r.taskId === taskId);
  }

  /** Loads the runs of a task (the task detail shows them). */
  async loadTask(taskId: string): Promise<void> {
    const runs = (await api.runs.list(taskId)) ?? [];
    // A run:status that came meanwhile is as new as the list, or newer.
    const known = this.byTask[taskId] ?? [];
    const merged = runs.map((r) => {
      const k = known.find((x) => x.id === r.id);
      return k && k.status !== 'running' && r.status === 'running' ? k : r;
    });
    for (const k of known) if (!merged.some((r) => r.id === k.id)) merged.push(k);
    this.byTask = { ...this.byTask, [taskId]: sortRuns(merged) };
  }

  /** Forgets a task's runs once nothing shows them. */
  forgetTask(taskId: string): void {
    const { [taskId]: _gone, ...rest } = this.byTask;
    this.byTask = rest;
  }

  /**
   * Why task (assigned to assignee) cannot be run now, or null when it
   * can. agent is the assignee as the Agents store has it.
   */
  blocker(task: { id: string; assigneeId: string }, agent: AgentView | undefined): RunBlocker | null {
    if (!task.assigneeId) return { reason: 'Assign the task to an AI agent first: a run is that agent working on it.' };
    if (!agent) return { reason: 'The task is assigned to an agent Airlock does not know.' };
    if (agent.human || agent.kind === 'owner') {
      return { reason: `${agent.name} is a person: Airlock runs only AI agents. Assign the task to an AI agent to run it.` };
    }
    if (agent.status !== 'active') {
      return { reason: `${agent.name} is ${agent.status}: resume it before running it.`, href: agentHref(agent.id, 'status'), linkText: `${agent.name} → Status` };
    }
    if (this.profilesLoaded && !this.profiles[agent.id]) {
      return {
        reason: `${agent.name} has no run profile: choose how Airlock launches it (Claude Code, Codex CLI, Gemini CLI, the scripted agent or a command).`,
        href: agentHref(agent.id, 'run'),
        linkText: `${agent.name} → Run profile`,
      };
    }
    if (agent.tokens.length === 0) {
      return {
        reason: `${agent.name} has no connection token. A run connects as the agent, never as you: give it a token first.`,
        href: agentHref(agent.id, 'connect'),
        linkText: `${agent.name} → Connect`,
      };
    }
    const live = this.liveRun(task.id);
    if (live) return { reason: 'This task is running now.' };
    const busy = this.live.find((r) => r.agentId === agent.id);
    if (busy) return { reason: `${agent.name} is running another task (${busy.taskId}); an agent works on one task at a time.` };
    return null;
  }

  /**
   * Starts a run of the task's agent. A refusal (what is wrong with the
   * profile, folder, token or command) is kept on the task and shown at
   * once; a process that could not start is a failed run too.
   */
  async start(taskId: string): Promise<Run | null> {
    this.starting = { ...this.starting, [taskId]: true };
    this.dismiss(taskId);
    try {
      const run = await api.runs.start(taskId);
      this.status(run);
      return run;
    } catch (err) {
      const e = err instanceof ApiError ? err : null;
      this.refusals = { ...this.refusals, [taskId]: { code: e?.code ?? 'internal', message: e?.message ?? errorText(err), hint: e?.hint } };
      // A run that failed to start is recorded: show it in the list.
      if (this.byTask[taskId]) void this.loadTask(taskId).catch(() => {});
      return null;
    } finally {
      const { [taskId]: _done, ...rest } = this.starting;
      this.starting = rest;
    }
  }

  dismiss(taskId: string): void {
    if (!this.refusals[taskId]) return;
    const { [taskId]: _gone, ...rest } = this.refusals;
    this.refusals = rest;
  }

  /**
   * Stops a run (SIGTERM, then SIGKILL after the grace period); resolves
   * with the ended run. Until then the run is in stopping: a process that
   * ignores SIGTERM takes the whole grace period.
   */
  async stop(runId: string): Promise<Run> {
    this.stopping = { ...this.stopping, [runId]: true };
    try {
      const run = await api.runs.stop(runId);
      this.status(run);
      return run;
    } finally {
      const { [runId]: _done, ...rest } = this.stopping;
      this.stopping = rest;
    }
  }

  /**
   * Reads the last lines run id's process wrote into lastOutput, once: the
   * log's tail without Airlock's notes (which say the exit status again).
   * A log that cannot be read leaves nothing to show.
   */
  async loadLastOutput(runId: string): Promise<void> {
    if (runId in this.lastOutput || this.tailReads.has(runId)) return;
    this.tailReads.add(runId);
    try {
      const chunk = await api.runs.log(runId, { tail: LAST_OUTPUT_READ, offset: null });
      const own = (chunk.lines ?? []).filter((l) => !AIRLOCK_LINE.test(l));
      this.lastOutput = { ...this.lastOutput, [runId]: own.slice(-LAST_OUTPUT_LINES) };
    } catch {
      this.lastOutput = { ...this.lastOutput, [runId]: [] };
    } finally {
      this.tailReads.delete(runId);
    }
  }

  /**
   * Starts following run id's output: the log's last lines, then every
   * run:output batch. Returns the function that stops following.
   */
  follow(runId: string): () => void {
    const f = this.follows.get(runId);
    if (f) {
      f.count++;
    } else {
      this.follows.set(runId, { count: 1, pending: [], next: 0 });
      this.output = { ...this.output, [runId]: { lines: [], earlier: 0, dropped: 0, loading: true, error: null } };
      void this.readLog(runId);
    }
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const cur = this.follows.get(runId);
      if (!cur) return;
      cur.count--;
      // A view that follows the same run right away (the live run's output
      // moving into the list of ended runs) keeps what was read.
      queueMicrotask(() => {
        if (cur.count > 0 || this.follows.get(runId) !== cur) return;
        this.follows.delete(runId);
        const { [runId]: _gone, ...rest } = this.output;
        this.output = rest;
      });
    };
  }

  /** A run:status: the run is upserted wherever it is shown. */
  status(r: Run): void {
    this.liveDuringLoad?.set(r.id, r);
    const i = this.live.findIndex((x) => x.id === r.id);
    if (r.status === 'running') {
      if (i >= 0) this.live[i] = r;
      else this.live = [...this.live, r];
    } else if (i >= 0) {
      this.live = this.live.filter((x) => x.id !== r.id);
    }
    const list = this.byTask[r.taskId];
    if (list) {
      const j = list.findIndex((x) => x.id === r.id);
      const prev = j >= 0 ? list[j] : undefined;
      // An ended run keeps the latest tool call it was seen making.
      const next = { ...r, lastTool: r.lastTool ?? prev?.lastTool ?? null };
      this.byTask = { ...this.byTask, [r.taskId]: sortRuns(j >= 0 ? list.map((x, k) => (k === j ? next : x)) : [next, ...list]) };
    }
  }

  /** A run:output batch: appended to the run's output when someone watches it. */
  append(o: RunOutput): void {
    const f = this.follows.get(o.runId);
    if (!f) return;
    if (f.pending) {
      f.pending.push(o);
      return;
    }
    const cur = this.output[o.runId];
    if (!cur) return;
    const lines = unseen(o, f.next);
    f.next = Math.max(f.next, batchEnd(o));
    if (lines.length === 0 && !o.dropped) return;
    this.output[o.runId] = capped({ ...cur, lines: [...cur.lines, ...lines], dropped: cur.dropped + (o.dropped ?? 0) });
  }

  /** Reads the log's tail, then merges the batches that came meanwhile. */
  private async readLog(runId: string): Promise<void> {
    const f = this.follows.get(runId);
    if (!f) return;
    f.pending = [];
    try {
      const chunk = await api.runs.log(runId, { tail: LOG_TAIL, offset: null });
      if (this.follows.get(runId) !== f) return;
      const pending = f.pending ?? [];
      f.pending = null;
      const logged = chunk.lines ?? [];
      let next = chunk.offset + logged.length;
      const lines = [...logged];
      for (const o of pending) {
        lines.push(...unseen(o, next));
        next = Math.max(next, batchEnd(o));
      }
      f.next = next;
      const dropped = pending.reduce((n, o) => n + (o.dropped ?? 0), 0);
      this.output[runId] = capped({ lines, earlier: chunk.offset, dropped, loading: false, error: null });
    } catch (err) {
      if (this.follows.get(runId) !== f) return;
      const pending = f.pending ?? [];
      f.pending = null;
      // Without the log (gone, unreadable) the live lines still show.
      let next = 0;
      const lines: string[] = [];
      for (const o of pending) {
        lines.push(...unseen(o, next));
        next = Math.max(next, batchEnd(o));
      }
      f.next = next;
      this.output[runId] = { lines, earlier: 0, dropped: 0, loading: false, error: errorText(err) };
    }
  }

  /** Events may have been missed: everything shown is read again. */
  private async resync(): Promise<void> {
    await Promise.all([
      this.loadLive(),
      ...Object.keys(this.byTask).map((id) => this.loadTask(id).catch(() => {})),
      ...[...this.follows.keys()].map((id) => this.readLog(id)),
    ]);
  }
}

/** A template with its lists present: Go sends an empty list as null. */
export function fullTemplate(t: Template): Template {
  return { ...t, args: t.args ?? [], modelArgs: t.modelArgs ?? [], env: t.env ?? {} };
}

/** A profile with its lists present (see fullTemplate). */
function fullProfile(p: Profile): Profile {
  return { ...p, args: p.args ?? [], extraArgs: p.extraArgs ?? [], env: p.env ?? {} };
}

/** Newest first. */
function sortRuns(runs: Run[]): Run[] {
  return [...runs].sort((a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt) || b.id.localeCompare(a.id));
}

/** The lines of batch o from index next on: those before it are shown already. */
function unseen(o: RunOutput, next: number): string[] {
  const lines = o.lines ?? [];
  return lines.slice(Math.max(0, next - (o.first ?? 0)));
}

/** The index of the line after batch o's last. */
function batchEnd(o: RunOutput): number {
  return (o.first ?? 0) + (o.lines ?? []).length;
}

function capped(log: RunLog): RunLog {
  const over = log.lines.length - MAX_OUTPUT_LINES;
  return over > 0 ? { ...log, lines: log.lines.slice(over), earlier: log.earlier + over } : log;
}
