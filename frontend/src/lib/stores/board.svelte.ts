import { ApiError, api } from '../api';
import type { BoardView, ExecutionLogView, ProjectSummary, TaskCard, TaskDetailView, TaskInput, TaskUpdate } from '../api';
import { on, onResync } from '../events';
import { errorText } from './util';

/** Task statuses in board order (teams.Statuses). */
export type TaskStatus = 'backlog' | 'todo' | 'in_progress' | 'blocked' | 'done' | 'cancelled';
export const TASK_STATUSES: TaskStatus[] = ['backlog', 'todo', 'in_progress', 'blocked', 'done', 'cancelled'];
/** The columns always shown; cancelled tasks sit in a column folded away at the end. */
export const MAIN_STATUSES: TaskStatus[] = ['backlog', 'todo', 'in_progress', 'blocked', 'done'];

export const STATUS_LABEL: Record<string, string> = {
  backlog: 'Backlog', todo: 'To do', in_progress: 'In progress', blocked: 'Blocked', done: 'Done', cancelled: 'Cancelled',
};

/** Task priorities, the most urgent first (teams.PriorityRank). */
export type TaskPriority = 'urgent' | 'high' | 'medium' | 'low';
export const PRIORITIES: TaskPriority[] = ['urgent', 'high', 'medium', 'low'];

/** The words for a status, for statuses this UI does not know too. */
export function statusLabel(s: string): string {
  return STATUS_LABEL[s] ?? s;
}

/** The agent filter's value for tasks nobody is assigned to. */
export const UNASSIGNED = 'none';

function priorityRank(p: string): number {
  const i = PRIORITIES.indexOf(p as TaskPriority);
  return i < 0 ? PRIORITIES.length : i;
}

/** The backend's list order within a status: the most urgent first, then the oldest. */
function byUrgency(a: TaskCard, b: TaskCard): number {
  return priorityRank(a.priority) - priorityRank(b.priority) || a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);
}

/** Why the backend refused a move: its message, and its hint when it gave one. */
export interface Refusal {
  message: string;
  hint?: string;
}

function refusalOf(err: unknown): Refusal {
  if (err instanceof ApiError) return { message: err.message, hint: err.hint || undefined };
  return { message: errorText(err) };
}

/** One column as the board shows it. */
export interface ColumnView {
  status: string;
  tasks: TaskCard[];
}

/**
 * One project's board and the open task's detail. The person acts as the
 * owner: moves, edits and new tasks go through the Board facade, which
 * records them as the owner's. A move shows at once and snaps back when the
 * backend refuses it; the refusal stays on the card it was tried on.
 * board:changed, execution:changed and chat:conversation (agents at work,
 * the CLI, another window) reload what they touch.
 */
export class BoardStore {
  projects = $state<ProjectSummary[]>([]);
  projectsLoaded = $state(false);
  projectsError = $state<string | null>(null);
  /** The project asked for (an id, or a name from a link). */
  projectRef = $state<string | null>(null);
  view = $state<BoardView | null>(null);
  loading = $state(false);
  error = $state<string | null>(null);
  /** Moves in flight: task id → the status it is moving to (shown at once). */
  moving = $state<Record<string, string>>({});
  /** The refusal of a card's last move, shown on that card until dismissed or moved again. */
  refusals = $state<Record<string, Refusal>>({});

  detailId = $state<string | null>(null);
  detail = $state<TaskDetailView | null>(null);
  detailError = $state<string | null>(null);
  /** Counts changes of the open task's executions, so its runs refetch their logs. */
  runsVersion = $state(0);

  /** Every card of the board, whatever its column. */
  cards = $derived<TaskCard[]>(this.view ? this.view.columns.flatMap((c) => c.tasks) : []);

  private projectsSeq = 0;
  private boardSeq = 0;
  private detailSeq = 0;
  private inFlight: Promise<void> | null = null;
  private again = false;

