import { api } from '../api';
import type { ChatMessageEvent, Conversation, ConversationSummary, Message } from '../api';
import { on, onResync } from '../events';
import { errorText } from './util';

/** The owner's agent id (authz.OwnerID): the person using this screen. */
export const OWNER_ID = 'ag_owner';

/** The largest message the backend accepts (teams.MaxMessage, in UTF-8 bytes). */
export const MAX_MESSAGE_BYTES = 16 << 10;

/** How many messages one load brings: the last ones first, then as many earlier ones per "Load earlier messages". */
export const MESSAGE_WINDOW = 200;

/** A message's size as the backend counts it. */
export function messageBytes(s: string): number {
  return new TextEncoder().encode(s).length;
}

/** The agents who take part (members), the way the list names them. */
export function members(c: Conversation): string[] {
  return c.participants.filter((p) => p.role === 'member').map((p) => p.agentName || p.agentId);
}

/**
 * Every conversation of every project as the owner sees it (participants,
 * state, what is unread), and the open conversation's messages. The owner
 * may write into any conversation and start one with any agent.
 * chat:message appends live (and counts as unread where the conversation
 * is not open); chat:conversation reloads the list.
 */
export class ChatStore {
  conversations = $state<ConversationSummary[]>([]);
  loaded = $state(false);
  error = $state<string | null>(null);

  openId = $state<string | null>(null);
  open = $state<Conversation | null>(null);
  messages = $state<Message[]>([]);
  /** How many messages the open conversation has (more than shown when it is long). */
  total = $state(0);
  openError = $state<string | null>(null);
  openLoaded = $state(false);
  /** Earlier messages of the open conversation are on their way. */
  loadingEarlier = $state(false);
  earlierError = $state<string | null>(null);

  /** The open conversation has messages before the first one shown. */
  hasEarlier = $derived(this.total > this.messages.length);

  /** Messages the owner has not read, over every conversation. */
  unreadTotal = $derived(this.conversations.reduce((n, c) => n + c.unread, 0));

  /**
   * What the owner has written but not sent, per conversation: a look at
   * another conversation keeps it. In memory only, like the rest of the
   * screen's state.
   */
  private drafts = $state<Record<string, string>>({});

  /** How many views show the open conversation now: only then does what arrives count as read. */
  private viewers = 0;
  private listSeq = 0;
  private openSeq = 0;
  private marking: Promise<void> | null = null;
  private readAgain = false;

  async load(): Promise<void> {
    const seq = ++this.listSeq;
    try {
      const cs = (await api.chat.conversations('')) ?? [];
      if (seq !== this.listSeq) return;
      // The open conversation is being read: what arrives there is not unread.
      this.conversations = cs.map((c) => (c.id === this.openId && this.reading ? { ...c, unread: 0 } : c));
      this.error = null;
    } catch (err) {
      if (seq === this.listSeq) this.error = errorText(err);
    } finally {
      if (seq === this.listSeq) this.loaded = true;
    }
  }

  /** Subscribes to live updates; returns the unsubscribe function. */
  connect(): () => void {
    const offs = [
      on('chat:message', (e) => this.arrived(e)),
      on('chat:conversation', (e) => {
        void this.load();
        if (this.openId && (!e.conversationId || e.conversationId === this.openId)) void this.loadOpen();
      }),
      onResync(() => {
        void this.load();
        if (this.openId) void this.loadOpen();
      }),
    ];
    return () => offs.forEach((off) => off());
  }

  /**
   * Registers a view of the open conversation (the Chat screen) while it
   * shows: messages that arrive there are read. Returns the function that
   * ends it. Away from the screen they count as unread.
   */
  show(): () => void {
    this.viewers++;
    if (this.openId) void this.loadOpen();
    return () => {
      this.viewers--;
    };
  }

  /** The open conversation is on screen. */
  private get reading(): boolean {
    return this.viewers > 0 && this.openLoaded;
  }

  summary(id: string | null): ConversationSummary | undefined {
    return id ? this.conversations.find((c) => c.id === id) : undefined;
  }

  /** The conversations of one project ('' for all), the most recently active first. */
  inProject(projectId: string): ConversationSummary[] {
    return projectId ? this.conversations.filter((c) => c.projectId === projectId) : this.conversations;
  }

  /** Opens a conversation (null closes it) and marks it read. */
  async select(id: string | null): Promise<void> {
    if (id !== this.openId) {
      this.openId = id;
      this.open = null;
      this.messages = [];
      this.total = 0;
      this.openError = null;
      this.openLoaded = false;
      this.loadingEarlier = false;
      this.earlierError = null;
    }
    if (id) await this.loadOpen();
  }

  /** The unsent text of a conversation ('' when there is none). */
  draft(id: string): string {
    return this.drafts[id] ?? '';
  }

  setDraft(id: string, text: string): void {
    if (text) this.drafts[id] = text;
    else delete this.drafts[id];
  }

