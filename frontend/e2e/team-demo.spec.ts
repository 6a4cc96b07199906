// Issue 9's "done means", on screen: the team demo (examples/team-demo) —
// three scripted agents, a manager and two workers, real MCP clients in five
// sessions — runs seed 001's flows through a real `airlock serve` while the
// Board (one page) and the Chat (another page) show every step live.
//
// run.sh itself sets the Airlock up (project, role, agents, folder, rules,
// with the airlock CLI on the serve's data directory) and runs the five
// `airlock agent-script` processes at once. Their MCP traffic goes through
// a small proxy in this spec, the director: it passes every call on
// untouched, but lets the calls that change what the screens show (a task's
// status, a message, a conversation's state) through one at a time, and
// gives the agent its answer only once both screens show what the call
// changed. So each step gets onto the screens before the next one is made —
// a state that lasted a few milliseconds is checked as surely as one that
// lasted seconds — and after each step the director records what the two
// pages show (a frame). The board reloads after events and may fold quick
// changes into one reload, so without the director a short state might
// never be drawn; the director only gives each change the time to be
// shown, and fails the run when a screen does not catch up.
//
// The assertions are on those frames, all taken while the scripts ran:
// each card's columns in the order the flows dictate, the blocked reason,
// the chat-driven task with its link to the conversation, the messages
// appearing one by one, the conversation ending; then the end state, the
// pages never reloaded (a marker on window) and the five scripts' success.
// Screenshots (light): e2e/screenshots/team-demo-board-midrun-light.png,
// team-demo-board-light.png, team-demo-board-detail-light.png and
// team-demo-chat-light.png.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { BoardView, ConversationSummary, MessagesView, TaskCard, TaskDetailView } from '../src/lib/api/generated';
import { openUi, repoRoot, rpc, shot, startAirlock, type Airlock, type Browser } from './harness';

/** The suffix run.sh gives the names (DEMO_ID): a fresh data directory has none of them yet. */
const DEMO_ID = 'e2e';
const PROJECT = `team-demo-${DEMO_ID}`;
const SESSIONS = ['manager/task', 'manager/chat', 'worker-a/task', 'worker-a/chat', 'worker-b/task'];
/** How long a screen may take to show a step on a busy machine before the run fails. */
const CATCH_UP_MS = 30_000;
const LIVE = { timeout: 15_000 };

/** Tools whose calls change what the Board or the Chat shows: the director holds them until the screens caught up. */
const SCREEN_CHANGING = new Set([
  'create_tasks_batch', 'assign_task', 'update_task_status', 'report_completed', 'request_task',
  'start_task_from_chat', 'update_task_from_chat', 'send_message', 'respond_chat', 'start_conversation',
  'end_conversation', 'delegate_to_chat_session',
]);

/** The words the board uses for a status (STATUS_LABEL of the board store). */
const STATUS_LABEL: Record<string, string> = {
  backlog: 'Backlog', todo: 'To do', in_progress: 'In progress', blocked: 'Blocked', done: 'Done', cancelled: 'Cancelled',
};

/** One card as the Board page shows it. */
interface ShownCard { id: string; title: string; column: string; reason: string; fromChat: boolean }
/** What the Board page shows. */
interface BoardShot {
  hash: string;
  marker: number | null;
  cards: ShownCard[];
  /** The open task's detail, with its linked conversations (href and badges). */
  detail: { id: string; status: string; conversations: { href: string; badges: string[] }[]; history: string[] } | null;
}
/** What the Chat page shows. */
interface ChatShot {
  hash: string;
  marker: number | null;
  rows: { id: string; state: string }[];
  open: { id: string; state: string; ended: boolean; messages: { sender: string; content: string }[] } | null;
}
/** What the backend holds, through the facade the screens use (detail: the task whose detail should show). */
interface Truth { board: BoardView; conversations: ConversationSummary[]; messages: MessagesView | null; detail: TaskDetailView | null }
/** The screens after one step of the agents. */
interface Frame { after: string; at: number; board: BoardShot; chat: ChatShot }

