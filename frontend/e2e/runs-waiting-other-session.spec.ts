// Found by a new-user test: a run's panel says "Waiting for you: the run
// holds until you decide on builder's call to file_write" for any call of
// its agent that waits for approval, also one made through another
// connection of that agent (the same agent open in a terminal, or its run
// on another task). The run is not held by it at all; the person is sent
// to approve a call to unblock a run that is not waiting.
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import { connectAgent, openUi, rpc, startAirlock, type Airlock, type Browser } from './harness';

const LIVE = { timeout: 30_000 };

interface Project { id: string }
interface CreatedAgent { agent: { id: string; role: string }; token: string }
interface Card { id: string }
interface Approval { id: string; agentId?: string; tool: string }

describe('a run\'s panel and the approvals of its agent', () => {
  let airlock: Airlock;
  let ui: Browser;
  let page: Page;
  let work = '';
  let other: Client | undefined;
  let pendingCall: Promise<unknown> | undefined;

  beforeAll(async () => {
    airlock = await startAirlock();
    ui = await openUi(airlock);
    page = ui.page;
    work = realpathSync(mkdtempSync(join(tmpdir(), 'airlock-e2e-runs-')));
  });

  afterAll(async () => {
    await other?.close().catch(() => {});
    await pendingCall?.catch(() => {});
    await ui?.close();
    await airlock?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('does not say the run waits for a call its agent made on another connection', async () => {
    // A run that only reads help, over and over: it never asks for anything.
    const forever = join(work, 'wait-forever.yaml');
    writeFileSync(forever, 'steps:\n  - poll: {call: help, until: {contains: never-there}, every: 200ms, timeout: 10m}\n');
    await rpc(page, 'Builtin.AllowPath', work);
    const project = await rpc<Project>(page, 'Agents.CreateProject', 'website', '');
    const builder = await rpc<CreatedAgent>(page, 'Agents.Create', { name: 'builder', kind: 'worker', human: false, parent: '', role: '', projects: [project.id], compact: false });
    await rpc(page, 'Agents.Grant', builder.agent.role, 'file-write');
    await rpc(page, 'Runs.SetProfile', builder.agent.id, {
      agentId: builder.agent.id, template: 'scripted', command: '', args: [], extraArgs: [forever], workDir: work, model: '', env: {}, prompt: '', updatedAt: '0001-01-01T00:00:00Z',
    });
    const task = await rpc<Card>(page, 'Board.Create', project.id, {
      localId: '', title: 'Wait for the logo', description: '', priority: 'medium', status: 'todo', assigneeId: builder.agent.id, parentTaskId: '', dependsOn: [],
    });
    await page.goto(new URL(`#/board/${project.id}/${task.id}`, page.url()).href);
    const panel = page.getByTestId('task-runs-panel');
    const run = panel.getByTestId('run-button');
    await expect.poll(() => run.isEnabled(), LIVE).toBe(true);
    await run.click();
    const live = panel.getByTestId('live-run');
    await expect.poll(() => live.getByTestId('run-output').textContent(), LIVE).toContain('connected to');

    // The same agent, connected on its own (say, in a terminal), writes a file: that call asks.
    other = await connectAgent(airlock, builder.token, { purpose: 'task', project: project.id }, 'builder-terminal');
    pendingCall = other.callTool({ name: 'file-write__file_write', arguments: { path: join(work, 'notes.txt'), content: 'hello' } }, undefined, { timeout: 120_000 });
    await expect.poll(async () => (await rpc<Approval[]>(page, 'Approvals.Pending')).length, LIVE).toBe(1);
    // The UI knows of it: its dialog pops up; closed, the call keeps waiting.
    const dialog = page.getByRole('dialog');
    await dialog.getByTestId('approval-tool').waitFor(LIVE);
    await dialog.getByRole('button', { name: 'Close (the call keeps waiting)' }).click();

    // The run is still polling help: nothing of it waits for a person.
    expect(
      await live.getByTestId('run-waiting-approval').allTextContents(),
      'the run panel says the run waits for a call the run never made',
    ).toEqual([]);
  });
});
