import { beforeEach, describe, expect, it, vi } from 'vitest';
import { emit, fakeApi, resetFakeApi, resync } from '../testing/fakeApi';
import { agentView as a, role } from '../testing/agents';
import type { AgentView } from '../api';
import { AgentsStore } from './agents.svelte';

vi.mock('../api', async () => (await import('../testing/fakeApi')).fakeApiModule());

describe('AgentsStore', () => {
  beforeEach(() => resetFakeApi());

  it('orders the hierarchy owner first, each agent under its parent, coordinators before managers before workers', async () => {
    vi.mocked(fakeApi.agents.list).mockResolvedValue([
      a('w2', 'zed', 'worker', 'm1'),
      a('m1', 'mgr', 'manager', 'own'),
      a('own', 'owner', 'owner', undefined),
      a('w1', 'amy', 'worker', 'm1'),
      a('c1', 'zz-coord', 'coordinator', 'own'),
      a('orphan', 'lost', 'worker', 'gone'), // its parent is not in the list
    ]);
    const store = new AgentsStore();
    await store.load();
    expect(store.tree.map((r) => `${'  '.repeat(r.depth)}${r.agent.name}${r.parent ? '/' : ''}`)).toEqual([
      'owner/',
      '  zz-coord',
      '  mgr/',
      '    amy',
      '    zed',
      'lost', // at the top level, after the owner's tree
    ]);
    expect([...store.subtree('m1')].sort()).toEqual(['m1', 'w1', 'w2']);
  });

  it('lists agents caught in a stored cycle instead of losing them', async () => {
    vi.mocked(fakeApi.agents.list).mockResolvedValue([a('own', 'owner', 'owner', undefined), a('x', 'x', 'worker', 'y'), a('y', 'y', 'worker', 'x')]);
    const store = new AgentsStore();
    await store.load();
    expect(store.tree.map((r) => r.agent.id).sort()).toEqual(['own', 'x', 'y']);
  });

  it('reloads on agents:changed and on a resync; a newer load wins over an older one', async () => {
    const store = new AgentsStore();
    const off = store.connect();
    let first!: (v: AgentView[]) => void;
    vi.mocked(fakeApi.agents.list)
      .mockReturnValueOnce(new Promise((r) => (first = r)))
      .mockResolvedValueOnce([a('own', 'owner', 'owner', undefined), a('b', 'bob', 'worker', 'own', { status: 'suspended' })]);
    const older = store.load();
    emit('agents:changed', { agentIds: ['b'] }); // a newer load
    await vi.waitFor(() => expect(store.byId('b')?.status).toBe('suspended'));
    first([a('own', 'owner', 'owner', undefined), a('b', 'bob', 'worker', 'own')]); // the older answer arrives late
    await older;
    expect(store.byId('b')?.status).toBe('suspended');

    vi.mocked(fakeApi.agents.list).mockResolvedValue([a('own', 'owner', 'owner', undefined)]);
    resync();
    await vi.waitFor(() => expect(store.agents.map((x) => x.id)).toEqual(['own']));
    off();
  });

  it('switches status through suspend, resume and update', async () => {
    const bob = a('b', 'bob', 'worker', 'own');
    vi.mocked(fakeApi.agents.list).mockResolvedValue([bob]);
    vi.mocked(fakeApi.agents.suspend).mockResolvedValue({ ...bob, status: 'suspended' });
    vi.mocked(fakeApi.agents.resume).mockResolvedValue(bob);
    vi.mocked(fakeApi.agents.update).mockResolvedValue({ ...bob, status: 'disabled' });
    const store = new AgentsStore();
    await store.setStatus('b', 'suspended');
    await store.setStatus('b', 'active');
    await store.setStatus('b', 'disabled');
    expect(fakeApi.agents.suspend).toHaveBeenCalledWith('b');
    expect(fakeApi.agents.resume).toHaveBeenCalledWith('b');
    expect(fakeApi.agents.update).toHaveBeenCalledWith('b', { status: 'disabled' });
  });

  it('grants, revokes and sets tool exceptions on roles', async () => {
    vi.mocked(fakeApi.agents.grant).mockResolvedValue(role('r', { servers: ['fs'] }));
    vi.mocked(fakeApi.agents.revoke).mockResolvedValue(role('r'));
    vi.mocked(fakeApi.agents.setRoleTool).mockResolvedValue(role('r'));
    const store = new AgentsStore();
    await store.setGrant('r', 'fs', true);
    await store.setGrant('r', 'fs', false);
    await store.setRoleTool('r', 'fs', 'write', false);
    await store.setRoleTool('r', 'fs', 'write', null);
    expect(vi.mocked(fakeApi.agents.grant).mock.calls).toEqual([['r', 'fs']]);
    expect(vi.mocked(fakeApi.agents.revoke).mock.calls).toEqual([['r', 'fs']]);
    expect(vi.mocked(fakeApi.agents.setRoleTool).mock.calls).toEqual([['r', 'fs', 'write', false], ['r', 'fs', 'write', null]]);
  });
});
