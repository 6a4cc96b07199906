import { ApiError } from '../api';

/** A message fit for the UI from anything a call threw. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.hint ? `${err.message} — ${err.hint}` : err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}
