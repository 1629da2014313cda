import { describe, expect, it } from 'vitest';
import { diffText, TEXT_DIFF_LIMITS } from '../../server/src/monitors/text-diff.js';

describe('the text diff (jsdiff, line by line)', () => {
  it('lists exactly the lines added and removed', () => {
    const before = '# Pricing\n\nBasic: $10\n\nPro: $20\n\nContact us';
    const after = '# Pricing\n\nBasic: $12\n\nPro: $20\n\nEnterprise: ask\n\nContact us';
    expect(diffText(before, after)).toEqual({ textAdded: ['Basic: $12', 'Enterprise: ask'], textRemoved: ['Basic: $10'] });
  });

  it('sees no change in re-indented lines or blank lines', () => {
    expect(diffText('a\n\n  b\nc', '  a\nb\n\n\nc  ')).toEqual({ textAdded: [], textRemoved: [] });
  });

  it('reports a moved line as removed where it was and added where it is', () => {
    expect(diffText('a\nb\nc', 'b\nc\na')).toEqual({ textAdded: ['a'], textRemoved: ['a'] });
  });

  it('caps each list and each line', () => {
    const many = Array.from({ length: 300 }, (_, i) => `line ${i}`).join('\n');
    const long = 'x'.repeat(800);
    const { textAdded, textRemoved } = diffText('', `${many}\n${long}`);
    expect(textAdded).toHaveLength(TEXT_DIFF_LIMITS.lines);
    expect(textRemoved).toEqual([]);
    const { textAdded: one } = diffText('', long);
    expect(one[0]).toHaveLength(TEXT_DIFF_LIMITS.lineLength);
    expect(one[0]!.endsWith('…')).toBe(true);
  });
});
