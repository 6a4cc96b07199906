import { describe, expect, it } from 'vitest';
import { commandLine } from './format';

describe('commandLine', () => {
  it('quotes what a shell would split or interpret, and only that', () => {
    expect(commandLine('sh', ['-c', 'echo boom >&2; exit 3'])).toBe(`sh -c 'echo boom >&2; exit 3'`);
    expect(commandLine('npx', ['-y', '@modelcontextprotocol/server-filesystem', '/home/me/notes'])).toBe('npx -y @modelcontextprotocol/server-filesystem /home/me/notes');
    expect(commandLine('echo', ["it's", ''])).toBe(`echo 'it'\\''s' ''`);
  });
});
