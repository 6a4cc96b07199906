import { getContext, setContext } from 'svelte';
import { ActivityStore } from './activity.svelte';
import { AgentsStore } from './agents.svelte';
import { ApprovalsStore } from './approvals.svelte';
import { BoardStore } from './board.svelte';
import { BuiltinStore } from './builtin.svelte';
import { ChatStore } from './chat.svelte';
import { RulesStore } from './rules.svelte';
import { ServersStore } from './servers.svelte';
import { SystemStore } from './system.svelte';

/** The app's stores, created once by App and handed down through context. */
export interface Stores {
  servers: ServersStore;
  activity: ActivityStore;
  approvals: ApprovalsStore;
  rules: RulesStore;
  system: SystemStore;
  agents: AgentsStore;
  builtin: BuiltinStore;
  board: BoardStore;
  chat: ChatStore;
}

export const STORES = Symbol('airlock-stores');

export function createStores(): Stores {
  return {
    servers: new ServersStore(),
    activity: new ActivityStore(),
    approvals: new ApprovalsStore(),
    rules: new RulesStore(),
    system: new SystemStore(),
    agents: new AgentsStore(),
    builtin: new BuiltinStore(),
    board: new BoardStore(),
    chat: new ChatStore(),
  };
}

export function provideStores(stores: Stores): Stores {
  setContext(STORES, stores);
  return stores;
}

export function useStores(): Stores {
  const s = getContext<Stores | undefined>(STORES);
  if (!s) throw new Error('stores missing: render inside App or pass context');
  return s;
}
