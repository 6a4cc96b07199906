import { describe, expect, it } from 'vitest';
import { kindLabel, targetNoun } from './kinds';

describe('request kind words', () => {
  it('names request kinds and the audit-only kinds', () => {
    expect(kindLabel('prompts/get')).toBe('prompt');
    expect(targetNoun('resources/read')).toBe('Resource read');
    expect(kindLabel('session')).toBe('session');
    expect(targetNoun('session')).toBe('Refused session request');
    expect(kindLabel('resources/subscribe')).toBe('subscribe');
    expect(targetNoun('resources/subscribe')).toBe('Resource subscription');
  });
});
