import type { Risk } from '../../api';

export const riskTone: Record<Risk, string> = { destructive: 'danger', open_world: 'warn', unknown: 'info', read_only: 'ok' };
export const riskBanner: Record<Risk, string> = { destructive: 'error', open_world: 'warn', unknown: 'info', read_only: 'info' };
export const riskLabel: Record<Risk, string> = { destructive: 'destructive', open_world: 'open world', unknown: 'unknown risk', read_only: 'read-only' };
export const riskFallback: Record<Risk, string> = {
  destructive: 'This tool may delete or overwrite data.',
  open_world: 'This tool reaches outside your machine.',
  unknown: 'The server does not say what this tool does. Check the arguments.',
  read_only: 'The server marks this tool as read-only.',
};
