import { api } from '../api';
import type { BuiltinSettings, Classification, Overview } from '../api';
import { on, onResync } from '../events';
import { errorText } from './util';

/**
 * The built-in file and shell tools' settings: allowed folders, which of
 * the three servers run, the shell's deny and ask lists, the environment
 * allow list, timeouts and size caps. A change applies to the very next
 * call; builtin:changed carries the settings in force (also after a change
 * from the CLI or another window).
 */
export class BuiltinStore {
  overview = $state<Overview | null>(null);
  /** The built-in servers' ids (file-read, file-write, shell-exec). */
  servers = $state<string[]>([]);
  loading = $state(false);
  loaded = $state(false);
  error = $state<string | null>(null);

  private seq = 0;
  /** Counts builtin:changed events: one newer than a load's answer wins over it. */
  private events = 0;

  async load(): Promise<void> {
    const seq = ++this.seq;
    const events = this.events;
    this.loading = true;
    try {
      const [ov, servers] = await Promise.all([api.builtin.get(), api.builtin.servers()]);
      if (seq !== this.seq) return;
      if (events === this.events) this.overview = ov;
      this.servers = servers ?? [];
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

  connect(): () => void {
    const offs = [
      on('builtin:changed', (ov) => {
        this.events++;
        this.overview = ov;
      }),
      onResync(() => void this.load()),
    ];
    return () => offs.forEach((off) => off());
  }

  get settings(): BuiltinSettings | null {
    return this.overview?.settings ?? null;
  }

  /** The tools run: a folder is allowed. */
  get enabled(): boolean {
    return !!this.overview?.enabled;
  }

  /** Whether built-in server id is switched on (it runs once a folder is allowed). */
  isOn(id: string): boolean {
    return !(this.overview?.settings.off ?? []).includes(id);
  }

  /**
   * Replaces the given fields of the settings in force. Invalid settings
   * are refused (an ApiError naming the field) and nothing changes; the
   * caller shows the error where the edit was made.
   */
  async update(patch: Partial<BuiltinSettings>): Promise<Overview> {
    const cur = this.overview?.settings;
    if (!cur) throw new Error('The built-in settings are not loaded yet.');
    return this.apply(await api.builtin.update({ ...cur, ...patch }));
  }

  /** Lets the built-in tools use a folder; the first folder turns them on. */
  async allowPath(dir: string): Promise<Overview> {
    return this.apply(await api.builtin.allowPath(dir.trim()));
  }

  async removePath(dir: string): Promise<Overview> {
    return this.apply(await api.builtin.removePath(dir));
  }

  async setServerOn(id: string, on: boolean): Promise<Overview> {
    const off = (this.overview?.settings.off ?? []).filter((x) => x !== id);
    return this.update({ off: on ? off : [...off, id] });
  }

  /** What the shell policy makes of a command line with the settings in force. */
  classify(command: string): Promise<Classification> {
    return api.builtin.classify(command, []);
  }

  private apply(ov: Overview): Overview {
    this.events++; // the answer is as new as any event before it
    this.overview = ov;
    return ov;
  }
}