function shootBoard(page: Page): Promise<BoardShot> {
  return page.evaluate(() => {
    const text = (el: Element | null | undefined) => el?.textContent?.trim() ?? '';
    const cards = [...document.querySelectorAll<HTMLElement>('[data-testid=task-card]')].map((li) => ({
      id: li.dataset.taskId ?? '',
      title: text(li.querySelector('[data-testid=task-title]')),
      column: li.closest<HTMLElement>('[data-testid=board-column]')?.dataset.status ?? '',
      reason: text(li.querySelector('[data-testid=task-blocked-reason]')),
      fromChat: !!li.querySelector('[title="Asked for in a chat"]'),
    }));
    const d = document.querySelector<HTMLElement>('[data-testid=task-detail]');
    const detail = d && {
      id: d.dataset.taskId ?? '',
      status: text(d.querySelector('[data-testid=detail-status]')),
      conversations: [...d.querySelectorAll('[data-testid=task-conversations] li')].map((li) => ({
        href: li.querySelector('a')?.getAttribute('href') ?? '',
        badges: [...li.querySelectorAll('.badge')].map((b) => text(b)),
      })),
      history: [...d.querySelectorAll('[data-testid=history-entry]')].map((h) => (h.textContent ?? '').replace(/\s+/g, ' ').trim()),
    };
    return { hash: location.hash, marker: (window as unknown as { __teamDemo?: number }).__teamDemo ?? null, cards, detail };
  });
}

function shootChat(page: Page): Promise<ChatShot> {
  return page.evaluate(() => {
    const rows = [...document.querySelectorAll<HTMLElement>('[data-testid=conversation-row]')].map((a) => ({
      id: a.dataset.conversationId ?? '',
      state: a.querySelector('[data-testid=conversation-state]')?.textContent?.trim() ?? 'active',
    }));
    const v = document.querySelector<HTMLElement>('[data-testid=conversation]');
    const open = v && {
      id: v.dataset.conversationId ?? '',
      state: v.dataset.state ?? '',
      ended: !!v.querySelector('[data-testid=conversation-ended]'),
      messages: [...v.querySelectorAll<HTMLElement>('[data-testid=message]')].map((m) => ({
        sender: m.dataset.sender ?? '',
        content: m.querySelector('[data-testid=message-content]')?.textContent ?? '',
      })),
    };
    return { hash: location.hash, marker: (window as unknown as { __teamDemo?: number }).__teamDemo ?? null, rows, open };
  });
}

const cardsOf = (v: BoardView): TaskCard[] => v.columns.flatMap((c) => c.tasks);
const byId = <T extends { id: string }>(a: T, b: T) => a.id.localeCompare(b.id);

/**
 * Where the screens differ from the backend ('' when they show it all).
 * Cards: each task in its status's column, the blocked reason on a blocked
 * card, the chat mark on a task asked for in a chat. Conversations: each in
 * the Chat list with its state. Unless lists only: the open conversation
 * with all its messages, and the detail of truth.detail's task with its
 * status, its whole history and its linked conversations.
 */
function difference(board: BoardShot, chat: ChatShot, truth: Truth, listsOnly: boolean): string {
  const pid = truth.board.project.id;
  if (!board.hash.startsWith(`#/board/${pid}`)) return `the Board shows ${board.hash}, not project ${pid}`;
  const want = cardsOf(truth.board)
    .map((t) => ({ id: t.id, title: t.title, column: t.status, reason: t.status === 'blocked' ? t.blockedReason : '', fromChat: !!(t.requestedInConversationId || t.startedFromConversationId) }))
    .sort(byId);
  const got = [...board.cards].sort(byId);
  if (JSON.stringify(got) !== JSON.stringify(want)) return `board cards: want ${JSON.stringify(want)}, got ${JSON.stringify(got)}`;
  const wantRows = truth.conversations.map((c) => ({ id: c.id, state: c.state })).sort(byId);
  const gotRows = [...chat.rows].sort(byId);
  if (JSON.stringify(gotRows) !== JSON.stringify(wantRows)) return `chat list: want ${JSON.stringify(wantRows)}, got ${JSON.stringify(gotRows)}`;
  if (listsOnly) return '';
  if (truth.messages) {
    const m = truth.messages;
    const want = { id: m.conversation.id, state: m.conversation.state, ended: m.conversation.state !== 'active', messages: m.messages.map((x) => ({ sender: x.senderId, content: x.content })) };
    if (JSON.stringify(chat.open) !== JSON.stringify(want)) return `open conversation: want ${JSON.stringify(want)}, got ${JSON.stringify(chat.open)}`;
  }
  if (truth.detail) {
    const d = truth.detail;
    const want = {
      id: d.task.id,
      status: STATUS_LABEL[d.task.status],
      conversations: d.conversations.map((c) => ({
        href: `#/chat/${c.id}`,
        badges: [
          ...(c.state !== 'active' ? [c.state] : []),
          ...(c.id === d.task.startedFromConversationId ? ['started from'] : []),
          ...(c.id === d.task.requestedInConversationId ? ['asked for in'] : []),
        ],
      })),
      entries: d.history.length + d.chatModifications.length,
    };
    const got = board.detail && { id: board.detail.id, status: board.detail.status, conversations: board.detail.conversations, entries: board.detail.history.length };
    if (JSON.stringify(got) !== JSON.stringify(want)) return `task detail: want ${JSON.stringify(want)}, got ${JSON.stringify(got)}`;
  }
  return '';
}