  /** The project shown (its canonical id), once its board is loaded. */
  get projectId(): string | null {
    return this.view?.project.id ?? null;
  }

  async loadProjects(): Promise<void> {
    const seq = ++this.projectsSeq;
    try {
      const ps = (await api.board.projects()) ?? [];
      if (seq !== this.projectsSeq) return;
      this.projects = ps;
      this.projectsError = null;
    } catch (err) {
      if (seq === this.projectsSeq) this.projectsError = errorText(err);
    } finally {
      if (seq === this.projectsSeq) this.projectsLoaded = true;
    }
  }

  /** Shows project ref (an id or a name); the same project again only reloads. */
  async setProject(ref: string): Promise<void> {
    if (ref !== this.projectRef && ref !== this.projectId) {
      this.projectRef = ref;
      this.view = null;
      this.refusals = {};
      this.moving = {};
      this.error = null;
    }
    await this.loadBoard();
  }

  async loadBoard(): Promise<void> {
    const ref = this.projectRef;
    if (!ref) return;
    const seq = ++this.boardSeq;
    this.loading = true;
    try {
      const v = await api.board.get(ref, '');
      if (seq !== this.boardSeq) return; // a newer load (or another project) won
      this.view = v;
      this.error = null;
    } catch (err) {
      if (seq !== this.boardSeq) return;
      this.error = errorText(err);
      // A project deleted meanwhile (or a link to none) shows no stale board.
      if (err instanceof ApiError && err.code === 'project_not_found') this.view = null;
    } finally {
      if (seq === this.boardSeq) this.loading = false;
    }
  }

  /**
   * Reloads the board after an event; events that arrive while a load is
   * on its way cost one more load, not one each.
   */
  refresh(): Promise<void> {
    if (this.inFlight) {
      this.again = true;
      return this.inFlight;
    }
    this.inFlight = this.loadBoard().finally(() => {
      this.inFlight = null;
      if (this.again) {
        this.again = false;
        void this.refresh();
      }
    });
    return this.inFlight;
  }

  /** Subscribes to live updates while the Board screen shows; returns the unsubscribe function. */
  connect(): () => void {
    const offs = [
      on('board:changed', (e) => {
        void this.loadProjects();
        // An empty project id means any project may have changed (another process wrote the database).
        if (!e.projectId || e.projectId === this.projectId) {
          void this.refresh();
          if (this.detailId) void this.loadDetail();
        }
      }),
      // The open task's detail lists its conversations with their state: one
      // started about it, joined or ended (seldom events) reloads it.
      on('chat:conversation', (e) => {
        if (this.detailId && (!e.projectId || e.projectId === this.projectId)) void this.loadDetail();
      }),
      on('execution:changed', (e) => {
        if (e.taskId && e.taskId === this.detailId) {
          this.runsVersion++;
          void this.loadDetail();
        }
      }),
      // Projects, names, kinds and assignments feed the picker, the cards and the filter.
      on('agents:changed', () => {
        void this.loadProjects();
        void this.refresh();
      }),
      onResync(() => {
        void this.loadProjects();
        void this.refresh();
        if (this.detailId) void this.loadDetail();
      }),
    ];
    return () => offs.forEach((off) => off());
  }

  card(id: string): TaskCard | undefined {
    return this.cards.find((c) => c.id === id);
  }

  /** The status a card shows: where it is moving to, else where it is. */
  statusOf(c: TaskCard): string {
    return this.moving[c.id] ?? c.status;
  }

  /**
   * The board's columns (statuses given, in that order) with the cards
   * agentFilter keeps: an agent id, UNASSIGNED, or null for every card.
   */
  columns(statuses: readonly string[], agentFilter: string | null): ColumnView[] {
    const keep = (c: TaskCard) => !agentFilter || (agentFilter === UNASSIGNED ? !c.assigneeId : c.assigneeId === agentFilter);
    return statuses.map((status) => ({
      status,
      tasks: this.cards.filter((c) => this.statusOf(c) === status && keep(c)).sort(byUrgency),
    }));
  }

