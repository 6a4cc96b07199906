import { beforeEach, describe, expect, it, vi } from 'vitest';
import { emit, fakeApi, resetFakeApi } from '../testing/fakeApi';
import { conversation, message } from '../testing/teams';
import type { MessagesView } from '../api';
import { ChatStore } from './chat.svelte';

vi.mock('../api', async () => (await import('../testing/fakeApi')).fakeApiModule());

const view = (id: string, seqs: number[]): MessagesView => ({
  conversation: conversation(id, 'topic', ['ag_mgr', 'ag_bob']),
  messages: seqs.map((n) => message(n, id, 'ag_bob', `m${n}`)),
  total: seqs.length,
});

describe('ChatStore', () => {
  beforeEach(() => {
    resetFakeApi();
    vi.mocked(fakeApi.chat.conversations).mockResolvedValue([
      conversation('c1', 'one', ['ag_mgr', 'ag_bob'], { unread: 2, lastMessage: message(2, 'c1', 'ag_bob', 'm2') }),
      conversation('c2', 'two', ['ag_bob'], { unread: 0, lastMessage: message(3, 'c2', 'ag_bob', 'm3') }),
    ]);
    vi.mocked(fakeApi.chat.messages).mockImplementation(async (id) => view(id, id === 'c1' ? [1, 2] : [3]));
  });

  it('counts what arrives in conversations not on screen as unread and moves them to the top', async () => {
    const s = new ChatStore();
    const off = s.connect();
    await s.load();
    expect(s.unreadTotal).toBe(2);
    emit('chat:message', { projectId: 'prj_web', message: message(4, 'c2', 'ag_bob', 'hello') });
    expect(s.conversations.map((c) => [c.id, c.unread])).toEqual([['c2', 1], ['c1', 2]]);
    expect(s.unreadTotal).toBe(3);
    // The owner's own messages are never unread.
    emit('chat:message', { projectId: 'prj_web', message: message(5, 'c2', 'ag_owner', 'mine') });
    expect(s.summary('c2')?.unread).toBe(1);
    off();
  });

  it('reads the open conversation only while the Chat screen shows it', async () => {
    const s = new ChatStore();
    const off = s.connect();
    await s.load();
    await s.select('c1'); // opened, but no screen shows it
    expect(fakeApi.chat.markRead).not.toHaveBeenCalled();
    expect(s.summary('c1')?.unread).toBe(2);

    const hide = s.show();
    await vi.waitFor(() => expect(fakeApi.chat.markRead).toHaveBeenCalledWith('c1'));
    expect(s.summary('c1')?.unread).toBe(0);
    emit('chat:message', { projectId: 'prj_web', message: message(6, 'c1', 'ag_bob', 'live') });
    expect(s.messages.map((m) => m.content)).toEqual(['m1', 'm2', 'live']);
    expect(s.summary('c1')?.unread).toBe(0);
    await vi.waitFor(() => expect(fakeApi.chat.markRead).toHaveBeenCalledTimes(2));

    hide();
    emit('chat:message', { projectId: 'prj_web', message: message(7, 'c1', 'ag_bob', 'while away') });
    expect(s.messages.map((m) => m.content)).toEqual(['m1', 'm2', 'live', 'while away']);
    expect(s.summary('c1')?.unread).toBe(1);
    off();
  });

  it('shows the owner\'s message once, whether the answer or the event comes first', async () => {
    const s = new ChatStore();
    const off = s.connect();
    await s.load();
    const hide = s.show();
    await s.select('c2');
    const mine = message(8, 'c2', 'ag_owner', 'from me');
    vi.mocked(fakeApi.chat.send).mockImplementation(async () => {
      emit('chat:message', { projectId: 'prj_web', message: mine }); // the event overtakes the answer
      return mine;
    });
    await s.send('from me');
    expect(fakeApi.chat.send).toHaveBeenCalledWith('c2', 'from me');
    expect(s.messages.map((m) => m.id)).toEqual(['msg_3', 'msg_8']);
    expect(s.total).toBe(2);
    expect(s.conversations[0].lastMessage?.id).toBe('msg_8');
    hide();
    off();
  });

  it('loads the list again for a conversation it has not seen and on chat:conversation', async () => {
    const s = new ChatStore();
    const off = s.connect();
    await s.load();
    vi.mocked(fakeApi.chat.conversations).mockClear();
    emit('chat:message', { projectId: 'prj_web', message: message(9, 'c-new', 'ag_bob', 'hi') });
    await vi.waitFor(() => expect(fakeApi.chat.conversations).toHaveBeenCalledTimes(1));
    emit('chat:conversation', { projectId: 'prj_web', conversationId: 'c2', state: 'ended', reason: 'ended' });
    await vi.waitFor(() => expect(fakeApi.chat.conversations).toHaveBeenCalledTimes(2));
    off();
  });

  it('loads the messages before the first one shown until the conversation\'s start', async () => {
    const all = Array.from({ length: 5 }, (_, i) => message(i + 1, 'c1', 'ag_bob', `m${i + 1}`));
    vi.mocked(fakeApi.chat.messages).mockImplementation(async (id, limit, before) => {
      const page = all.filter((m) => !before || m.seq < before).slice(-Math.min(limit, 2));
      return { conversation: conversation(id, 'topic', ['ag_bob']), messages: page, total: all.length };
    });
    const s = new ChatStore();
    await s.select('c1');
    expect(fakeApi.chat.messages).toHaveBeenLastCalledWith('c1', 200, 0);
    expect(s.messages.map((m) => m.content)).toEqual(['m4', 'm5']);
    expect(s.hasEarlier).toBe(true);

    const loading = s.loadEarlier();
    expect(s.loadingEarlier).toBe(true);
    await loading;
    expect(fakeApi.chat.messages).toHaveBeenLastCalledWith('c1', 200, 4);
    expect(s.loadingEarlier).toBe(false);
    expect(s.messages.map((m) => m.content)).toEqual(['m2', 'm3', 'm4', 'm5']);

    await s.loadEarlier();
    expect(s.messages.map((m) => m.content)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    expect(s.hasEarlier).toBe(false);
    // Loading the newest again (a resync) keeps what was paged back to.
    await s.loadOpen();
    expect(s.messages).toHaveLength(5);
  });

  it('says why earlier messages did not load, and keeps what is shown', async () => {
    vi.mocked(fakeApi.chat.messages).mockResolvedValueOnce({ ...view('c1', [7, 8]), total: 9 });
    const s = new ChatStore();
    await s.select('c1');
    vi.mocked(fakeApi.chat.messages).mockRejectedValueOnce(new Error('database is locked'));
    await s.loadEarlier();
    expect(s.earlierError).toContain('database is locked');
    expect(s.messages.map((m) => m.seq)).toEqual([7, 8]);
    expect(s.loadingEarlier).toBe(false);
  });

  it('keeps a draft per conversation', () => {
    const s = new ChatStore();
    s.setDraft('c1', 'half a thought');
    s.setDraft('c2', 'another');
    expect(s.draft('c1')).toBe('half a thought');
    expect(s.draft('c2')).toBe('another');
    s.setDraft('c1', '');
    expect(s.draft('c1')).toBe('');
    expect(s.draft('c3')).toBe('');
  });
});