/** A JSON-RPC tools/call in a POST body, if it is one (a batch is looked into too). */
function toolCall(body: Buffer): { name: string; args: Record<string, unknown> } | null {
  let msg: unknown;
  try {
    msg = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  for (const m of Array.isArray(msg) ? msg : [msg]) {
    const r = m as { method?: string; params?: { name?: string; arguments?: Record<string, unknown> } };
    if (r?.method === 'tools/call' && r.params?.name) return { name: r.params.name, args: r.params.arguments ?? {} };
  }
  return null;
}

/**
 * The director: an HTTP proxy in front of Airlock's MCP endpoint. Calls of
 * SCREEN_CHANGING tools go one at a time; after each, it waits until both
 * pages show the backend's state, lets nudge act on the screens (open what
 * a person would open), waits again, records a frame and calls shown.
 */
class Director {
  readonly frames: Frame[] = [];
  readonly failures: string[] = [];
  /** The task whose detail the Board page should show, once it is opened. */
  wantDetail: string | null = null;
  url = '';
  private server: Server;
  private turn: Promise<void> = Promise.resolve();

  constructor(
    private upstream: URL,
    private boardPage: Page,
    private chatPage: Page,
    private hooks: {
      nudge: (truth: Truth, board: BoardShot, chat: ChatShot) => Promise<void>;
      shown: (frame: Frame, truth: Truth) => Promise<void>;
    },
  ) {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const call = req.method === 'POST' ? toolCall(body) : null;
        if (!call || !SCREEN_CHANGING.has(call.name)) {
          void this.forward(req, body, res);
          return;
        }
        const label = `${call.name} ${JSON.stringify(call.args).slice(0, 120)}`;
        // The agent gets its answer once the screens show the step: every
        // frame is taken while the scripts still run.
        const mine = this.turn.then(() => this.forward(req, body, res, () => this.settle(label)));
        this.turn = mine.catch((err) => {
          this.failures.push(`after ${label}: ${err instanceof Error ? err.stack : String(err)}`);
        });
      });
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${this.upstream.pathname}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  /**
   * Sends a request on to Airlock as it came (but for Host) and streams the
   * answer back; resolves when the answer ended. With hold, the answer is
   * kept until hold() resolved (a tool call's answer ends; it is not a
   * stream that stays open).
   */
  private forward(req: IncomingMessage, body: Buffer, res: ServerResponse, hold?: () => Promise<void>): Promise<void> {
    return new Promise((resolve, reject) => {
      const up = request(
        new URL(req.url ?? '/', this.upstream),
        { method: req.method, headers: { ...req.headers, host: this.upstream.host } },
        (answer) => {
          if (!hold) {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
            answer.on('end', () => resolve());
            answer.on('error', () => resolve());
            return;
          }
          const chunks: Buffer[] = [];
          answer.on('data', (c: Buffer) => chunks.push(c));
          answer.on('error', reject);
          answer.on('end', () => {
            const send = () => {
              res.writeHead(answer.statusCode ?? 502, answer.headers);
              res.end(Buffer.concat(chunks));
            };
            hold().finally(send).then(resolve, reject);
          });
        },
      );
      // An agent gone (its stream of notifications closed) ends the request to Airlock too.
      res.on('close', () => {
        if (!res.writableFinished) up.destroy();
      });
      up.on('error', (err) => {
        if (!res.headersSent) res.writeHead(502);
        res.end(String(err));
        resolve();
      });
      up.end(body);
    });
  }

  /** What the backend holds now, through the facade the screens use. */
  private async truth(): Promise<Truth> {
    const board = await rpc<BoardView>(this.boardPage, 'Board.Get', PROJECT, '');
    const conversations = (await rpc<ConversationSummary[]>(this.boardPage, 'Chat.Conversations', board.project.id)) ?? [];
    const messages = conversations.length > 0 ? await rpc<MessagesView>(this.boardPage, 'Chat.Messages', conversations[0].id, 200) : null;
    const detail = this.wantDetail ? await rpc<TaskDetailView>(this.boardPage, 'Board.Detail', this.wantDetail) : null;
    return { board, conversations, messages, detail };
  }

  /** Polls until the screens show the backend's state; throws with the last difference when they do not within CATCH_UP_MS. */
  private async caughtUp(listsOnly: boolean, deadline: number): Promise<{ truth: Truth; board: BoardShot; chat: ChatShot }> {
    let last = '';
    for (;;) {
      try {
        const truth = await this.truth();
        const [board, chat] = await Promise.all([shootBoard(this.boardPage), shootChat(this.chatPage)]);
        last = difference(board, chat, truth, listsOnly);
        if (!last) return { truth, board, chat };
      } catch (err) {
        last = String(err);
      }
      if (Date.now() > deadline) throw new Error(`the screens did not catch up within ${CATCH_UP_MS / 1000} s: ${last}`);
      await new Promise((r) => setTimeout(r, 50)); // the interval of this poll, not a wait for something
    }
  }

  private async settle(after: string): Promise<void> {
    // Once a screen failed to catch up, the rest of the run is let through
    // unwatched: the test fails with that first difference, not after a
    // timeout for every later step.
    if (this.failures.length > 0) return;
    const deadline = Date.now() + CATCH_UP_MS;
    const lists = await this.caughtUp(true, deadline);
    await this.hooks.nudge(lists.truth, lists.board, lists.chat);
    const all = await this.caughtUp(false, deadline);
    const frame = { after, at: Date.now(), board: all.board, chat: all.chat };
    this.frames.push(frame);
    await this.hooks.shown(frame, all.truth);
  }

  /** Resolves when every held call has been let through and settled. */
  idle(): Promise<void> {
    return this.turn;
  }
}

