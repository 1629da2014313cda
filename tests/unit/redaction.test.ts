import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../server/src/logger.js';

const SECRET = 'rs_TOPSECRET123';

describe('request URL redaction by meaning', () => {
  const spellings: Array<[string, string]> = [
    ['plain apiKey', `/v1/screenshot?url=https://example.com&apiKey=${SECRET}`],
    ['percent-encoded apiKey name', `/v1/screenshot?url=x&apiK%65y=${SECRET}`],
    ['upper-case name', `/v1/screenshot?APIKEY=${SECRET}&url=x`],
    ['bracket name', `/v1/screenshot?apiKey[]=${SECRET}`],
    ['encoded bracket name', `/v1/screenshot?apiKey%5B0%5D=${SECRET}`],
    ['openaiApiKey encoded', `/v1/screenshot?openai%41piKey=${SECRET}`],
    ['proxyPassword encoded', `/v1/screenshot?proxyPassw%6Frd=${SECRET}`],
    ['proxyUsername', `/v1/screenshot?proxyUsername=${SECRET}`],
    ['storage secret encoded', `/v1/screenshot?requestStorageSecretAccessK%65y=${SECRET}`],
    ['storage key id', `/v1/screenshot?requestStorageAccessKeyId=${SECRET}`],
    ['headers value', `/v1/screenshot?headers=%7B%22Authorization%22%3A%22Bearer%20${SECRET}%22%7D`],
    ['proxyUrl userinfo', `/v1/screenshot?proxyUrl=http://user:${SECRET}@proxy.example:8080`],
    ['proxyUrl encoded userinfo', `/v1/screenshot?proxyUrl=http%3A%2F%2Fuser%3A${SECRET}%40proxy.example`],
    ['storage endpoint userinfo', `/v1/screenshot?requestStorageEndpoint=http://k:${SECRET}@s3.example`],
    ['target url userinfo', `/v1/screenshot?url=https://admin:${SECRET}@example.com/`],
    ['socks userinfo', `/v1/screenshot?proxyUrl=socks5://u:${SECRET}@1.2.3.4:1080`],
    ['fragment', `/v1/screenshot?url=x#apiKey=${SECRET}`],
  ];
  for (const [label, url] of spellings) {
    it(`hides the secret: ${label}`, () => {
      const out = redactUrl(url);
      expect(out).not.toContain(SECRET);
      expect(decodeURIComponent(out)).toContain('[REDACTED]');
    });
  }

  it('masks credentials in linear time: a megabyte of scheme-like text is no denial of service', () => {
    // The old pattern (a scheme in front of ://) retried from every position: quadratic, about 30 s
    // for the 100 000-character html the API accepts, hours for this input; the test timeout is the guard.
    const hostile = `${'a'.repeat(1_000_000)}://${'b'.repeat(1_000)}`;
    expect(redactUrl(`/capture?html=${hostile}`)).toBe(`/capture?html=${hostile}`);
    expect(redactUrl(`/capture?url=${'a'.repeat(500_000)}https://user:${SECRET}@example.com/`)).not.toContain(SECRET);
  });

  it('keeps ordinary parameters readable', () => {
    const out = redactUrl('/v1/screenshot?url=https%3A%2F%2Fexample.com&width=800&format=png');
    expect(out).toBe('/v1/screenshot?url=https%3A%2F%2Fexample.com&width=800&format=png');
  });
});

describe('validation error bodies never echo secrets', () => {
  it('masks secret fields in any case, header values and URL credentials', async () => {
    const { z } = await import('zod');
    const { zodIssuesToApiError } = await import('../../server/src/http/validation.js');
    const schema = z
      .object({
        headers: z.record(z.string().regex(/^[^\r\n]*$/)),
        proxyUrl: z.string().startsWith('http:'),
        url: z.string().max(3),
        apiKey: z.string().max(3),
      })
      .strict();
    const input = {
      headers: { Authorization: `Bearer ${SECRET}\r\n` },
      proxyUrl: `socks5://u:${SECRET}@1.2.3.4:1080`,
      url: `https://admin:${SECRET}@example.com/`,
      apiKey: SECRET,
      APIKEY: SECRET,
    };
    const parsed = schema.safeParse(input);
    expect(parsed.success).toBe(false);
    const body = JSON.stringify(zodIssuesToApiError(parsed.success ? null : parsed.error, input).toBody());
    expect(body).not.toContain(SECRET);
    expect(body).toContain('proxyUrl');
    expect(body).toContain('headers');
    expect(body).toContain('APIKEY');
  });
});

describe('userAgent with control characters', () => {
  it('is refused by the contract with a message naming the field', async () => {
    const contract = await import('@daguerre/contract');
    const schema = contract.CaptureQuerySchema;
    for (const bad of ['Mozilla\r\nX-Evil: 1', 'Mozilla\u0000', 'a\nb']) {
      const result = schema.safeParse({ url: 'https://example.com', userAgent: bad });
      expect(result.success).toBe(false);
      expect(result.error!.issues.some((i) => i.path[0] === 'userAgent' && /userAgent/.test(i.message))).toBe(true);
    }
    expect(schema.safeParse({ url: 'https://example.com', userAgent: 'Mozilla/5.0 (X11)' }).success).toBe(true);
  });
});

/**
 * docs/containment.md: misspellings nobody listed. The names are generated from secret-ish stems and
 * spelling changes (case, %-escapes of letters, NUL, `_`/`-`/`.` between the words, doubled
 * escapes, brackets, fullwidth letters), so the test covers combinations no list in the code holds.
 */
