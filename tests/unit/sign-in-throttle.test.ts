import { describe, expect, it } from 'vitest';
import { SignInThrottle } from '../../server/src/dashboard/auth-routes.js';

describe('sign-in throttle (issue #15)', () => {
  it('keeps a locked account locked through a flood of junk failures, with memory bounded', () => {
    const throttle = new SignInThrottle();
    const now = Date.now();
    for (let i = 0; i < 10; i += 1) throttle.fail('victim@example.com', `198.51.100.${i}`, now);
    expect(throttle.retryAfter('victim@example.com', '203.0.113.9', now)).toBeGreaterThan(0);
    // 25 000 junk failures from rotating addresses and emails (the old map was cleared past 10 000).
    for (let i = 0; i < 25_000; i += 1) throttle.fail(`junk${i}@example.com`, `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, now + 1);
    expect(throttle.retryAfter('victim@example.com', '203.0.113.9', now + 2)).toBeGreaterThan(0);
    expect(throttle.size).toBeLessThanOrEqual(10_001 + 2);
    // The lock still ends when its window has passed.
    expect(throttle.retryAfter('victim@example.com', '203.0.113.9', now + 16 * 60_000)).toBe(0);
  });
});
