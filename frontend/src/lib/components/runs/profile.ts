// The run profile form's pure parts: what a template launches with the
// profile's values, and the checks the backend makes on save, made here
// first so a mistake shows under the field it is in.
import type { Profile, Template } from '../../api';

/** The list placeholders: each stands alone as an argument and becomes zero or more arguments. */
const LIST_PLACEHOLDERS = ['model_args', 'extra_args'];
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The profile form as edited: lists as text, one item a line. */
export interface ProfileForm {
  template: string;
  command: string;
  args: string;
  extraArgs: string;
  workDir: string;
  model: string;
  /** KEY=value, one a line. */
  env: string;
  prompt: string;
}

export function formOf(p: Profile | undefined, template = 'claude-code'): ProfileForm {
  return {
    template: p?.template ?? template,
    command: p?.command ?? '',
    args: (p?.args ?? []).join('\n'),
    extraArgs: (p?.extraArgs ?? []).join('\n'),
    workDir: p?.workDir ?? '',
    model: p?.model ?? '',
    env: Object.entries(p?.env ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join('\n'),
    prompt: p?.prompt ?? '',
  };
}

/** One item a line; blank lines are dropped, nothing else is trimmed (an argument may hold spaces). */
export function lines(text: string): string[] {
  return text.split('\n').map((l) => l.replace(/\r$/, '')).filter((l) => l.trim() !== '');
}

/** KEY=value lines as a map; a line without "=" is an error. */
export function parseEnv(text: string): { env: Record<string, string>; error: string | null } {
  const env: Record<string, string> = {};
  for (const line of lines(text)) {
    const i = line.indexOf('=');
    const key = (i < 0 ? line : line.slice(0, i)).trim();
    if (i < 0) return { env, error: `“${line.trim()}” has no “=”: write KEY=value, one a line.` };
    if (!ENV_KEY.test(key)) return { env, error: `“${key}” is not an environment variable name (letters, digits and _, not starting with a digit).` };
    if (key.toUpperCase().startsWith('AIRLOCK_')) return { env, error: `${key}: the AIRLOCK_ variables are set by Airlock for each run.` };
    env[key] = line.slice(i + 1);
  }
  return { env, error: null };
}

/**
 * Go's zero time: SetProfile stamps the profile itself, and a JSON time may
 * not be empty.
 */
const ZERO_TIME = '0001-01-01T00:00:00Z';

/** The profile the form describes, as SetProfile takes it. */
export function profileOf(agentId: string, f: ProfileForm, t: Template | undefined): Profile {
  return {
    agentId,
    template: f.template,
    command: f.command.trim(),
    args: t?.custom ? lines(f.args) : [],
    extraArgs: lines(f.extraArgs),
    workDir: f.workDir.trim(),
    model: t && t.modelArgs.length > 0 ? f.model.trim() : '',
    env: parseEnv(f.env).env,
    prompt: f.prompt,
    updatedAt: ZERO_TIME,
  };
}

/** Whether two profiles say the same (updatedAt aside). */
export function sameProfile(a: Profile, b: Profile | undefined): boolean {
  if (!b) return false;
  const norm = (p: Profile) =>
    JSON.stringify([p.template, p.command, p.args ?? [], p.extraArgs ?? [], p.workDir, p.model, Object.entries(p.env ?? {}).sort(), p.prompt]);
  return norm(a) === norm(b);
}

/**
 * The first problem with the placeholders of one value (where names it,
 * "argument 2"): an unknown name, a list placeholder inside a longer
 * argument (alone says it may stand alone), or an unclosed "{{".
 */
export function placeholderProblem(value: string, where: string, known: Record<string, string>, alone = false): string | null {
  const open = value.split('{{').length - 1;
  const closed = [...value.matchAll(PLACEHOLDER)].length;
  if (open > closed) return `${where} has an unclosed {{.`;
  for (const m of value.matchAll(PLACEHOLDER)) {
    const name = m[1];
    if (!(name in known)) return `${where} uses the unknown placeholder {{${name}}}. Known names are listed below.`;
    if (LIST_PLACEHOLDERS.includes(name) && !(alone && value.trim() === m[0])) return `${where}: {{${name}}} must stand alone as an argument.`;
  }
  return null;
}

/** Problems by field, found before anything is sent; empty when the form may be saved. */
export type FormErrors = Partial<Record<keyof ProfileForm, string>>;

export function checkForm(f: ProfileForm, t: Template | undefined, known: Record<string, string>): FormErrors {
  const out: FormErrors = {};
  if (!t) {
    out.template = 'Choose a launcher.';
    return out;
  }
  const cmd = f.command.trim();
  if (t.custom && !cmd) out.command = 'The custom launcher needs a command: a program in PATH or a full path.';
  else if (cmd.includes('{{')) out.command = 'The command cannot hold placeholders; put them in the arguments.';
  else if (cmd.includes('/') && !cmd.startsWith('/')) out.command = `“${cmd}” is a relative path: give a name found in PATH or a full path.`;
  const args = t.custom ? first(lines(f.args), (a, i) => placeholderProblem(a, `Argument ${i + 1}`, known, true)) : null;
  if (args) out.args = args;
  const extra =
    t.needsExtraArgs && lines(f.extraArgs).length === 0
      ? `The ${t.name} launcher needs ${t.needsExtraArgs}.`
      : first(lines(f.extraArgs), (a, i) => placeholderProblem(a, `Extra argument ${i + 1}`, known));
  if (extra) out.extraArgs = extra;
  const dir = f.workDir.trim();
  if (dir && !dir.startsWith('/')) out.workDir = `“${dir}” is not an absolute path.`;
  const env = parseEnv(f.env);
  const envProblem = env.error ?? first(Object.entries(env.env), ([k, v]) => placeholderProblem(v, k, known));
  if (envProblem) out.env = envProblem;
  const prompt = placeholderProblem(f.prompt, 'The prompt', known);
  if (prompt) out.prompt = prompt;
  return out;
}

/** The first problem fn finds in items, or null. */
function first<T>(items: T[], fn: (item: T, i: number) => string | null): string | null {
  for (let i = 0; i < items.length; i++) {
    const p = fn(items[i], i);
    if (p) return p;
  }
  return null;
}

/** Whether dir is one of roots or inside one (as written: the backend also resolves links). */
export function insideRoots(dir: string, roots: string[]): boolean {
  const clean = (p: string) => (p.length > 1 ? p.replace(/\/+$/, '') : p);
  const d = clean(dir);
  return roots.some((r) => {
    const root = clean(r);
    return d === root || d.startsWith(root === '/' ? '/' : `${root}/`);
  });
}

/**
 * What the template launches with the form's values: the program, then its
 * arguments with {{model_args}} and {{extra_args}} filled in and the other
 * placeholders left as written (they are filled in per run).
 */
export function launchArgs(t: Template, f: ProfileForm): { program: string; args: string[] } {
  const program = f.command.trim() || (t.command === '{{airlock}}' ? 'airlock' : t.command);
  let args = t.custom ? lines(f.args) : [...t.args];
  if (!args.some((a) => a.trim() === '{{extra_args}}')) args = [...args, '{{extra_args}}'];
  const out: string[] = [];
  for (const a of args) {
    const name = /^\{\{\s*(model_args|extra_args)\s*\}\}$/.exec(a.trim())?.[1];
    if (name === 'extra_args') out.push(...lines(f.extraArgs));
    else if (name === 'model_args') {
      if (f.model.trim()) out.push(...t.modelArgs.map((m) => m.replace(/\{\{\s*model\s*\}\}/g, f.model.trim())));
    } else out.push(a);
  }
  return { program, args: out };
}

/** A command line argument quoted for a POSIX shell where it needs it. */
export function quoteArg(a: string): string {
  return a === '' || /[\s'"\\$]/.test(a) ? `'${a.replace(/'/g, `'\\''`)}'` : a;
}

/** Text split into plain parts and {{placeholders}}, for highlighting. */
export function placeholderParts(text: string): { text: string; name?: string }[] {
  const out: { text: string; name?: string }[] = [];
  let last = 0;
  for (const m of text.matchAll(PLACEHOLDER)) {
    if (m.index! > last) out.push({ text: text.slice(last, m.index) });
    out.push({ text: m[0], name: m[1] });
    last = m.index! + m[0].length;
  }
  if (last < text.length) out.push({ text: text.slice(last) });
  return out;
}
