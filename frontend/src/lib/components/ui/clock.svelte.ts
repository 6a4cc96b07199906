// The time relative times ("3m ago") are measured from. It is reactive: a
// template that shows relTime(...) reads it, so the text moves on by
// itself. One timer for the whole UI (reading must not write state: a
// template may not change state while it renders).
let now = $state(Date.now());

/** How often relative times move on. */
export const TICK_MS = 10_000;

if (typeof setInterval !== 'undefined') setInterval(() => (now = Date.now()), TICK_MS);

export function currentTime(): number {
  return now;
}
