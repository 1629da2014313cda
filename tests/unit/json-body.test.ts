import { describe, expect, it } from 'vitest';
import { jsonDepth, MAX_JSON_DEPTH } from '../../server/src/http/json-body.js';

const bytes = (text: string) => Buffer.from(text, 'utf8');

describe('JSON nesting measured on the raw bytes', () => {
  it('counts arrays and objects, not brackets inside strings or after escaped quotes', () => {
    expect(jsonDepth(bytes('{"html":"x"}'))).toBe(1);
    expect(jsonDepth(bytes('{"headers":{"a":"[[[[{{{{"},"list":[[1],[2]]}'))).toBe(3);
    expect(jsonDepth(bytes('["\\"[[[[", {"a": "\\\\"}, [[[]]]]'))).toBe(4);
    expect(jsonDepth(bytes('{"html":"<p>é ü 漢字 [</p>"}'))).toBe(1);
  });

  it('stops counting past the limit: 100 000 nested arrays are measured without recursion', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    expect(jsonDepth(bytes(deep))).toBe(100_000);
    expect(jsonDepth(bytes(deep), MAX_JSON_DEPTH)).toBe(MAX_JSON_DEPTH + 1);
  });
});
