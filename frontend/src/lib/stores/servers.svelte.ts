import { api } from '../api';
import type { ConfigState, ImportResult, ServerConfig, ServerStatus, ServerView } from '../api';
import { on, onResync } from '../events';
import { errorText } from './util';

/** The tool sources (configured and built-in), their live status and the servers file's state. */
export class ServersStore {
  views = $state<ServerView[]>([]);
  configState = $state<ConfigState | null>(null);
  loading = $state(false);
  loaded = $state(false);
  error = $state<string | null>(null);

  private seq = 0;
  /** Statuses that arrived while a load was in flight: newer than its answer. */
  private duringLoad: ServerStatus[] | null = null;

  async load(): Promise<void> {
    const seq = ++this.seq;
    this.loading = true;
    this.duringLoad = [];
    try {
      const [views, cs] = await Promise.all([api.servers.list(), api.servers.configState()]);
      if (seq !== this.seq) return; // a newer load won
      const during = this.duringLoad ?? [];
      this.duringLoad = null;
      this.views = views ?? [];
      this.configState = cs;
      this.error = null;
      during.forEach((s) => this.applyStatus(s));
    } catch (err) {
      if (seq === this.seq) {
        this.duringLoad = null;
        this.error = errorText(err);
      }
    } finally {
      if (seq === this.seq) {
        this.loading = false;
        this.loaded = true;
      }
    }
  }

  /** Subscribes to live updates; returns the unsubscribe function. */
  connect(): () => void {
    const offs = [
      on('server:status', (s) => this.applyStatus(s)),
      on('servers:changed', (cs) => {
        this.configState = cs;
        void this.load();
      }),
      onResync(() => void this.load()),
    ];
    return () => offs.forEach((off) => off());
  }

  applyStatus(s: ServerStatus): void {
    this.duringLoad?.push(s);
    const v = this.views.find((v) => v.config.id === s.id);
    if (v) v.status = s;
    // A built-in server has no config entry to add it: its status is all there is.
    else if (s.builtIn) this.upsert({ config: { id: s.id, type: 'in-process' }, status: s });
  }

  byId(id: string | null): ServerView | undefined {
    return id == null ? undefined : this.views.find((v) => v.config.id === id);
  }

  async add(cfg: ServerConfig): Promise<ServerView> {
    const v = await api.servers.add(cfg);
    this.upsert(v);
    return v;
  }

  async update(cfg: ServerConfig): Promise<ServerView> {
    const v = await api.servers.update(cfg);
    this.upsert(v);
    return v;
  }

  async remove(id: string): Promise<void> {
    await api.servers.remove(id);
    this.views = this.views.filter((v) => v.config.id !== id);
  }

  async restart(id: string): Promise<void> {
    await api.servers.restart(id);
  }

  /**
   * Accepts a tool's changed definition (or a new tool), the one shown (its changed.shown); calls to it
   * stop asking. Refused (conflict) when the server lists another one since; the list is reloaded either
   * way, so the screen shows what the server lists now.
   */
  async acceptToolChange(server: string, tool: string, shown: string): Promise<void> {
    try {
      await api.servers.acceptToolChange(server, tool, shown);
    } finally {
      await this.load();
    }
  }

  /**
   * Accepts a server's changed instructions, given as the text shown: agents that connect from now
   * on get them. Refused (conflict) when the server gave other ones since; the list is reloaded either
   * way, so the screen shows what the server gives now.
   */
  async acceptInstructionsChange(server: string, shown: string): Promise<void> {
    try {
      await api.servers.acceptInstructionsChange(server, shown);
    } finally {
      await this.load();
    }
  }

  async importConfig(text: string): Promise<ImportResult> {
    const r = await api.servers.import(text);
    await this.load();
    return r;
  }

  private upsert(v: ServerView): void {
    const i = this.views.findIndex((x) => x.config.id === v.config.id);
    if (i >= 0) this.views[i] = v;
    else this.views = [...this.views, v];
  }
}