/** The statuses a task went through on the Board, one entry per change, from the frames. */
function columnsOf(frames: Frame[], title: string): string[] {
  const seen: string[] = [];
  for (const f of frames) {
    const c = f.board.cards.find((x) => x.title === title);
    if (c && seen.at(-1) !== c.column) seen.push(c.column);
  }
  return seen;
}

describe('the team demo, live on the Board and Chat screens', () => {
  let airlock: Airlock;
  let ui: Browser;
  let board: Page;
  let chat: Page;
  let director: Director;
  let demo: ChildProcess | undefined;
  let demoOut = '';
  const pageErrors: string[] = [];
  const tmp = mkdtempSync(join(tmpdir(), 'airlock-team-demo-e2e-'));

  beforeAll(async () => {
    airlock = await startAirlock();
    ui = await openUi(airlock);
    board = ui.page;
    chat = await ui.context.newPage();
    for (const p of [board, chat]) p.on('pageerror', (err) => pageErrors.push(String(err)));
    await chat.goto(`${new URL(airlock.uiUrl).origin}/#/chat`);
    await chat.getByRole('navigation', { name: 'Main' }).waitFor();
  });

  afterAll(async () => {
    if (demo && demo.exitCode === null && demo.signalCode === null) demo.kill('SIGTERM'); // run.sh stops its sessions on TERM
    await director?.close();
    await ui?.close();
    await airlock?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('shows every step of the five scripted sessions live, and ends with every task done and the conversation ended', { timeout: 240_000 }, async () => {
    await board.getByRole('link', { name: 'Board' }).click();
    await board.getByRole('heading', { name: 'No projects yet' }).waitFor();
    await chat.getByRole('heading', { name: 'No projects yet' }).waitFor();
    // A page that reloads loses this: every frame must still carry it.
    const markers = {
      board: await board.evaluate(() => ((window as unknown as { __teamDemo: number }).__teamDemo = Math.random())),
      chat: await chat.evaluate(() => ((window as unknown as { __teamDemo: number }).__teamDemo = Math.random())),
    };

    let midRun = '';
    director = new Director(new URL(airlock.mcpUrl), board, chat, {
      // What a person watching would open: the conversation once there is
      // one, and the task asked for in it once it is on the board.
      async nudge(truth, b, c) {
        const conv = truth.conversations[0];
        if (conv && !c.open) await chat.locator(`[data-testid=conversation-row][data-conversation-id="${conv.id}"]`).click();
        const fromChat = cardsOf(truth.board).find((t) => t.requestedInConversationId);
        if (fromChat && !director.wantDetail) {
          director.wantDetail = fromChat.id;
          if (b.detail?.id !== fromChat.id) await board.locator(`[data-testid=task-card][data-task-id="${fromChat.id}"] .card`).click();
        }
      },
      // The board mid-run: the page notes blocked on the API notes.
      async shown(frame) {
        if (midRun || !frame.board.cards.some((c) => c.column === 'blocked' && c.reason)) return;
        midRun = frame.after;
        await board.emulateMedia({ colorScheme: 'light' });
        await shot(board, 'team-demo-board-midrun-light');
      },
    });
    await director.listen();

    // run.sh, as a person runs it, pointed at this Airlock: its data directory
    // for the CLI, and its MCP endpoint through the director.
    const started = Date.now();
    demo = spawn('bash', [join(repoRoot, 'examples/team-demo/run.sh')], {
      env: {
        ...process.env, AIRLOCK: process.env.AIRLOCK_BIN!, AIRLOCK_DATA_DIR: airlock.dataDir, AIRLOCK_URL: director.url,
        DEMO_ID, TMPDIR: tmp, NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    demo.stdout!.on('data', (b) => (demoOut += b));
    demo.stderr!.on('data', (b) => (demoOut += b));
    const exited = new Promise<number>((resolve) => demo!.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : -1))));
    const code = await exited;
    const ended = Date.now();
    await director.idle();
    const context = `run.sh exited ${code} after ${ended - started} ms:\n${demoOut}\ndirector failures:\n${director.failures.join('\n')}`;

    // Every step got onto both screens, without a reload.
    expect(director.failures, context).toEqual([]);
    expect(code, context).toBe(0);
    for (const s of SESSIONS) expect(demoOut, `${s} passed`).toMatch(new RegExp(`^${s}\\s+agent-script: .*: all \\d+ steps passed$`, 'm'));
    const frames = director.frames;
    expect(frames.length, 'one frame per screen-changing call').toBeGreaterThan(20);
    for (const f of frames) {
      expect(f.at, `${f.after} was on screen while the scripts ran`).toBeLessThanOrEqual(ended);
      expect({ board: f.board.marker, chat: f.chat.marker }, `no page reloaded before ${f.after}`).toEqual(markers);
    }

    // The cards appeared and moved through their columns as the flows dictate.
    const view = await rpc<BoardView>(board, 'Board.Get', PROJECT, '');
    const task = (title: string) => cardsOf(view).find((t) => t.title === title)!;
    const api = task('Orders API notes');
    const pageNotes = task('Orders page notes');
    const extra = task('CHANGELOG entry for the orders work');
    const review = task('Review the CHANGELOG entry');
    expect(columnsOf(frames, api.title), 'the API notes: planned, released, worked on, done').toEqual(['backlog', 'todo', 'in_progress', 'done']);
    expect(columnsOf(frames, pageNotes.title), 'the page notes: planned, ready, blocked on the API notes, worked on, done').toEqual(['backlog', 'todo', 'blocked', 'in_progress', 'done']);
    expect(columnsOf(frames, extra.title), 'the task asked for in chat').toEqual(['todo', 'in_progress', 'done']);
    expect(columnsOf(frames, review.title), 'the review').toEqual(['todo', 'in_progress', 'done']);
    // Both created at once, by one create_tasks_batch.
    const first = frames.findIndex((f) => f.board.cards.length > 0);
    expect(frames[first].board.cards.map((c) => c.title).sort()).toEqual([api.title, pageNotes.title]);

    // The blocked reason showed on the card while it was blocked.
    const blocked = frames.filter((f) => f.board.cards.some((c) => c.id === pageNotes.id && c.column === 'blocked'));
    expect(blocked.length).toBeGreaterThan(0);
    for (const f of blocked) expect(f.board.cards.find((c) => c.id === pageNotes.id)!.reason).toBe(`Waiting for ${api.id} (Orders API notes)`);
    expect(midRun, 'the mid-run screenshot shows the blocked card').not.toBe('');

    // The chat-driven task appeared marked as asked for in chat, its detail
    // linking to the conversation: asked for in it, then started from it.
    const conv = (await rpc<ConversationSummary[]>(board, 'Chat.Conversations', view.project.id))[0];
    const link = `#/chat/${conv.id}`;
    const extraFrames = frames.filter((f) => f.board.detail?.id === extra.id);
    expect(extraFrames.length).toBeGreaterThan(0);
    expect(extraFrames[0].board.cards.find((c) => c.id === extra.id)).toMatchObject({ column: 'todo', fromChat: true });
    expect(extraFrames[0].board.detail!.conversations).toEqual([{ href: link, badges: ['asked for in'] }]);
    const working = extraFrames.find((f) => f.board.detail!.status === 'In progress')!;
    expect(working.board.detail!.conversations).toEqual([{ href: link, badges: ['started from', 'asked for in'] }]);
    expect(working.board.detail!.history.some((h) => h.includes(`from chat ${conv.id}`)), working.board.detail!.history.join('\n')).toBe(true);

    // The conversation's messages appeared in Chat one by one, and it ended.
    const ids = Object.fromEntries(view.agents.map((a) => [a.name, a.id]));
    const manager = ids[`manager-${DEMO_ID}`];
    const workerA = ids[`worker-a-${DEMO_ID}`];
    const messages = [
      { sender: workerA, content: `The Orders API notes are done (${api.id}): orders-api.md.` },
      { sender: manager, content: 'Thanks! One more thing: please add a CHANGELOG entry for the orders work, and track it as a task. I will send you the version number.' },
      { sender: workerA, content: `Tracked as ${extra.id} and started.` },
      { sender: manager, content: 'Great, thanks.' },
      { sender: manager, content: `Use version 1.4.0 for it. I will review it (${review.id}) once ${extra.id} is done.` },
      { sender: workerA, content: `${extra.id} is done: CHANGELOG.md has the 1.4.0 entry.` },
      { sender: manager, content: 'Thanks, that is everything.' },
    ];
    const shownCounts: number[] = [];
    for (const f of frames) {
      const n = f.chat.open?.messages.length;
      if (n !== undefined && shownCounts.at(-1) !== n) shownCounts.push(n);
    }
    expect(shownCounts, 'each message appeared on its own').toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(frames.at(-1)!.chat.open!.messages).toEqual(messages);
    const states = frames.filter((f) => f.chat.open).map((f) => `${f.chat.open!.state}/${f.chat.rows[0].state}`);
    expect([...new Set(states)], 'active in the view and the list, then ended in both').toEqual(['active/active', 'ended/ended']);

    // The end: every task in Done, the conversation ended, on both pages.
    const column = (status: string) => board.locator(`[data-testid=board-column][data-status="${status}"] [data-testid=task-card]`);
    await expect.poll(() => column('done').count(), LIVE).toBe(4);
    for (const s of ['backlog', 'todo', 'in_progress', 'blocked']) expect(await column(s).count(), s).toBe(0);
    expect(await chat.getByTestId('conversation-ended').count()).toBe(1);
    expect(await chat.getByLabel('Message', { exact: true }).count(), 'an ended conversation has no composer').toBe(0);
    expect(await board.evaluate(() => (window as unknown as { __teamDemo?: number }).__teamDemo)).toBe(markers.board);
    expect(await chat.evaluate(() => (window as unknown as { __teamDemo?: number }).__teamDemo)).toBe(markers.chat);
    expect(pageErrors).toEqual([]);

    for (const p of [board, chat]) await p.emulateMedia({ colorScheme: 'light' });
    await shot(chat, 'team-demo-chat-light');
    await board.getByTestId('task-conversations').scrollIntoViewIfNeeded();
    await shot(board, 'team-demo-board-detail-light');
    await board.getByRole('button', { name: 'Close task' }).click();
    await board.getByTestId('task-detail').waitFor({ state: 'detached' });
    await shot(board, 'team-demo-board-light');
  });
});
