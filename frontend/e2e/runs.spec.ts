// Issue 10 through the UI against a real `airlock serve`: an AI agent's run
// profile set up on the Agents screen (refusals shown in place), then Run
// pressed in a task's detail on the Board: Airlock launches the scripted
// agent (`airlock agent-script`, a real MCP client following a YAML script)
// as that agent; its output streams live, its file write needs a person, the
// approval dialog appears and is approved in the UI, and the card moves to
// done live. Stop ends a run after a confirmation. A profile whose command
// does not exist: Run says why at once.
// Screenshots: e2e/screenshots/real-runs-*.png.
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { openUi, rpc, shots, startAirlock, type Airlock, type Browser } from './harness';

/** Polls wait for live updates and runs this long at most: the machine running the specs may be busy. */
const LIVE = { timeout: 30_000 };

interface Project { id: string; name: string }
interface CreatedAgent { agent: { id: string; name: string; role: string }; token: string }
interface Card { id: string; status: string }

describe('agent runs through a real airlock serve', () => {
  let airlock: Airlock;
  let ui: Browser;
  let page: Page;
  let work = '';
  let script = '';
  let project: Project;
  let builder: CreatedAgent;
  let taskId = '';

  beforeAll(async () => {
    airlock = await startAirlock();
    ui = await openUi(airlock);
    page = ui.page;
    // The folder agents work in: the built-in tools' allowed folder, where
    // the scripted agent's file write lands.
    work = realpathSync(mkdtempSync(join(tmpdir(), 'airlock-e2e-runs-')));
    script = join(work, 'build-page.yaml');
    writeFileSync(
      script,
      [
        'name: build the page',
        'timeout: 5m',
        'steps:',
        '  - call: get_next_action',
        '    expect: {contains: "${task_id}"}',
        '  - call: update_task_status',
        '    args: {task_id: "${task_id}", status: in_progress}',
        '    expect: {contains: in_progress}',
        '  - call: file-write__file_write',
        `    args: {path: "${join(work, 'page.html')}", content: "<h1>built for \${task_id}</h1>"}`,
        '    timeout: 4m',
        '  - call: report_completed',
        '    args: {task_id: "${task_id}", result: success, summary: wrote page.html}',
        '    expect: {contains: done}',
        '  - print: "done with ${task_id} in run ${run_id}"',
        '',
      ].join('\n'),
    );
    // Setup through the facade (the Agents and Board screens have their own
    // specs): a project, an AI agent in it with a token, the folder, and the
    // file-write server granted to the agent's role. No rule auto-approves
    // file_write, so the write waits for a person.
    await rpc(page, 'Builtin.AllowPath', work);
    project = await rpc<Project>(page, 'Agents.CreateProject', 'website', '');
    builder = await rpc<CreatedAgent>(page, 'Agents.Create', { name: 'builder', kind: 'worker', human: false, parent: '', role: '', projects: [project.id], compact: false });
    await rpc(page, 'Agents.Grant', builder.agent.role, 'file-write');
    const card = await rpc<Card>(page, 'Board.Create', project.id, {
      localId: '', title: 'Build the landing page', description: 'One heading.', priority: 'high', status: 'todo', assigneeId: builder.agent.id, parentTaskId: '', dependsOn: [],
    });
    taskId = card.id;
  });

  afterAll(async () => {
    await ui?.close();
    await airlock?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const card = (id: string) => page.locator(`[data-testid=task-card][data-task-id="${id}"]`);
  const panel = () => page.getByTestId('task-runs-panel');

  it('before it has a profile, the task\'s Run is off and links to the agent\'s Run profile', async () => {
    await page.goto(new URL(`#/board/${project.id}/${taskId}`, page.url()).href);
    await expect.poll(() => page.getByTestId('task-detail').getAttribute('data-task-id'), LIVE).toBe(taskId);
    const why = panel().getByTestId('run-blocker');
    await expect.poll(() => why.textContent(), LIVE).toContain('builder has no run profile');
    expect(await panel().getByTestId('run-button').isDisabled()).toBe(true);
    await why.getByRole('link', { name: 'builder → Run profile' }).click();
    await expect.poll(() => page.getByRole('tab', { name: 'Run profile' }).getAttribute('aria-selected'), LIVE).toBe('true');
    expect(await page.getByTestId('agent-detail').getAttribute('data-agent-id')).toBe(builder.agent.id);
  });

  it('sets up a scripted-agent profile on the Run profile tab; mistakes are refused where they are made', async () => {
    const tab = page.getByTestId('run-profile');
    await tab.getByRole('form', { name: 'Run profile' }).waitFor();
    expect(await tab.textContent()).toContain('Each run gets its own credential of builder');
    await tab.getByRole('radio', { name: /Scripted agent/ }).check();
    expect(await tab.getByTestId('launch-command').textContent()).toMatch(/^airlock agent-script --mcp-config \{\{mcp_config\}\}/);

    // An unknown placeholder: shown under the field, nothing is sent.
    await tab.getByTestId('extra-args').fill('{{secret}}');
    expect(await tab.getByTestId('problem-extraArgs').textContent()).toContain('unknown placeholder {{secret}}');
    expect(await page.getByRole('button', { name: 'Create profile' }).isDisabled()).toBe(true);

    // A folder outside the allowed ones: the backend refuses it, under the field.
    await tab.getByTestId('extra-args').fill(script);
    await tab.getByTestId('workdir').fill(dirname(work));
    await tab.getByTestId('workdir-outside').waitFor();
    await page.getByRole('button', { name: 'Create profile' }).click();
    const refusal = tab.getByTestId('profile-refusal');
    await expect.poll(() => refusal.textContent(), LIVE).toContain('outside the folders allowed for agents');
    expect(await tab.getByTestId('workdir').getAttribute('aria-invalid')).toBe('true');

    await tab.getByTestId('workdir').fill(work);
    await page.getByRole('button', { name: 'Create profile' }).click();
    await tab.getByTestId('profile-saved').waitFor();
    expect(await tab.getByTestId('profile-state').textContent()).toBe('profile set');
    const stored = await rpc<{ template: string; extraArgs: string[]; workDir: string }>(page, 'Runs.Profile', builder.agent.id);
    expect(stored).toMatchObject({ template: 'scripted', extraArgs: [script], workDir: work });
    await page.getByTestId('agent-detail').evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await shots(page, 'real-runs-profile');
    await tab.getByTestId('placeholders').locator('summary').click();
    await tab.getByTestId('placeholders').evaluate((el) => el.scrollIntoView({ block: 'end' }));
    await shots(page, 'real-runs-profile-placeholders');
  });

  it('Run launches the agent: its output streams live, the card shows it running, and its file write waits for approval', async () => {
    await page.goto(new URL(`#/board/${project.id}/${taskId}`, page.url()).href);
    const run = panel().getByTestId('run-button');
    await expect.poll(() => run.isEnabled(), LIVE).toBe(true);
    await run.click();

    const live = panel().getByTestId('live-run');
    await live.waitFor(LIVE);
    await expect.poll(() => card(taskId).getByTestId('card-running').count(), LIVE).toBe(1);
    const output = live.getByTestId('run-output');
    await expect.poll(() => output.textContent(), LIVE).toContain('connected to');
    await expect.poll(() => output.textContent(), LIVE).toContain('get_next_action');
    // Airlock's own lines show once each, though each is in the log file
    // before its batch of run:output comes (new-user test: twice).
    const notes = (await output.getByTestId('output-line').allTextContents()).filter((l) => l.includes('[airlock]'));
    expect(notes.length).toBeGreaterThan(2);
    expect(notes.filter((l, i) => notes.indexOf(l) !== i), 'lines shown twice').toEqual([]);
    // update_task_status moved the card while the run goes on.
    await expect.poll(() => card(taskId).getAttribute('data-status'), LIVE).toBe('in_progress');

    // The write asks a person: the dialog shows the run's agent and call.
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.getByTestId('approval-tool').textContent(), LIVE).toBe('file_write');
    expect(await dialog.getByTestId('approval-agent').textContent()).toBe('builder');
    await expect.poll(() => live.getByTestId('last-tool').textContent(), LIVE).toContain('file-write__file_write');
    // Closed for now, the call keeps waiting, and the run says so.
    await dialog.getByRole('button', { name: 'Close (the call keeps waiting)' }).click();
    await live.getByTestId('run-waiting-approval').waitFor(LIVE);
    await panel().evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await shots(page, 'real-runs-live');
  });

  it('approving in the UI lets the agent finish: the card moves to done live and the run completes', async () => {
    const live = panel().getByTestId('live-run');
    const runId = (await live.getAttribute('data-run-id'))!;
    await live.getByTestId('run-waiting-approval').getByRole('button', { name: 'Review' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Approve', exact: true }).click();

    await expect.poll(() => card(taskId).getAttribute('data-status'), LIVE).toBe('done');
    const row = panel().locator(`[data-testid=run-row][data-run-id="${runId}"]`);
    await expect.poll(() => row.getAttribute('data-status'), LIVE).toBe('completed');
    expect(await row.textContent()).toContain('exit 0');
    expect(await card(taskId).getByTestId('card-running').count()).toBe(0);
    // The run that ended here keeps its output open, to its last line.
    await expect.poll(() => row.getByTestId('run-output').textContent(), LIVE).toContain('all 5 steps passed');
    expect(await row.getByTestId('run-output').textContent()).toContain(`done with ${taskId} in run ${runId}`);
    expect(readFileSync(join(work, 'page.html'), 'utf8')).toBe(`<h1>built for ${taskId}</h1>`);
    await panel().evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await shots(page, 'real-runs-done');
  });

  it('Stop, after a confirmation, ends a run that would go on forever', async () => {
    const forever = join(work, 'wait-forever.yaml');
    writeFileSync(forever, 'steps:\n  - poll: {call: help, until: {contains: never-there}, every: 200ms, timeout: 10m}\n');
    await rpc(page, 'Runs.SetProfile', builder.agent.id, {
      agentId: builder.agent.id, template: 'scripted', command: '', args: [], extraArgs: [forever], workDir: work, model: '', env: {}, prompt: '', updatedAt: '0001-01-01T00:00:00Z',
    });
    const task = await rpc<Card>(page, 'Board.Create', project.id, {
      localId: '', title: 'Wait for the logo', description: '', priority: 'medium', status: 'todo', assigneeId: builder.agent.id, parentTaskId: '', dependsOn: [],
    });
    await page.goto(new URL(`#/board/${project.id}/${task.id}`, page.url()).href);
    await expect.poll(() => page.getByTestId('task-detail').getAttribute('data-task-id'), LIVE).toBe(task.id);
    const run = panel().getByTestId('run-button');
    await expect.poll(() => run.isEnabled(), LIVE).toBe(true);
    await run.click();
    const live = panel().getByTestId('live-run');
    await expect.poll(() => live.getByTestId('run-output').textContent(), LIVE).toContain('connected to');
    const runId = (await live.getAttribute('data-run-id'))!;

    await panel().getByRole('button', { name: 'Stop', exact: true }).click();
    expect(await rpc<{ status: string }>(page, 'Runs.Get', runId), 'Stop asks first').toMatchObject({ status: 'running' });
    await panel().getByRole('button', { name: 'Stop run' }).click();
    const row = panel().locator(`[data-testid=run-row][data-run-id="${runId}"]`);
    await expect.poll(() => row.getAttribute('data-status'), LIVE).toBe('stopped');
    expect(await row.getByTestId('run-reason').textContent()).toBe('stopped by the user');
    await expect.poll(() => card(task.id).getByTestId('card-running').count(), LIVE).toBe(0);
  });

  it('a profile whose command does not exist: Run says why at once and starts nothing', async () => {
    const ghost = await rpc<CreatedAgent>(page, 'Agents.Create', { name: 'ghost', kind: 'worker', human: false, parent: '', role: '', projects: [project.id], compact: false });
    await rpc(page, 'Runs.SetProfile', ghost.agent.id, {
      agentId: ghost.agent.id, template: 'custom', command: '/nonexistent/agent-cli', args: ['{{prompt}}'], extraArgs: [], workDir: '', model: '', env: {}, prompt: '', updatedAt: '0001-01-01T00:00:00Z',
    });
    const task = await rpc<Card>(page, 'Board.Create', project.id, {
      localId: '', title: 'Haunt the footer', description: '', priority: 'low', status: 'todo', assigneeId: ghost.agent.id, parentTaskId: '', dependsOn: [],
    });
    await page.goto(new URL(`#/board/${project.id}/${task.id}`, page.url()).href);
    await expect.poll(() => page.getByTestId('task-detail').getAttribute('data-task-id'), LIVE).toBe(task.id);
    const run = panel().getByTestId('run-button');
    await expect.poll(() => run.isEnabled(), LIVE).toBe(true);
    await run.click();
    const refusal = panel().getByTestId('run-refusal');
    await refusal.waitFor(LIVE);
    expect(await refusal.getAttribute('data-code')).toBe('command_not_found');
    expect(await refusal.textContent()).toContain('/nonexistent/agent-cli');
    expect(await refusal.getByRole('link', { name: 'Open ghost\'s run profile' }).getAttribute('href')).toBe(`#/agents/${ghost.agent.id}?tab=run`);
    expect(await rpc<unknown[]>(page, 'Runs.List', task.id), 'nothing was launched or recorded').toEqual([]);
    await panel().evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await shots(page, 'real-runs-refused');
  });
});
