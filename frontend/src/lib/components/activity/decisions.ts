// How Activity words a decision, in its badges and in its filter alike.
export const DECISION_LABELS: Record<string, string> = {
  allow: 'auto-allowed', approved: 'approved', declined: 'declined', timeout: 'timed out', expired: 'expired', denied: 'denied', error: 'error',
};

export function decisionLabel(d: string): string {
  return DECISION_LABELS[d] ?? (d || '—');
}
