// Typed backend events. `on` returns the unsubscribe function; components
// call it from $effect so subscriptions end with the component.
import { subscribe, onReconnect } from './api';
import type { EventMap, EventName } from './api';

export type { EventMap, EventName };

export function on<K extends EventName>(name: K, fn: (payload: EventMap[K]) => void): () => void {
  return subscribe(name, fn);
}

/** Runs fn when the live event stream came back after a drop. */
export function onResync(fn: () => void): () => void {
  return onReconnect(fn);
}