  /**
   * Loads the messages written before the first one shown, a window at a
   * time, so a long conversation reads back to its start.
   */
  async loadEarlier(): Promise<void> {
    const id = this.openId;
    const first = this.messages[0];
    if (!id || !first || this.loadingEarlier) return;
    this.loadingEarlier = true;
    this.earlierError = null;
    try {
      const v = await api.chat.messages(id, MESSAGE_WINDOW, first.seq);
      if (id !== this.openId) return;
      this.messages = merge(v.messages, this.messages);
      this.total = Math.max(v.total, this.messages.length);
    } catch (err) {
      if (id === this.openId) this.earlierError = errorText(err);
    } finally {
      if (id === this.openId) this.loadingEarlier = false;
    }
  }

  async loadOpen(): Promise<void> {
    const id = this.openId;
    if (!id) return;
    const seq = ++this.openSeq;
    try {
      const v = await api.chat.messages(id, MESSAGE_WINDOW, 0);
      if (seq !== this.openSeq || id !== this.openId) return;
      this.open = v.conversation;
      // Keep what arrived live while the answer was on its way.
      this.messages = merge(v.messages, this.messages.filter((m) => m.conversationId === id));
      this.total = Math.max(v.total, this.messages.length);
      this.openError = null;
      this.openLoaded = true;
      if (this.viewers > 0) {
        this.conversations = this.conversations.map((c) => (c.id === id && c.unread ? { ...c, unread: 0 } : c));
        void this.markRead();
      }
    } catch (err) {
      if (seq === this.openSeq && id === this.openId) this.openError = errorText(err);
    }
  }

  /** Writes into the open conversation as the owner; throws the backend's refusal. */
  async send(content: string): Promise<Message> {
    const id = this.openId;
    if (!id) throw new Error('no conversation is open');
    const m = await api.chat.send(id, content);
    this.arrived({ projectId: this.open?.projectId ?? '', message: m });
    return m;
  }

  /** Starts a conversation of the owner with agents of a project and opens it. */
  async start(projectId: string, agentIds: string[], topic: string, message: string): Promise<ConversationSummary> {
    const c = await api.chat.start(projectId, agentIds, topic, message);
    this.conversations = [c, ...this.conversations.filter((x) => x.id !== c.id)];
    await this.select(c.id);
    void this.load();
    return c;
  }

  /** Starts a conversation of the owner with a task's assignee about the task. */
  async startAboutTask(taskId: string, message: string): Promise<ConversationSummary> {
    const c = await api.chat.startAboutTask(taskId, message);
    this.conversations = [c, ...this.conversations.filter((x) => x.id !== c.id)];
    return c;
  }

  /** Ends a conversation, as the owner: nothing more can be written in it. */
  async end(id: string): Promise<Conversation> {
    const c = await api.chat.end(id);
    if (id === this.openId) this.open = c;
    this.conversations = this.conversations.map((x) => (x.id === id ? { ...x, ...c } : x));
    void this.load();
    return c;
  }

  /** A message someone wrote: into the open conversation, and the list's counts. */
  private arrived(e: ChatMessageEvent): void {
    const m = e.message;
    const here = m.conversationId === this.openId;
    if (here && !this.messages.some((x) => x.id === m.id)) {
      this.messages = merge(this.messages, [m]);
      this.total++;
    }
    const i = this.conversations.findIndex((c) => c.id === m.conversationId);
    if (i < 0) {
      void this.load(); // a conversation this list has not seen yet
      return;
    }
    const c = this.conversations[i];
    if (c.lastMessage && c.lastMessage.seq >= m.seq) return; // seen already (our own send, then its event)
    const unread = here && this.reading ? 0 : c.unread + (m.senderId === OWNER_ID ? 0 : 1);
    const updated = { ...c, lastMessage: m, unread, updatedAt: m.createdAt };
    this.conversations = [updated, ...this.conversations.slice(0, i), ...this.conversations.slice(i + 1)];
    if (here && this.reading && m.senderId !== OWNER_ID) void this.markRead();
  }

  /** Marks the open conversation read; calls made while one is on its way cost one more, not one each. */
  private markRead(): Promise<void> {
    const id = this.openId;
    if (!id) return Promise.resolve();
    if (this.marking) {
      this.readAgain = true;
      return this.marking;
    }
    this.marking = api.chat
      .markRead(id)
      .catch(() => {
        // Only the unread count depends on it; the next message tries again.
      })
      .finally(() => {
        this.marking = null;
        if (this.readAgain) {
          this.readAgain = false;
          void this.markRead();
        }
      });
    return this.marking;
  }
}

/** Messages of a and b, each once, in the order they were written. */
function merge(a: Message[], b: Message[]): Message[] {
  const byId = new Map<string, Message>();
  for (const m of [...a, ...b]) byId.set(m.id, m);
  return [...byId.values()].sort((x, y) => x.seq - y.seq);
}
