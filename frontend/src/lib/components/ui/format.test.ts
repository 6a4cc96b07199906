import { describe, expect, it, vi } from 'vitest';
import { commandLine } from './format';

describe('commandLine', () => {
  it('quotes what a shell would split or interpret, and only that', () => {
    expect(commandLine('sh', ['-c', 'echo boom >&2; exit 3'])).toBe(`sh -c 'echo boom >&2; exit 3'`);
    expect(commandLine('npx', ['-y', '@modelcontextprotocol/server-filesystem', '/home/me/notes'])).toBe('npx -y @modelcontextprotocol/server-filesystem /home/me/notes');
    expect(commandLine('echo', ["it's", ''])).toBe(`echo 'it'\\''s' ''`);
  });
});

describe('relTime', () => {
  it('moves on by itself: the clock it reads ticks (found by a new-user test: "22s ago" stayed)', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-26T10:00:00Z') });
    try {
      vi.resetModules();
      const { relTime: rel } = await import('./format');
      const { TICK_MS } = await import('./clock.svelte');
      const created = '2026-11-26T09:59:58Z';
      expect(rel(created)).toBe('just now');
      vi.advanceTimersByTime(TICK_MS);
      expect(rel(created)).toBe('12s ago');
      vi.advanceTimersByTime(6 * TICK_MS);
      expect(rel(created)).toBe('1m ago');
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('linkParts', () => {
  it('links http(s) addresses only, leaving sentence punctuation and unmatched brackets outside', async () => {
    const { linkParts } = await import('./format');
    expect(linkParts('see https://a.dev/x?y=1, then (http://b.org/p). Done')).toEqual([
      { text: 'see ' },
      { text: 'https://a.dev/x?y=1', href: 'https://a.dev/x?y=1' },
      { text: ', then (' },
      { text: 'http://b.org/p', href: 'http://b.org/p' },
      { text: '). Done' },
    ]);
    expect(linkParts('https://en.wikipedia.org/wiki/Go_(language)')).toEqual([{ text: 'https://en.wikipedia.org/wiki/Go_(language)', href: 'https://en.wikipedia.org/wiki/Go_(language)' }]);
    expect(linkParts('javascript:alert(1) file:///etc/passwd data:text/html,x')).toEqual([{ text: 'javascript:alert(1) file:///etc/passwd data:text/html,x' }]);
    expect(linkParts('http://')).toEqual([{ text: 'http://' }]);
    expect(linkParts('')).toEqual([]);
  });
});

describe('showControls', () => {
  it('shows bidirectional controls as marks, so reordered text cannot pass for other text (found by a new-user test)', async () => {
    const { showControls, hasControls, prettyJson, linkParts } = await import('./format');
    expect(hasControls('a\u202eb')).toBe(true);
    expect(hasControls('plain 日本語')).toBe(false);
    expect(showControls('RTL \u202e gnp.exe')).toBe('RTL ⟨U+202E⟩ gnp.exe');
    expect(showControls('a\u2066b\u2069c\u200fd')).toBe('a⟨U+2066⟩b⟨U+2069⟩c⟨U+200F⟩d');
    expect(showControls('日本語 and émoji 🙂')).toBe('日本語 and émoji 🙂');
    expect(prettyJson({ path: 'invoice\u202etxt.sh' })).toContain('invoice⟨U+202E⟩txt.sh');
    expect(linkParts('see \u202eevil')).toEqual([{ text: 'see ⟨U+202E⟩evil' }]);
  });
});
