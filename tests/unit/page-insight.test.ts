import { afterAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../server/src/errors.js';
import { htmlToMarkdown } from '../../server/src/capture/output/html-to-markdown.js';
import { cutUtf8 } from '../../server/src/capture/output/page-content.js';
import { checkAiSchemas, checkSchemaBudget, parseAiAnswer, schemaChecker } from '../../server/src/services/ai-schema.js';
import { AiResultCache } from '../../server/src/services/ai-result-cache.js';

/** Page insight (docs/page-insight.md), the pure parts: Markdown conversion, bounded text files, the answer schema, the AI cache key. */
describe('html-to-markdown', () => {
  const paragraph = (n: number) =>
    `<p>Paragraph ${n} of the article body, long enough for Readability to count it as content worth keeping, with words and commas, and more words.</p>`;

  it('converts the article Readability finds, titled, with atx headings, lists and links', () => {
    const html = `<!doctype html><html><head><title>Tide tables</title></head><body>
      <nav><a href="https://example.org/">Home</a> <a href="https://example.org/about">About</a></nav>
      <article><h1>Tide tables</h1>${paragraph(1)}<h2>Spring tides</h2>${paragraph(2)}
      <ul><li>High water</li><li>Low water</li></ul><p>See <a href="https://example.org/tides">the tables</a> for more, and more words to be long enough for a paragraph.</p>${paragraph(3)}</article>
      <footer>Copyright</footer></body></html>`;
    const { markdown, title, article } = htmlToMarkdown(html);
    expect(article).toBe(true);
    expect(title).toBe('Tide tables');
    expect(markdown.startsWith('# Tide tables\n')).toBe(true);
    expect(markdown).toContain('## Spring tides');
    expect(markdown).toMatch(/-\s+High water/);
    expect(markdown).toContain('[the tables](https://example.org/tides)');
    expect(markdown).toContain('Paragraph 3 of the article body');
    expect(markdown).not.toContain('Copyright');
  });

  it('converts the whole body when there is no article, and gives nothing for an empty page', () => {
    const short = htmlToMarkdown('<html><head><title>Tiny</title></head><body><p>Just a line.</p></body></html>');
    expect(short.markdown).toContain('Just a line.');
    expect(short.markdown.startsWith('# Tiny')).toBe(true);
    expect(htmlToMarkdown('<html><body></body></html>').markdown).toBe('');
  });
});

describe('cutUtf8', () => {
  it('keeps text within the limit and cuts longer text at a character boundary', () => {
    expect(cutUtf8('hello', 10)).toEqual({ buffer: Buffer.from('hello'), truncated: false });
    // "é" is 2 bytes, "€" 3: a cut at 4 bytes of "aé€" must not split the euro sign.
    const cut = cutUtf8('aé€', 4);
    expect(cut.truncated).toBe(true);
    expect(cut.buffer.toString('utf8')).toBe('aé');
    expect(cutUtf8('€€', 5).buffer.toString('utf8')).toBe('€');
  });
});

describe('openaiSchema answers', () => {
  const schema = JSON.stringify({ type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] });
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error('expected a failure');
      },
      (error: unknown) => error as ApiError,
    );
  afterAll(() => schemaChecker.close());

  it('returns a matching answer parsed', async () => {
    expect(await parseAiAnswer('org_a', schema, '{"n": 3}')).toEqual({ n: 3 });
  });

  it('names every mismatch (AI_RESULT_INVALID) and refuses text that is not JSON', async () => {
    const bad = await failure(parseAiAnswer('org_a', schema, '{"n": 0}'));
    expect(bad.code).toBe('AI_RESULT_INVALID');
    expect(bad.status).toBe(502);
    expect(bad.message).toContain('/n must be >= 1');
    expect((await failure(parseAiAnswer('org_a', schema, '{}'))).message).toContain("must have required property 'n'");
    expect((await failure(parseAiAnswer('org_a', schema, 'sure! {"n": 2}'))).message).toContain('the answer is not JSON');
  });

  it('refuses a schema Ajv cannot compile as a VALIDATION_ERROR naming openaiSchema', async () => {
    const bad = await failure(
      checkAiSchemas('org_a', [{ field: 'openaiSchema', text: '{"type":"object","properties":{"a":{"type":"bogus"}}}' }]),
    );
    expect(bad.code).toBe('VALIDATION_ERROR');
    expect(bad.message).toMatch(/openaiSchema is not a usable JSON Schema/);
    await expect(checkAiSchemas('org_a', [{ field: 'openaiSchema', text: schema }])).resolves.toBeUndefined();
  });

  it('runs patterns on RE2: a catastrophic pattern meets a long answer in linear time, lookaround is refused by name', async () => {
    const catastrophic = JSON.stringify({ type: 'object', properties: { a: { type: 'string', pattern: '^(a+)+$' } } });
    // With backtracking, 28 "a"s and a "!" take seconds and each more one doubles it; 100 000 would never end.
    const bad = await failure(parseAiAnswer('org_a', catastrophic, JSON.stringify({ a: `${'a'.repeat(100_000)}!` })));
    expect(bad.code).toBe('AI_RESULT_INVALID');
    expect(bad.message).toContain('/a must match pattern');
    const lookahead = JSON.stringify({ type: 'object', properties: { a: { type: 'string', pattern: '^(?=x)x+$' } } });
    const refused = await failure(checkAiSchemas('org_a', [{ field: 'openaiSchema', text: lookahead }]));
    expect(refused.code).toBe('VALIDATION_ERROR');
    expect(refused.message).toContain('the pattern "^(?=x)x+$" cannot be used');
    expect(refused.message).toContain('RE2');
  });

  it('frees every pattern after its check: a hundred schemas with a Unicode class each fit the engine, whose heap holds 87 of them at once', async () => {
    // re2-wasm has a fixed 16 MB heap and frees nothing by itself: undeleted, the 88th \p{L} aborts it for good.
    const letters = JSON.stringify({ type: 'object', properties: { name: { type: 'string', pattern: '^\\p{L}+$' } } });
    for (let i = 0; i < 100; i++) expect(await parseAiAnswer('org_a', letters, JSON.stringify({ name: 'Zoë' }))).toEqual({ name: 'Zoë' });
  });

  it('refuses a schema whose patterns fill the engine, and the next schema is checked by a fresh one', async () => {
    const properties = Object.fromEntries(
      Array.from({ length: 6 }, (_, i) => [`p${i}`, { type: 'string', pattern: `^[\\p{L}\\p{N}]{1,${50 + i}}$` }]),
    );
    const refused = await failure(
      checkAiSchemas('org_a', [{ field: 'openaiSchema', text: JSON.stringify({ type: 'object', properties }) }]),
    );
    expect(refused.code).toBe('VALIDATION_ERROR');
    expect(refused.message).toMatch(/more memory than the regular-expression engine has|more than 3 s of work/);
    await expect(checkAiSchemas('org_a', [{ field: 'openaiSchema', text: schema.replace('"n"', '"m"') }])).resolves.toBeUndefined();
    expect(await parseAiAnswer('org_a', schema, '{"n": 2}')).toEqual({ n: 2 });
  });

  it('answers AI_RESULT_INVALID for an answer nested deeper than the validator can go', async () => {
    const tree = JSON.stringify({
      type: 'object',
      properties: { a: { $ref: '#/$defs/n' } },
      $defs: { n: { type: 'array', items: { $ref: '#/$defs/n' } } },
    });
    const bad = await failure(parseAiAnswer('org_a', tree, `{"a":${'['.repeat(50_000)}${']'.repeat(50_000)}}`));
    expect(bad.code).toBe('AI_RESULT_INVALID');
    expect(bad.message).toContain('could not be checked');
  });

  it("checks another organization's schema waiting behind one that was ended for its work", async () => {
    // The heavy schema's thread is ended (over 3 s, or its engine's heap); the waiting check must get a new one.
    const properties = Object.fromEntries(
      Array.from({ length: 300 }, (_, i) => [`p${i}`, { type: 'string', pattern: `^[\\p{L}\\p{N}]{1,${i + 1}}xI$` }]),
    );
    const heavy = failure(checkAiSchemas('org_heavy', [{ field: 'openaiSchema', text: JSON.stringify({ type: 'object', properties }) }]));
    const light = checkAiSchemas('org_light', [{ field: 'openaiSchema', text: schema.replace('"n"', '"k"') }]);
    expect((await heavy).code).toBe('VALIDATION_ERROR');
    await expect(light).resolves.toBeUndefined();
  });

  it("keeps each request's $id to itself: the same $id twice is no clash, another's $id cannot be referenced", async () => {
    const named = JSON.stringify({ $id: 'https://example.com/shared', type: 'object', properties: { n: { type: 'number' } } });
    await checkAiSchemas('org_a', [{ field: 'openaiSchema', text: named }]);
    await expect(checkAiSchemas('org_b', [{ field: 'openaiSchema', text: named }])).resolves.toBeUndefined();
    const referencing = JSON.stringify({ type: 'object', properties: { x: { $ref: 'https://example.com/shared' } } });
    const refused = await failure(checkAiSchemas('org_b', [{ field: 'openaiSchema', text: referencing }]));
    expect(refused.message).toMatch(/can't resolve reference/);
  });

  it('bounds the different schemas of one request together, counting a repeated schema once', () => {
    const big = (tag: string) => JSON.stringify({ type: 'object', description: tag.repeat(15_000) });
    expect(() =>
      checkSchemaBudget([big('a'), big('a'), big('a')].map((text, index) => ({ field: `requests[${index}].openaiSchema`, text }))),
    ).not.toThrow();
    expect(() =>
      checkSchemaBudget([big('a'), big('b'), big('c')].map((text, index) => ({ field: `requests[${index}].openaiSchema`, text }))),
    ).toThrow(/requests\[2\]\.openaiSchema .*40000 characters together/);
  });
});

describe('AI cache key', () => {
  const base = { organizationId: 'org-1', providerKey: 'sk-1', model: 'm', prompt: 'p', image: Buffer.from('png') };

  it('changes with the image, the prompt, the schema, the model, the organization and the provider key, and never holds the key', () => {
    const key = AiResultCache.keyFor(base);
    for (const change of [
      { image: Buffer.from('other') },
      { prompt: 'q' },
      { schema: '{}' },
      { model: 'n' },
      { organizationId: 'org-2' },
      { providerKey: 'sk-2' },
    ]) {
      expect(AiResultCache.keyFor({ ...base, ...change })).not.toBe(key);
    }
    expect(AiResultCache.keyFor({ ...base })).toBe(key);
    expect(key).not.toContain('sk-1');
  });
});
