import { describe, expect, it } from 'vitest';
import { PLACEHOLDERS, TEMPLATES, profile } from '../../testing/runs';
import { fullTemplate } from '../../stores/runs.svelte';
import { checkForm, formOf, insideRoots, launchArgs, parseEnv, placeholderParts, profileOf, quoteArg, sameProfile, type ProfileForm } from './profile';

/** A template as the store holds it (lists present). */
const tmpl = (id: string) => fullTemplate(TEMPLATES.find((t) => t.id === id)!);
const form = (more: Partial<ProfileForm> = {}): ProfileForm => ({ ...formOf(undefined), ...more });

describe('checkForm', () => {
  it.each<[string, string, Partial<ProfileForm>, Partial<Record<keyof ProfileForm, string>>]>([
    ['a plain Claude Code profile', 'claude-code', {}, {}],
    ['an unknown placeholder in an extra argument', 'claude-code', { extraArgs: '--x={{secret}}' }, { extraArgs: 'Extra argument 1 uses the unknown placeholder {{secret}}. Known names are listed below.' }],
    ['an unclosed placeholder in the prompt', 'claude-code', { prompt: 'do {{task_id' }, { prompt: 'The prompt has an unclosed {{.' }],
    ['a list placeholder inside an extra argument', 'claude-code', { extraArgs: '{{extra_args}}' }, { extraArgs: 'Extra argument 1: {{extra_args}} must stand alone as an argument.' }],
    ['a list placeholder alone in a custom argument', 'custom', { command: 'agent', args: '{{extra_args}}\n{{prompt}}' }, {}],
    ['a list placeholder inside a longer custom argument', 'custom', { command: 'agent', args: '--m={{model_args}}' }, { args: 'Argument 1: {{model_args}} must stand alone as an argument.' }],
    ['a custom launcher without a command', 'custom', {}, { command: 'The custom launcher needs a command: a program in PATH or a full path.' }],
    ['a relative command', 'claude-code', { command: 'bin/claude' }, { command: '“bin/claude” is a relative path: give a name found in PATH or a full path.' }],
    ['the scripted agent without a script', 'scripted', {}, { extraArgs: 'The Scripted agent (tests and demos) launcher needs the script file (and any further agent-script flags).' }],
    ['a relative working directory', 'claude-code', { workDir: 'work' }, { workDir: '“work” is not an absolute path.' }],
    ['an environment line without =', 'claude-code', { env: 'FOO' }, { env: '“FOO” has no “=”: write KEY=value, one a line.' }],
    ['an AIRLOCK_ variable', 'claude-code', { env: 'AIRLOCK_TOKEN=x' }, { env: 'AIRLOCK_TOKEN: the AIRLOCK_ variables are set by Airlock for each run.' }],
    ['an unknown placeholder in a value', 'claude-code', { env: 'A={{nope}}' }, { env: 'A uses the unknown placeholder {{nope}}. Known names are listed below.' }],
  ])('%s', (_name, id, more, want) => {
    expect(checkForm(form({ template: id, ...more }), tmpl(id), PLACEHOLDERS)).toEqual(want);
  });
});

describe('parseEnv', () => {
  it('reads KEY=value lines, keeping = and spaces inside values', () => {
    expect(parseEnv('A=1\n\nB = x=y \nC=')).toEqual({ env: { A: '1', B: ' x=y ', C: '' }, error: null });
  });
});

describe('launchArgs', () => {
  it('fills the list placeholders and leaves the rest for the run', () => {
    const f = form({ model: 'opus', extraArgs: '--verbose\n--max-turns 3' });
    expect(launchArgs(tmpl('claude-code'), f)).toEqual({
      program: 'claude',
      args: ['-p', '{{prompt}}', '--mcp-config', '{{mcp_config}}', '--strict-mcp-config', '--allowedTools', 'mcp__airlock', '--model', 'opus', '--verbose', '--max-turns 3'],
    });
  });

  it('leaves the model arguments out without a model, and puts extra arguments last when the template has no place for them', () => {
    const custom = launchArgs(tmpl('custom'), form({ command: '/bin/agent', args: '--config\n{{mcp_config}}', extraArgs: '-v' }));
    expect(custom).toEqual({ program: '/bin/agent', args: ['--config', '{{mcp_config}}', '-v'] });
    expect(launchArgs(tmpl('gemini'), form()).args).toEqual(['-p', '{{prompt}}']);
    expect(launchArgs(tmpl('scripted'), form()).program).toBe('airlock');
  });
});

describe('profileOf and sameProfile', () => {
  it('makes the profile SetProfile takes, and reads it back unchanged', () => {
    const p = profile('ag_bob', { template: 'custom', command: '/bin/agent', args: ['a b', '{{prompt}}'], extraArgs: ['-v'], env: { K: 'v' }, workDir: '/w', prompt: 'go' });
    const again = profileOf('ag_bob', formOf(p), tmpl('custom'));
    expect(sameProfile(again, p)).toBe(true);
    expect(again).toMatchObject({ args: ['a b', '{{prompt}}'], env: { K: 'v' }, model: '' });
    expect(sameProfile({ ...again, model: 'x' }, p)).toBe(false);
    expect(profileOf('ag_bob', formOf(p), tmpl('claude-code')).args, 'only the custom launcher takes arguments').toEqual([]);
  });
});

describe('insideRoots', () => {
  it.each([
    ['/work', true],
    ['/work/', true],
    ['/work/app/src', true],
    ['/workshop', false],
    ['/tmp', false],
  ])('%s', (dir, want) => {
    expect(insideRoots(dir, ['/work', '/data/x/'])).toBe(want);
  });
});

describe('display helpers', () => {
  it('quotes what a shell would split', () => {
    expect(['a', 'a b', "it's", ''].map(quoteArg)).toEqual(['a', "'a b'", `'it'\\''s'`, "''"]);
  });

  it('finds the placeholders to highlight', () => {
    expect(placeholderParts('-p {{prompt}} x')).toEqual([{ text: '-p ' }, { text: '{{prompt}}', name: 'prompt' }, { text: ' x' }]);
  });
});
