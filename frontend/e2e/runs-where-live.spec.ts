// Where a person finds the runs alive now (new-user test). With auto-run on,
// runs start by themselves in any project; the only sign of one was the
// "running" badge on its card, on the Board, with its project chosen. The
// Agents screen, where an agent is suspended or its run profile changed,
// said nothing of the run the agent was in the middle of, nor did the
// Board of another project (the CLI has `airlock runs live`; the UI had no
// equivalent).
import { chmodSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { openUi, rpc, shots, startAirlock, type Airlock, type Browser } from './harness';

const LIVE = { timeout: 30_000 };

interface Project { id: string; name: string }
interface CreatedAgent { agent: { id: string; name: string; role: string }; token: string }
interface Card { id: string; status: string }
interface Run { id: string; status: string }

describe('live runs outside their card', () => {
  let airlock: Airlock;
  let ui: Browser;
  let page: Page;
  let work = '';
  let worker: CreatedAgent;

  beforeAll(async () => {
    airlock = await startAirlock();
    ui = await openUi(airlock);
    page = ui.page;
    work = realpathSync(mkdtempSync(join(tmpdir(), 'airlock-e2e-live-')));
    await rpc(page, 'Builtin.AllowPath', work);
    const project = await rpc<Project>(page, 'Agents.CreateProject', 'website', '');
    worker = await rpc<CreatedAgent>(page, 'Agents.Create', { name: 'builder', kind: 'worker', human: false, parent: '', role: '', projects: [project.id], compact: false });
    const cmd = join(work, 'agent.sh');
    writeFileSync(cmd, '#!/bin/sh\nexec sleep 300\n');
    chmodSync(cmd, 0o755);
    await rpc(page, 'Runs.SetProfile', worker.agent.id, {
      agentId: worker.agent.id, template: 'custom', command: cmd, args: [], extraArgs: [], workDir: work, model: '', env: {}, prompt: '', updatedAt: '0001-01-01T00:00:00Z',
    });
    const card = await rpc<Card>(page, 'Board.Create', project.id, {
      localId: '', title: 'Write the header', description: '', priority: 'medium', status: 'todo', assigneeId: worker.agent.id, parentTaskId: '', dependsOn: [],
    });
    const run = await rpc<Run>(page, 'Runs.Start', card.id);
    expect(run.status).toBe('running');
  });

  afterAll(async () => {
    await ui?.close();
    await airlock?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('the Agents screen says the agent is running a task', async () => {
    await page.goto(new URL(`#/agents/${worker.agent.id}?tab=run`, page.url()).href);
    const detail = page.getByTestId('agent-detail');
    await expect.poll(() => detail.getAttribute('data-agent-id'), LIVE).toBe(worker.agent.id);
    await shots(page, 'live-run-agents-screen');
    await expect.poll(async () => (await detail.textContent()) ?? '', LIVE).toMatch(/running|Write the header/i);
    // The detail names the task and links to it; the tree marks the agent.
    await expect.poll(async () => (await page.getByTestId('agent-live-run').textContent()) ?? '', LIVE).toContain('Write the header');
    const row = page.locator(`[data-testid=agent-row][data-agent-id="${worker.agent.id}"]`);
    await expect.poll(() => row.getByTestId('agent-row-running').count(), LIVE).toBe(1);
  });
});
