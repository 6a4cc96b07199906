import { beforeEach, describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { ApiError } from '../../api/transport';
import { emit, fakeApi, resetFakeApi } from '../../testing/fakeApi';
import { testStores } from '../../testing/stores';
import { agentView as a } from '../../testing/agents';
import { conversation, message } from '../../testing/teams';
import type { ChatTarget } from '../../route';
import type { MessagesView } from '../../api';
import ChatPage from './ChatPage.svelte';

vi.mock('../../api', async () => (await import('../../testing/fakeApi')).fakeApiModule());

const project = { id: 'prj_web', name: 'web', description: '', createdAt: '', updatedAt: '' };
const ended = conversation('c_old', 'Old plan', ['ag_mgr', 'ag_bob'], { state: 'ended', endedBy: 'ag_mgr', endedAt: '2026-01-01T11:00:00Z' });

function backend() {
  vi.mocked(fakeApi.agents.list).mockResolvedValue([
    a('ag_owner', 'owner', 'owner', undefined),
    a('ag_mgr', 'mgr', 'manager', 'ag_owner', { projects: ['prj_web'] }),
    a('ag_bob', 'bob', 'worker', 'ag_mgr', { projects: ['prj_web'] }),
  ]);
  vi.mocked(fakeApi.agents.roles).mockResolvedValue([]);
  vi.mocked(fakeApi.agents.projects).mockResolvedValue([project]);
  vi.mocked(fakeApi.chat.conversations).mockResolvedValue([
    conversation('c_api', 'API design', ['ag_mgr', 'ag_bob'], { unread: 3, lastMessage: message(3, 'c_api', 'ag_bob', 'Ready for review') }),
    ended,
  ]);
  vi.mocked(fakeApi.chat.messages).mockImplementation(async (id): Promise<MessagesView> => ({
    conversation: id === 'c_old' ? ended : conversation(id, 'API design', ['ag_mgr', 'ag_bob']),
    messages: id === 'c_old' ? [message(1, 'c_old', 'ag_mgr', 'done here')] : [message(2, 'c_api', 'ag_mgr', 'Please review'), message(3, 'c_api', 'ag_bob', 'Ready for review')],
    total: id === 'c_old' ? 1 : 2,
  }));
}

async function renderPage(target?: ChatTarget) {
  const { stores, context } = testStores();
  const offs = [stores.chat.connect()];
  await stores.agents.load();
  const r = render(ChatPage, { context, props: { target } });
  return { stores, offs, ...r };
}

const contents = () => screen.getAllByTestId('message-content').map((e) => e.textContent);

describe('ChatPage', () => {
  beforeEach(() => {
    resetFakeApi();
    backend();
  });

  it('says what to do when nobody has talked yet', async () => {
    vi.mocked(fakeApi.chat.conversations).mockResolvedValue([]);
    await renderPage();
    await screen.findByRole('heading', { name: 'No conversations yet' });
    expect(document.body.textContent).toContain('start_conversation');
    expect(document.body.textContent).toContain('?purpose=chat');
  });

  it('lists conversations with who takes part, their state and what is unread', async () => {
    await renderPage();
    const rows = await screen.findAllByTestId('conversation-row');
    expect(rows.map((r) => r.dataset.conversationId)).toEqual(['c_api', 'c_old']);
    expect(within(rows[0]).getByTestId('conversation-participants').textContent).toBe('mgr · bob');
    expect(within(rows[0]).getByTestId('conversation-unread').textContent).toBe('3');
    expect(within(rows[1]).getByTestId('conversation-state').textContent).toBe('ended');
    expect(rows[0].getAttribute('href')).toBe('#/chat/c_api');
  });

  it('opens a conversation from a link, marks it read, and appends messages live', async () => {
    await renderPage({ conversation: 'c_api' });
    await waitFor(() => expect(contents()).toEqual(['Please review', 'Ready for review']));
    await waitFor(() => expect(fakeApi.chat.markRead).toHaveBeenCalledWith('c_api'));
    expect(screen.queryByTestId('conversation-unread')).toBeNull();
    emit('chat:message', { projectId: 'prj_web', message: message(7, 'c_api', 'ag_bob', 'One more thing') });
    await waitFor(() => expect(contents()).toEqual(['Please review', 'Ready for review', 'One more thing']));
    // Messages elsewhere are counted, not shown.
    emit('chat:message', { projectId: 'prj_web', message: message(8, 'c_old', 'ag_mgr', 'elsewhere') });
    expect(contents()).toHaveLength(3);
  });

  it('names the task a conversation is about by its title, without the board loaded (found by a new-user test)', async () => {
    const about = conversation('c_task', 'Orders page', ['ag_mgr', 'ag_bob'], { relatedTaskId: 'tsk_9dab', relatedTaskTitle: 'CSV export' });
    vi.mocked(fakeApi.chat.conversations).mockResolvedValue([about]);
    vi.mocked(fakeApi.chat.messages).mockResolvedValue({ conversation: about, messages: [], total: 0 });
    await renderPage({ conversation: 'c_task' });
    const link = await screen.findByRole('link', { name: 'CSV export' });
    expect(link.getAttribute('title')).toBe('tsk_9dab');
  });

  it('shows web addresses in messages as links that leave the app, and nothing else as one', async () => {
    vi.mocked(fakeApi.chat.messages).mockResolvedValue({
      conversation: conversation('c_api', 'API design', ['ag_mgr', 'ag_bob']),
      messages: [message(2, 'c_api', 'ag_bob', 'PR is up (https://example.com/pr/7). Not a link: javascript:alert(1) or file:///etc/passwd')],
      total: 1,
    });
    await renderPage({ conversation: 'c_api' });
    const link = await screen.findByRole('link', { name: 'https://example.com/pr/7' });
    expect(link.getAttribute('href')).toBe('https://example.com/pr/7');
    expect(link.getAttribute('target')).toBe('_blank');
    expect(link.getAttribute('rel')).toBe('noopener noreferrer');
    expect(within(screen.getByTestId('message-content')).getAllByRole('link')).toHaveLength(1);
    expect(contents()).toEqual(['PR is up (https://example.com/pr/7). Not a link: javascript:alert(1) or file:///etc/passwd']);
  });

  it('writes as the owner: Enter sends, Shift+Enter is a new line', async () => {
    vi.mocked(fakeApi.chat.send).mockImplementation(async (id, content) => message(9, id, 'ag_owner', content));
    await renderPage({ conversation: 'c_api' });
    const box = await screen.findByLabelText('Message');
    await userEvent.type(box, 'Looks good{Shift>}{Enter}{/Shift}ship it{Enter}');
    expect(fakeApi.chat.send).toHaveBeenCalledWith('c_api', 'Looks good\nship it');
    await waitFor(() => expect(contents()).toContain('Looks good\nship it'));
    expect((box as HTMLTextAreaElement).value).toBe('');
    expect(screen.getAllByTestId('message').at(-1)!.dataset.sender).toBe('ag_owner');
  });

  it('refuses an empty message in place without sending, and shows the backend\'s refusal keeping the text', async () => {
    await renderPage({ conversation: 'c_api' });
    const box = await screen.findByLabelText('Message');
    await userEvent.type(box, '   {Enter}');
    expect((await screen.findByTestId('composer-error')).textContent).toContain('empty message');
    expect(fakeApi.chat.send).not.toHaveBeenCalled();

    vi.mocked(fakeApi.chat.send).mockRejectedValue(new ApiError('too_large', 'content is 17408 bytes; at most 16384 are allowed'));
    await userEvent.clear(box);
    await userEvent.type(box, 'too long');
    await userEvent.click(screen.getByRole('button', { name: 'Send' }));
    expect((await screen.findByTestId('composer-error')).textContent).toBe('content is 17408 bytes; at most 16384 are allowed');
    expect((box as HTMLTextAreaElement).value).toBe('too long');
    expect(contents()).toHaveLength(2);
  });

  it('shows an ended conversation without a composer', async () => {
    await renderPage({ conversation: 'c_old' });
    expect((await screen.findByTestId('conversation-ended')).textContent).toContain('by mgr');
    expect(screen.queryByLabelText('Message')).toBeNull();
  });

  it('ends a conversation after a confirmation', async () => {
    vi.mocked(fakeApi.chat.end).mockResolvedValue({ ...conversation('c_api', 'API design', ['ag_mgr', 'ag_bob']), state: 'ended', endedBy: 'ag_owner' });
    await renderPage({ conversation: 'c_api' });
    await userEvent.click(await screen.findByRole('button', { name: 'End conversation' }));
    await userEvent.click(screen.getByRole('button', { name: 'End' }));
    expect(fakeApi.chat.end).toHaveBeenCalledWith('c_api');
    await screen.findByTestId('conversation-ended');
  });

  it('starts a conversation with agents of a project', async () => {
    const started = conversation('c_new', 'Release', ['ag_owner', 'ag_bob']);
    vi.mocked(fakeApi.chat.start).mockResolvedValue(started);
    vi.mocked(fakeApi.chat.messages).mockResolvedValue({ conversation: started, messages: [message(10, 'c_new', 'ag_owner', 'When?')], total: 1 });
    await renderPage();
    await screen.findAllByTestId('conversation-row');
    await userEvent.click(screen.getByRole('button', { name: 'New conversation' }));
    const dialog = screen.getByRole('dialog');
    expect(within(dialog).getAllByRole('checkbox').map((c) => c.parentElement!.textContent!.trim().split(/\s+/)[0])).toEqual(['mgr', 'bob']); // not the owner
    await userEvent.click(within(dialog).getByLabelText(/bob/));
    await userEvent.type(within(dialog).getByLabelText('Topic'), 'Release');
    // The agents hear of it by its first message: none, no start.
    expect(within(dialog).getByRole('button', { name: 'Start conversation' }).hasAttribute('disabled')).toBe(true);
    expect(within(dialog).getByTestId('new-conversation-missing').textContent).toBe('Write the first message.');
    await userEvent.type(within(dialog).getByLabelText('First message'), 'When?');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Start conversation' }));
    expect(fakeApi.chat.start).toHaveBeenCalledWith('prj_web', ['ag_bob'], 'Release', 'When?');
    await waitFor(() => expect(screen.getByTestId('conversation').dataset.conversationId).toBe('c_new'));
  });

  it('keeps a half-written message per conversation while the owner looks at another one', async () => {
    const r = await renderPage({ conversation: 'c_api' });
    await userEvent.type(await screen.findByLabelText('Message'), 'Half a thought');
    await r.rerender({ target: { conversation: 'c_two' } });
    await waitFor(() => expect(screen.getByTestId('conversation').dataset.conversationId).toBe('c_two'));
    expect((screen.getByLabelText('Message') as HTMLTextAreaElement).value).toBe('');
    await r.rerender({ target: { conversation: 'c_api' } });
    await waitFor(() => expect(screen.getByTestId('conversation').dataset.conversationId).toBe('c_api'));
    expect((screen.getByLabelText('Message') as HTMLTextAreaElement).value).toBe('Half a thought');
  });

  it('loads earlier messages from the top of a long conversation, then marks its start', async () => {
    const all = Array.from({ length: 5 }, (_, i) => message(i + 1, 'c_api', 'ag_bob', `m${i + 1}`));
    let release = () => {};
    vi.mocked(fakeApi.chat.messages).mockImplementation(async (id, _limit, before) => {
      if (before) await new Promise<void>((resolve) => (release = resolve));
      const page = before ? all.filter((m) => m.seq < before) : all.slice(-2);
      return { conversation: conversation(id, 'API design', ['ag_mgr', 'ag_bob']), messages: page, total: all.length };
    });
    await renderPage({ conversation: 'c_api' });
    await waitFor(() => expect(contents()).toEqual(['m4', 'm5']));
    expect(screen.getByTestId('older').textContent).toContain('The last 2 of 5 messages.');
    const more = screen.getByRole('button', { name: 'Load earlier messages' });
    more.focus();
    await userEvent.keyboard('{Enter}');
    await waitFor(() => expect(fakeApi.chat.messages).toHaveBeenLastCalledWith('c_api', 200, 4));
    // While they load the button says so, and stays where the focus is.
    expect(more.textContent).toContain('Loading earlier messages…');
    expect(more.getAttribute('aria-disabled')).toBe('true');
    release();
    await waitFor(() => expect(contents()).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']));
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId('conversation-start')));
    expect(screen.queryByRole('button', { name: /earlier/ })).toBeNull();
  });
});
