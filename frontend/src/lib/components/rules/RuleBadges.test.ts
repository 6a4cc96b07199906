import { afterEach, describe, expect, it, vi } from 'vitest';
import { render, screen } from '@testing-library/svelte';
import { flushSync } from 'svelte';
import { testStores } from '../../testing/stores';
import type { Rule } from '../../api';
import RuleBadges from './RuleBadges.svelte';

vi.mock('../../api', async () => (await import('../../testing/fakeApi')).fakeApiModule());

describe('RuleBadges', () => {
  afterEach(() => vi.useRealTimers());

  it('an expiring rule\'s label follows the clock to "expired" (found by a new-user test: it stayed "expires in 1m")', () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    const rule: Rule = {
      id: 'r', kind: 'tool', serverId: null, toolName: null, toolPattern: null, autoApprove: true, priority: 0, conditions: [],
      agentId: null, sessionId: null, expiresAt: '2026-01-01T00:00:08Z', createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z',
    };
    const { context } = testStores();
    render(RuleBadges, { context, props: { rule } });
    expect(screen.getByText('expires in 8s')).toBeTruthy();
    vi.advanceTimersByTime(9000);
    flushSync();
    expect(screen.getByText('expired')).toBeTruthy();
  });
});