describe('secrets redacted by meaning, not spelling', async () => {
  const { echoableValue, isSecretName, maskUserinfo } = await import('../../server/src/security/redaction.js');
  const CANARY = 'Zq7canaryValue9';
  const stems = [
    ['api', 'key'],
    ['key'],
    ['access', 'key'],
    ['x', 'api', 'key'],
    ['auth', 'token'],
    ['token'],
    ['access', 'token'],
    ['signature'],
    ['sig'],
    ['client', 'secret'],
    ['secret'],
    ['password'],
    ['passwd'],
    ['pwd'],
    ['proxy', 'pass'],
    ['private', 'key'],
    ['session', 'id'],
    ['bearer'],
    ['jwt'],
    ['openai', 'api', 'key'],
    ['request', 'storage', 'secret', 'access', 'key'],
  ];
  const joiners = ['', '_', '-', '.', '%5F', '%2D', '%00', '__'];
  const cases: Array<(word: string, i: number) => string> = [
    (word) => word,
    (word) => word.toUpperCase(),
    (word, i) => (i === 0 ? word : word[0]!.toUpperCase() + word.slice(1)),
    (word) => [...word].map((c, j) => (j % 2 ? c.toUpperCase() : c)).join(''),
  ];
  const escapes: Array<(name: string) => string> = [
    (name) => name,
    (name) => name.replace(/[aeiou]/, (c) => `%${c.charCodeAt(0).toString(16)}`),
    (name) => name.replace(/[aeiou]/, (c) => `%25${c.charCodeAt(0).toString(16)}`),
    (name) => `${name}%00`,
    (name) => `%00${name}`,
    (name) => `${name}[]`,
    (name) => `${name}%5B0%5D`,
    (name) => encodeURIComponent(name.replace(/[a-z]/, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0))),
  ];
  const names: string[] = [];
  for (const stem of stems) {
    joiners.forEach((joiner, j) => {
      const spelled = stem.map((word, i) => cases[(i + j) % cases.length]!(word, i)).join(joiner);
      for (const escape of escapes) names.push(escape(spelled));
    });
  }

  it(`masks every one of ${names.length} generated spellings in the logged URL and the error body`, () => {
    for (const name of names) {
      const logged = redactUrl(`/capture?url=https%3A%2F%2Fexample.com&${name}=${CANARY}&format=png`);
      expect(logged, name).not.toContain(CANARY);
      expect(logged, name).toContain('format=png');
      expect(echoableValue(decodeURIComponent(name.replace(/%25/g, '%')), CANARY), name).not.toBe(CANARY);
      expect(isSecretName(name), name).toBe(true);
    }
  });

  it('masks them in a JSON body echoed back, at any depth', () => {
    const echoed = JSON.stringify(
      echoableValue('options', { viewport: { api_key: CANARY, deeper: [{ 'Access-Token': CANARY }] }, 'client.secret': CANARY }),
    );
    expect(echoed).not.toContain(CANARY);
  });

  it('keeps ordinary parameter names readable', () => {
    for (const name of [
      'url',
      'html',
      'format',
      'viewportWidth',
      'waitUntil',
      'blockUrls',
      'device',
      'expires',
      'theme',
      'fullPage',
      'userAgent',
    ]) {
      expect(isSecretName(name), name).toBe(false);
    }
    expect(redactUrl('/capture?url=https%3A%2F%2Fexample.com%2Fa%40b&format=png')).toBe(
      '/capture?url=https%3A%2F%2Fexample.com%2Fa%40b&format=png',
    );
  });

  const notations = [
    `http://user:${CANARY}@host.example/`,
    `http:\\\\user:${CANARY}@host.example/`,
    `http:/\\user:${CANARY}@host.example/`,
    `http:\\/user:${CANARY}@host.example/`,
    `http:user:${CANARY}@host.example/`,
    `HTTPS:\\\\\\user:${CANARY}@host.example`,
    `//user:${CANARY}@host.example/`,
    `\\\\user:${CANARY}@host.example`,
    `http://${CANARY}@host.example/`,
    `http://${CANARY}:@host.example/`,
    `http://user:pa@ss${CANARY}@host.example/`,
    `http://us\ter:${CANARY}@host.example/`,
    `ht\ntp://user:${CANARY}\n@host.example/`,
    `socks5h://user:${CANARY}@10.0.0.1:1080`,
    `ws://user:${CANARY}@host.example/socket`,
    `ftp://user:${CANARY}@host.example/`,
    `mysql://root:${CANARY}@db.internal:3306/app`,
    `redis://:${CANARY}@cache.internal:6379`,
    `see http:\\\\user:${CANARY}@host.example for details`,
  ];
  it('masks every URL credential notation the URL parser accepts, in logs and error bodies', () => {
    for (const notation of notations) {
      expect(maskUserinfo(notation), notation).not.toContain(CANARY);
      expect(redactUrl(`/capture?proxyUrl=${encodeURIComponent(notation)}`), notation).not.toContain(CANARY);
      expect(redactUrl(`/capture?url=${notation.replace(/[\t\n ]/g, encodeURIComponent)}`), notation).not.toContain(CANARY);
      expect(String(echoableValue('url', notation)), notation).not.toContain(CANARY);
    }
    // What the parser takes as credentials is what was masked.
    expect(new URL(`http:\\\\user:${CANARY}@host.example/`).password).toBe(CANARY);
  });

  it('masks values shaped like an API key under any name, and names that are keys', () => {
    const key = 'rs_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v';
    expect(redactUrl(`/capture?note=${key}`)).not.toContain(key);
    expect(redactUrl(`/capture?${key}`)).not.toContain(key);
    expect(redactUrl(`/capture?${key}=1`)).not.toContain(key);
  });
});