  /**
   * Why a card's assignee cannot work on it now: its status when that is
   * not active (suspended, disabled), else null. An agent suspended on the
   * Agents screen otherwise leaves its tasks standing still with no word why.
   */
  assigneeHold(c: TaskCard): 'suspended' | 'disabled' | null {
    if (!c.assigneeId) return null;
    const st = this.view?.agents.find((a) => a.id === c.assigneeId)?.status;
    return st === 'suspended' || st === 'disabled' ? st : null;
  }

  /** The statuses a task may move to from status (the backend's state machine). */
  allowed(status: string): string[] {
    return this.view?.transitions[status] ?? [];
  }

  /**
   * Moves a card, as the owner. It shows in the new column at once; when
   * the backend refuses (open blockers, a move the state machine forbids)
   * it snaps back and the refusal is kept for that card. Returns whether
   * the move was made.
   */
  async move(id: string, status: string, reason = ''): Promise<boolean> {
    const c = this.card(id);
    if (!c || c.status === status || this.moving[id]) return false;
    this.dismiss(id);
    this.moving = { ...this.moving, [id]: status };
    try {
      this.replace(await api.board.move(id, status, reason));
      if (id === this.detailId) void this.loadDetail();
      return true;
    } catch (err) {
      this.refusals = { ...this.refusals, [id]: refusalOf(err) };
      return false;
    } finally {
      const { [id]: _, ...rest } = this.moving;
      this.moving = rest;
    }
  }

  /** Forgets a card's refusal. */
  dismiss(id: string): void {
    if (!(id in this.refusals)) return;
    const { [id]: _, ...rest } = this.refusals;
    this.refusals = rest;
  }

  /** Creates a task in the project shown, as the owner. */
  async create(input: TaskInput): Promise<TaskCard> {
    const project = this.projectId;
    if (!project) throw new Error('no project is shown');
    const c = await api.board.create(project, input);
    this.replace(c);
    void this.loadProjects();
    return c;
  }

  /** Changes the given fields of a task, as the owner. */
  async update(id: string, up: TaskUpdate): Promise<TaskCard> {
    const c = await api.board.update(id, up);
    this.dismiss(id);
    this.replace(c);
    if (id === this.detailId) await this.loadDetail();
    return c;
  }

  /** Gives a task to an agent ('' takes it away), as the owner. */
  async assign(id: string, agentId: string): Promise<TaskCard> {
    const c = await api.board.assign(id, agentId);
    this.replace(c);
    if (id === this.detailId) await this.loadDetail();
    return c;
  }

  /** Opens a task's detail (null closes it). */
  async openTask(id: string | null): Promise<void> {
    if (id !== this.detailId) {
      this.detailId = id;
      this.detail = null;
      this.detailError = null;
    }
    if (id) await this.loadDetail();
  }

  async loadDetail(): Promise<void> {
    const id = this.detailId;
    if (!id) return;
    const seq = ++this.detailSeq;
    try {
      const d = await api.board.detail(id);
      if (seq !== this.detailSeq || id !== this.detailId) return;
      this.detail = d;
      this.detailError = null;
    } catch (err) {
      if (seq === this.detailSeq && id === this.detailId) this.detailError = errorText(err);
    }
  }

  /** The last tail lines of an execution's log. */
  log(executionId: string, tail = 200): Promise<ExecutionLogView> {
    return api.board.log(executionId, tail);
  }

  /** Puts the backend's answer for one card in its column. */
  private replace(c: TaskCard): void {
    const v = this.view;
    if (!v || v.project.id !== c.projectId) return;
    const columns = v.columns.map((col) => ({ ...col, tasks: col.tasks.filter((t) => t.id !== c.id) }));
    const col = columns.find((x) => x.status === c.status);
    if (col) col.tasks = [...col.tasks, c].sort(byUrgency);
    this.view = { ...v, columns };
  }
}
