import { describe, expect, it } from 'vitest';
import { ignoreBecause } from '../../server/src/ignore-error.js';

/** A named, deliberate ignore: the rejection ends there and the chain goes on with undefined. */
describe('ignoreBecause', () => {
  it('turns a rejection into undefined', async () => {
    await expect(Promise.reject(new Error('gone')).catch(ignoreBecause('the page is closed anyway'))).resolves.toBeUndefined();
  });

  it('leaves a fulfilled value as it is', async () => {
    await expect(Promise.resolve(7).catch(ignoreBecause('nothing to ignore'))).resolves.toBe(7);
  });
});
