import type { Risk } from '../../api';

const tones: Record<Risk, string> = { destructive: 'danger', open_world: 'warn', modifies: 'warn', unknown: 'info', read_only: 'ok' };
const banners: Record<Risk, string> = { destructive: 'error', open_world: 'warn', modifies: 'warn', unknown: 'info', read_only: 'info' };
const labels: Record<Risk, string> = {
  destructive: 'destructive',
  open_world: 'open world',
  modifies: 'changes data',
  unknown: 'unknown risk',
  read_only: 'read-only',
};
const fallbacks: Record<Risk, string> = {
  destructive: 'This tool may delete or overwrite data.',
  open_world: 'This tool reaches outside your machine.',
  modifies: 'This tool may change data; the server says it destroys nothing and stays on this machine.',
  unknown: 'The server does not say what this tool does. Check the arguments.',
  read_only: 'The server marks this tool as read-only.',
};

/** The backend sends risk as a string; anything unexpected is shown as unknown, never as safe. */
function known(risk: string): Risk {
  return risk in labels ? (risk as Risk) : 'unknown';
}

export const riskTone = (risk: string): string => tones[known(risk)];
export const riskBanner = (risk: string): string => banners[known(risk)];
export const riskLabel = (risk: string): string => labels[known(risk)];
export const riskFallback = (risk: string): string => fallbacks[known(risk)];
