// Issue 9 through the Board and Chat screens against a real `airlock serve`:
// a project and an agent, the agent connected as itself with a real MCP
// client (a task session and a chat session); the person creates a task for
// it and drags the card, and the agent's next get_my_tasks sees the move;
// the agent moves and completes its task and the card follows without a
// reload; a move the backend refuses snaps back with the refusal on the
// card; the owner writes into a conversation and the agent's
// get_pending_messages returns it; the agent's send_message appears live.
// Screenshots: e2e/screenshots/real-board-*.png and real-chat-*.png.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import { callJson, connectAgent, openUi, rpc, shots, startAirlock, type Airlock, type Browser } from './harness';

/** Polls wait for live updates this long at most: the machine running the specs may be busy. */
const LIVE = { timeout: 15_000 };

interface Project { id: string; name: string }
interface CreatedAgent { agent: { id: string; name: string }; token: string }
interface TaskItem { task_id: string; title: string; status: string; blocked_reason?: string }
interface PendingMessage { id: string; conversation_id: string; sender_id: string; content: string }

describe('the Board and Chat screens through a real airlock serve', () => {
  let airlock: Airlock;
  let ui: Browser;
  let page: Page;
  let project: Project;
  let scout: CreatedAgent;
  let taskSession: Client | undefined;
  let chatSession: Client | undefined;
  let taskId = '';
  let conversationId = '';

  beforeAll(async () => {
    airlock = await startAirlock();
    ui = await openUi(airlock);
    page = ui.page;
  });

  afterAll(async () => {
    await taskSession?.close().catch(() => {});
    await chatSession?.close().catch(() => {});
    await ui?.close();
    await airlock?.stop();
  });

  const card = (id: string) => page.locator(`[data-testid=task-card][data-task-id="${id}"]`);
  const column = (status: string) => page.locator(`[data-testid=board-column][data-status="${status}"]`);
  const myTasks = async () => (await callJson<{ tasks: TaskItem[] }>(taskSession!, 'get_my_tasks')).tasks;

  it('with no project yet, the Board and Chat say how to make one', async () => {
    await page.getByRole('link', { name: 'Board' }).click();
    await page.getByRole('heading', { name: 'No projects yet' }).waitFor();
    expect(await page.getByRole('link', { name: 'Agents → Projects' }).getAttribute('href')).toBe('#/agents/projects');
    await shots(page, 'real-board-empty');
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByRole('heading', { name: 'No projects yet' }).waitFor();
    await shots(page, 'real-chat-empty');
  });

  it('a new project shows up live with an empty board that says how tasks come', async () => {
    await page.getByRole('link', { name: 'Board' }).click();
    await page.getByRole('heading', { name: 'No projects yet' }).waitFor();
    // Setup through the facade (the Agents screen has its own spec).
    project = await rpc<Project>(page, 'Agents.CreateProject', 'website', 'The marketing site');
    scout = await rpc<CreatedAgent>(page, 'Agents.Create', { name: 'scout', kind: 'worker', human: false, parent: '', role: '', projects: [project.id], compact: false });
    await page.getByRole('heading', { name: 'No tasks in website yet' }).waitFor();
    expect(page.url()).toContain(`#/board/${project.id}`);
    expect(await page.getByText('create_tasks_batch').count()).toBe(1);
    await shots(page, 'real-board-no-tasks');
  });

  it('creates a task for the agent on the board; the agent, connected as itself, sees it', async () => {
    taskSession = await connectAgent(airlock, scout.token, { purpose: 'task', project: project.id }, 'scout-task');
    expect(await myTasks()).toEqual([]);

    await page.getByRole('button', { name: 'New task' }).first().click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Title').fill('Redesign the pricing page');
    await dialog.getByLabel('Description').fill('Three tiers and a comparison table.');
    await dialog.getByLabel('Priority').selectOption('high');
    await dialog.getByLabel('Assignee').selectOption({ label: 'scout (worker)' });
    await dialog.getByRole('button', { name: 'Create task' }).click();
    await dialog.waitFor({ state: 'detached' });

    const created = page.getByTestId('task-card');
    await expect.poll(() => created.count(), LIVE).toBe(1);
    taskId = (await created.getAttribute('data-task-id'))!;
    expect(await created.getAttribute('data-status')).toBe('backlog');
    expect(await created.getByTestId('task-assignee').textContent()).toContain('scout');
    // The new task's detail opens beside the board, with the link to it in the URL.
    await expect.poll(() => page.getByTestId('task-detail').getAttribute('data-task-id'), LIVE).toBe(taskId);
    expect(page.url()).toContain(`#/board/${project.id}/${taskId}`);

    expect(await myTasks()).toMatchObject([{ task_id: taskId, title: 'Redesign the pricing page', status: 'backlog' }]);
  });

  it('dragging the card to In progress is the owner\'s move: the agent\'s next get_my_tasks reflects it', async () => {
    await card(taskId).locator('.card').dragTo(column('in_progress'));
    await expect.poll(() => card(taskId).getAttribute('data-status'), LIVE).toBe('in_progress');
    expect(await column('in_progress').locator(`[data-task-id="${taskId}"]`).count()).toBe(1);
    await expect.poll(async () => (await myTasks())[0]?.status, LIVE).toBe('in_progress');
    // The history says who moved it.
    await expect
      .poll(() => page.getByTestId('history-entry').filter({ hasText: 'moved it' }).last().textContent(), LIVE)
      .toMatch(/owner\s*moved it Backlog → In progress/);
  });

  it('the agent blocks, resumes and completes its task; the card follows without a reload', async () => {
    const marker = await page.evaluate(() => ((window as unknown as { __noReload: number }).__noReload = Math.random()));
    await callJson(taskSession!, 'update_task_status', { task_id: taskId, status: 'blocked', blocked_reason: 'Waiting for the new logo' });
    await expect.poll(() => card(taskId).getAttribute('data-status'), LIVE).toBe('blocked');
    expect(await card(taskId).getByTestId('task-blocked-reason').textContent()).toContain('Waiting for the new logo');
    await callJson(taskSession!, 'update_task_status', { task_id: taskId, status: 'in_progress' });
    await expect.poll(() => card(taskId).getAttribute('data-status'), LIVE).toBe('in_progress');
    await callJson(taskSession!, 'report_completed', { task_id: taskId, result: 'success', summary: 'Shipped the new pricing page.' });
    await expect.poll(() => card(taskId).getAttribute('data-status'), LIVE).toBe('done');
    expect(await column('done').locator(`[data-task-id="${taskId}"]`).count()).toBe(1);
    // The open detail followed too: the report, and the agent's moves in the history.
    await expect.poll(() => page.getByTestId('task-result').textContent(), LIVE).toContain('Shipped the new pricing page.');
    const history = await page.getByTestId('history-entry').allTextContents();
    expect(history.some((h) => /scout\s*moved it In progress → Blocked/.test(h))).toBe(true);
    expect(history.some((h) => /scout\s*moved it In progress → Done/.test(h))).toBe(true);
    expect(await page.evaluate(() => (window as unknown as { __noReload?: number }).__noReload)).toBe(marker);
    await shots(page, 'real-board-detail');
  });

  it('a move the backend refuses snaps back, with the refusal on the card', async () => {
    const blocker = await rpc<{ id: string }>(page, 'Board.Create', project.id, {
      localId: '', title: 'Get the logo from the designer', description: '', priority: 'urgent', status: 'todo', assigneeId: scout.agent.id, parentTaskId: '', dependsOn: [],
    });
    const waiting = await rpc<{ id: string }>(page, 'Board.Create', project.id, {
      localId: '', title: 'Put the logo on the landing page', description: '', priority: 'medium', status: 'todo', assigneeId: '', parentTaskId: '', dependsOn: [blocker.id],
    });
    await expect.poll(() => card(waiting.id).count(), LIVE).toBe(1);
    await card(waiting.id).locator('.card').dragTo(column('in_progress'));
    await expect.poll(() => card(waiting.id).getByTestId('task-refusal').textContent(), LIVE).toContain('depends on 1 open task');
    expect(await card(waiting.id).getAttribute('data-status')).toBe('todo');
    expect(await column('todo').locator(`[data-task-id="${waiting.id}"]`).count()).toBe(1);
    // An invalid transition is refused the same way (done → in progress is not a move).
    await card(taskId).locator('.card').dragTo(column('in_progress'));
    await expect.poll(() => card(taskId).getByTestId('task-refusal').textContent(), LIVE).toContain('cannot go from done to in_progress');
    expect(await card(taskId).getAttribute('data-status')).toBe('done');
    await page.getByRole('button', { name: 'Close task' }).click();
    await shots(page, 'real-board-refused');
    await card(taskId).getByRole('button', { name: 'Dismiss' }).click();
    await card(waiting.id).getByRole('button', { name: 'Dismiss' }).click();
    await shots(page, 'real-board');
  });

  it('moves a card from the keyboard: M opens its move menu', async () => {
    const blockerId = (await page.getByTestId('task-card').filter({ hasText: 'Get the logo' }).getAttribute('data-task-id'))!;
    await card(blockerId).locator('.card').focus();
    await page.keyboard.press('m');
    const menu = page.getByRole('menu', { name: 'Move Get the logo from the designer' });
    await menu.waitFor();
    expect(await menu.getByRole('menuitem').allTextContents()).toEqual(['Backlog', 'In progress', 'Blocked', 'Cancelled', 'Open details']);
    await menu.getByRole('menuitem', { name: 'In progress' }).press('Enter');
    await expect.poll(() => card(blockerId).getAttribute('data-status'), LIVE).toBe('in_progress');
    await expect.poll(() => page.evaluate(() => (document.activeElement?.closest('[data-task-id]') as HTMLElement | null)?.dataset.taskId), LIVE).toBe(blockerId);
    await expect.poll(async () => (await myTasks()).find((t) => t.task_id === blockerId)?.status, LIVE).toBe('in_progress');
  });

  it('the owner starts a conversation with the agent; its chat session\'s get_pending_messages returns what the owner wrote', async () => {
    chatSession = await connectAgent(airlock, scout.token, { purpose: 'chat', project: project.id }, 'scout-chat');
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByRole('heading', { name: 'No conversations yet' }).waitFor();
    await page.getByRole('button', { name: 'New conversation' }).first().click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('scout').check();
    await dialog.getByLabel('Topic').fill('Pricing page');
    await dialog.getByLabel('First message').fill('Can the FAQ stay below the table?');
    await dialog.getByRole('button', { name: 'Start conversation' }).click();
    await dialog.waitFor({ state: 'detached' });
    const view = page.getByTestId('conversation');
    await view.waitFor();
    conversationId = (await view.getAttribute('data-conversation-id'))!;
    expect(page.url()).toContain(`#/chat/${conversationId}`);

    const first = await callJson<{ messages: PendingMessage[] }>(chatSession, 'get_pending_messages');
    expect(first.messages).toMatchObject([{ conversation_id: conversationId, sender_id: 'ag_owner', content: 'Can the FAQ stay below the table?' }]);

    // Write into the conversation as the owner: Enter sends.
    const box = page.getByLabel('Message', { exact: true });
    await box.fill('And keep the old URLs, please.');
    await box.press('Enter');
    await expect.poll(() => page.getByTestId('message-content').allTextContents(), LIVE).toEqual(['Can the FAQ stay below the table?', 'And keep the old URLs, please.']);
    expect(await box.inputValue()).toBe('');
    const second = await callJson<{ messages: PendingMessage[] }>(chatSession, 'get_pending_messages');
    expect(second.messages.map((m) => m.content)).toEqual(['And keep the old URLs, please.']);
  });

  it('the agent\'s send_message appears live in the open conversation, and elsewhere as unread', async () => {
    await callJson(chatSession!, 'send_message', { target_agent_id: 'owner', conversation_id: conversationId, content: 'Yes — the FAQ stays, URLs unchanged.' });
    const last = page.getByTestId('message').last();
    await expect.poll(() => last.getAttribute('data-sender'), LIVE).toBe(scout.agent.id);
    expect(await last.getByTestId('message-content').textContent()).toBe('Yes — the FAQ stays, URLs unchanged.');
    await shots(page, 'real-chat');

    // Read elsewhere: the nav counts it, the list too; opening the conversation reads it.
    await page.getByRole('link', { name: 'Board' }).click();
    await page.getByTestId('kanban').waitFor();
    await callJson(chatSession!, 'send_message', { target_agent_id: 'owner', conversation_id: conversationId, content: 'Starting on the table now.' });
    await expect.poll(() => page.getByTestId('chat-unread').textContent(), LIVE).toBe('1');
    await page.getByRole('link', { name: 'Chat' }).click();
    await expect.poll(() => page.getByTestId('message-content').last().textContent(), LIVE).toBe('Starting on the table now.');
    await page.getByTestId('chat-unread').waitFor({ state: 'detached' });
  });

  it('an empty or oversized message is refused in place and the text is kept', async () => {
    const box = page.getByLabel('Message', { exact: true });
    await box.fill('   ');
    await box.press('Enter');
    expect(await page.getByTestId('composer-error').textContent()).toContain('empty message');
    const big = 'x'.repeat(17 * 1024);
    await box.fill(big);
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.getByTestId('composer-error').textContent(), LIVE).toContain('at most 16384');
    expect((await box.inputValue()).length).toBe(big.length);
    expect(await page.getByTestId('message').count()).toBe(4);
    await shots(page, 'real-chat-refused');
  });

  it('ending the conversation closes it for writing, for the agent too', async () => {
    await page.getByRole('button', { name: 'End conversation' }).click();
    await page.getByRole('button', { name: 'End', exact: true }).click();
    await page.getByTestId('conversation-ended').waitFor();
    expect(await page.getByLabel('Message', { exact: true }).count()).toBe(0);
    const r = await chatSession!.callTool({ name: 'respond_chat', arguments: { conversation_id: conversationId, content: 'one more thing' } });
    expect(r.isError).toBe(true);
  });
});
