import { describe, expect, it } from 'vitest';
import { agentHref, boardHref, chatHref, hintParts, parseHash, roleHref } from './route';

describe('parseHash', () => {
  it.each([
    ['', { route: 'servers' }],
    ['#/rules', { route: 'rules' }],
    ['#/builtin', { route: 'builtin' }],
    ['#/nonsense', { route: 'servers' }],
    ['#/agents', { route: 'agents', agents: { view: 'agents', id: null, tab: null } }],
    // The backend's deny hints link like this (authz uiLink).
    ['#/agents/ag_7f3a?tab=role', { route: 'agents', agents: { view: 'agents', id: 'ag_7f3a', tab: 'role' } }],
    ['#/agents/ag_7f3a?tab=status', { route: 'agents', agents: { view: 'agents', id: 'ag_7f3a', tab: 'status' } }],
    ['#/agents/ag_7f3a?tab=bogus', { route: 'agents', agents: { view: 'agents', id: 'ag_7f3a', tab: null } }],
    ['#/agents/roles/readers', { route: 'agents', agents: { view: 'roles', id: 'readers', tab: null } }],
    ['#/agents/projects', { route: 'agents', agents: { view: 'projects', id: null, tab: null } }],
    ['#/board', { route: 'board', board: { project: null, task: null, agent: null } }],
    ['#/board/prj_1', { route: 'board', board: { project: 'prj_1', task: null, agent: null } }],
    ['#/board/prj_1/tsk_2?agent=ag_3', { route: 'board', board: { project: 'prj_1', task: 'tsk_2', agent: 'ag_3' } }],
    ['#/chat', { route: 'chat', chat: { conversation: null } }],
    ['#/chat/conv_9', { route: 'chat', chat: { conversation: 'conv_9' } }],
  ])('%s', (hash, want) => {
    expect(parseHash(hash)).toEqual(want);
  });

  it('reads back the links it makes', () => {
    expect(parseHash(agentHref('ag_1', 'tools')).agents).toEqual({ view: 'agents', id: 'ag_1', tab: 'tools' });
    expect(parseHash(roleHref('a.b-c')).agents).toEqual({ view: 'roles', id: 'a.b-c', tab: null });
    expect(parseHash(boardHref('web site', 'tsk_1', 'none')).board).toEqual({ project: 'web site', task: 'tsk_1', agent: 'none' });
    expect(parseHash(boardHref('p')).board).toEqual({ project: 'p', task: null, agent: null });
    expect(parseHash(chatHref('conv_1')).chat).toEqual({ conversation: 'conv_1' });
  });

  it('links to the board and chat inside hints', () => {
    expect(hintParts('look at #/board/prj_1/tsk_2 first')).toEqual([{ text: 'look at ' }, { text: '#/board/prj_1/tsk_2', href: '#/board/prj_1/tsk_2' }, { text: ' first' }]);
  });
});

describe('hintParts', () => {
  it('turns the backend\'s "open Airlock → …" wording into one link', () => {
    const hint = "grant server 'work' to role 'default', or give agent 'bob' another role: open Airlock → Agents → bob → Role (#/agents/ag_1?tab=role)";
    expect(hintParts(hint)).toEqual([
      { text: "grant server 'work' to role 'default', or give agent 'bob' another role: " },
      { text: 'Agents → bob → Role', href: '#/agents/ag_1?tab=role' },
    ]);
  });

  it('keeps a bare link and the text around it', () => {
    expect(hintParts('see #/builtin for the lists.')).toEqual([{ text: 'see ' }, { text: '#/builtin', href: '#/builtin' }, { text: ' for the lists.' }]);
  });

  it('leaves text without a link alone', () => {
    expect(hintParts('pass overwrite: true to replace it')).toEqual([{ text: 'pass overwrite: true to replace it' }]);
  });
});
