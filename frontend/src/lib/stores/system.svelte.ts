import { api } from '../api';
import type { Failure } from '../api';
import { on, onResync } from '../events';

/** What is not one screen's: for now, whether the audit log can be written. */
export class SystemStore {
  /**
   * The last audit write that failed. While the log cannot be written,
   * Airlock refuses every request it cannot record (audit_unavailable).
   */
  auditFailure = $state<Failure | null>(null);
  /** The failure the person closed the banner of; a newer one shows again. */
  private dismissedAt = $state<string | null>(null);

  /** The failure to show, unless the person closed it. */
  get shownAuditFailure(): Failure | null {
    const f = this.auditFailure;
    return f && f.at !== this.dismissedAt ? f : null;
  }

  async load(): Promise<void> {
    try {
      const s = await api.system.auditStatus();
      this.auditFailure = s?.lastFailure ?? null;
    } catch {
      // The screens show their own load errors; this banner is only about the audit log.
    }
  }

  dismissAuditFailure(): void {
    this.dismissedAt = this.auditFailure?.at ?? null;
  }

  connect(): () => void {
    const offs = [
      on('audit:failed', (f) => (this.auditFailure = f)),
      // Writes work again: the banner goes away by itself.
      on('audit:recovered', () => (this.auditFailure = null)),
      onResync(() => void this.load()),
    ];
    return () => offs.forEach((off) => off());
  }
}
