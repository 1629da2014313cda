import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import express from 'express';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorResponder } from '../../server/src/http/error-responder.js';
import { hashPassword } from '../../server/src/services/passwords.js';
import { capturedLogLines, startTestService, type TestService } from '../helpers/test-service.js';

const OK_PAGE = '<body style="margin:0;background:rgb(40,160,110)"></body>';
const CANARY = 'Kq9-canary-28-e71c';

/** Spellings of a key's parameter nobody listed: generated from stems, separators, case and escapes. */
function misspelledNames(): string[] {
  const stems = [
    ['api', 'key'],
    ['key'],
    ['access', 'key'],
    ['auth', 'token'],
    ['token'],
    ['signature'],
    ['sig'],
    ['client', 'secret'],
    ['pass', 'word'],
    ['x', 'api', 'key'],
  ];
  const separators = ['_', '-', '', '.', '%00', '%2D'];
  const spell = [
    (words: string[], sep: string) => words.join(sep),
    (words: string[], sep: string) => words.join(sep).toUpperCase(),
    (words: string[], sep: string) => words.map((w, i) => (i ? w[0]!.toUpperCase() + w.slice(1) : w)).join(sep),
    (words: string[], sep: string) => `${words.join(sep)}%00`,
    (words: string[], sep: string) => words.join(sep).replace(/[aeiou]/, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
  ];
  const names = new Set<string>();
  stems.forEach((words, i) => separators.forEach((sep, j) => names.add(spell[(i + j) % spell.length]!(words, sep))));
  // The real parameters are not misspellings.
  return [...names].filter((name) => !['apiKey', 'signature'].includes(decodeURIComponent(name)));
}

const CREDENTIAL_URLS = [
  `http:\\\\user:${CANARY}@vm/`,
  `http:/\\user:${CANARY}@vm/`,
  `http:user:${CANARY}@vm/`,
  `HTTP://user:pa@ss${CANARY}@vm/`,
  `https://${CANARY}@vm/`,
  `//user:${CANARY}@vm/`,
  `ht\ttp://us\ner:${CANARY}@vm/`,
];

describe('secrets by meaning, JSON bodies and errors through the real service', () => {
  let service: TestService;
  const answers: string[] = [];
  const logFrom = capturedLogLines.length;

  beforeAll(async () => {
    // At the most verbose level, so that a secret in a debug line is found too.
    service = await startTestService({ env: { RATE_LIMIT_MAX: '10000', LOG_LEVEL: 'trace' } });
  });
  afterAll(async () => {
    await service?.stop();
  });

  const record = async (response: Response) => {
    const text = await response.text();
    answers.push(text);
    return { status: response.status, text, type: response.headers.get('content-type') ?? '' };
  };

  it('never echoes or logs the API key sent under a misspelled name, in the query or a JSON body', async () => {
    const names = misspelledNames();
    expect(names.length).toBeGreaterThanOrEqual(45);
    for (const name of names) {
      // The right key in the header, so that validation runs and describes the stray parameter.
      const query = await record(
        await service.get(`/capture?html=${encodeURIComponent(OK_PAGE)}&${name}=${encodeURIComponent(service.apiKey)}`, {
          headers: { 'x-api-key': service.apiKey },
        }),
      );
      expect(query.status, name).toBe(400);
      expect(query.text, name).toContain('[REDACTED]');
      const body = await record(
        await fetch(`${service.url}/capture`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': service.apiKey },
          body: JSON.stringify({ html: OK_PAGE, [decodeURIComponent(name.replace(/%00/g, '%2500'))]: service.apiKey }),
        }),
      );
      expect(body.status, name).toBe(400);
    }
  });

  it('masks every URL credential notation in the answer and the log', async () => {
    for (const url of CREDENTIAL_URLS) {
      const answer = await record(await service.get(`/capture?${new URLSearchParams({ url, apiKey: service.apiKey })}`));
      expect(answer.status, url).toBeGreaterThanOrEqual(400);
      const proxied = await record(
        await service.get(`/capture?${new URLSearchParams({ html: OK_PAGE, proxyUrl: url, apiKey: service.apiKey })}`),
      );
      expect(proxied.status, url).toBeGreaterThanOrEqual(400);
    }
  });

  it('never logs what was typed into the sign-in form, a password in the email field included', async () => {
    await service.runtime.accounts.createUser('owner@example.test', 'Owner', await hashPassword('the right one'));
    const form = await fetch(`${service.url}/dashboard/sign-in`);
    const cookie = form.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
    for (const [email, password] of [
      [`${CANARY}-typed-as-email`, `${CANARY}-password`],
      ['owner@example.test', `${CANARY}-wrong-password`],
    ]) {
      const response = await fetch(`${service.url}/dashboard/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: token, email: email!, password: password! }),
      });
      expect(response.status).toBe(401);
    }
  });

  it('answers a body of 100 000 nested arrays, and one deep inside a field, with a JSON 400 and no stack', async () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    for (const [path, body] of [
      ['/capture', deep],
      ['/capture', `{"html":"x","headers":${deep}}`],
      ['/captures', `{"url":"https://example.com","webhookUrl":${deep}}`],
      ['/capture', '{"html":"x","a":' + '{"b":'.repeat(40) + '1' + '}'.repeat(41)],
    ] as const) {
      const answer = await record(
        await fetch(`${service.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': service.apiKey },
          body,
        }),
      );
      expect(answer.status, path).toBe(400);
      expect(answer.type).toContain('application/json');
      const parsed = JSON.parse(answer.text) as { success: boolean; error: { code: string; message: string } };
      expect(parsed).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR' } });
      expect(parsed.error.message).toContain('nested');
      expect(answer.text).not.toMatch(/\bat \S+ \(|node_modules|\/work\/|\.ts:\d+/);
    }
    // A body nested within the limit still reaches validation.
    const shallow = await record(
      await fetch(`${service.url}/capture`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': service.apiKey },
        body: JSON.stringify({ html: OK_PAGE, viewportWidth: 100, viewportHeight: 100 }),
      }),
    );
    expect(shallow.status).toBe(200);
  });

  it('answers odd requests with the JSON error body, never an HTML page', async () => {
    const requests: Array<[string, RequestInit?]> = [
      ['/%'],
      ['/capture/%E0%A4%A'],
      ['/usage?%=%'],
      ['/nowhere'],
      [
        '/capture',
        { method: 'POST', headers: { 'content-type': 'application/json; charset=latin1', 'x-api-key': service.apiKey }, body: '{}' },
      ],
      [
        '/capture',
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'x-api-key': service.apiKey },
          body: 'not gzip',
        },
      ],
      [
        '/capture',
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': service.apiKey },
          body: `{"html":"${'x'.repeat(2 * 1024 * 1024)}"}`,
        },
      ],
      ['/capture', { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': service.apiKey }, body: '{"html": "x",' }],
      ['/captures', { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': service.apiKey }, body: '[' }],
    ];
    for (const [path, init] of requests) {
      const answer = await record(await fetch(`${service.url}${path}`, init));
      expect(answer.type, path).toContain('application/json');
      expect(answer.status, path).toBeLessThan(500);
      expect(answer.text, path).not.toMatch(/<html|<pre|\bat \S+ \(|\/work\//i);
    }
  });

  it('left none of the secrets in any answer or log line', () => {
    const log = capturedLogLines.slice(logFrom).join('\n');
    expect(log.length).toBeGreaterThan(0);
    for (const [where, text] of Object.entries({ answers: answers.join('\n'), log })) {
      expect(text.includes(service.apiKey), where).toBe(false);
      expect(text.includes(CANARY), where).toBe(false);
    }
  });
});

describe('no 500 answers HTML', () => {
  it('answers the JSON error body even when describing the error fails', async () => {
    const app = express();
    app.get('/boom', (_req, _res, next) => {
      // An error that breaks whoever inspects it: the responder's own work fails.
      const hostile = new Error('hostile');
      Object.defineProperty(hostile, 'status', {
        get() {
          throw new RangeError('Maximum call stack size exceeded');
        },
      });
      next(hostile);
    });
    app.use(errorResponder(pino({ level: 'silent' })));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/boom`);
      expect(response.status).toBe(500);
      expect(response.headers.get('content-type')).toContain('application/json');
      const text = await response.text();
      expect(JSON.parse(text)).toMatchObject({ success: false, error: { code: 'INTERNAL_ERROR' } });
      expect(text).not.toMatch(/<html|<pre|RangeError|\/work\//i);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('start-up errors never print a secret', () => {
  it('names METRICS_TOKEN and a credential-carrying URL without their values', async () => {
    const bin = fileURLToPath(new URL('../../server/bin/daguerre.js', import.meta.url));
    const failure = await promisify(execFile)(process.execPath, [bin, 'serve'], {
      env: {
        ...process.env,
        METRICS_TOKEN: `${CANARY}`.slice(0, 12),
        OPENAI_BASE_URL: `http:\\\\user:${CANARY}@vm`,
        DATABASE_URL: `mysql://root:${CANARY}@127.0.0.1:1/x`,
        PORT: '0',
      },
      timeout: 60_000,
    }).then(
      () => undefined,
      (error: { stdout: string; stderr: string; code: number }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain('METRICS_TOKEN must be at least 16 characters');
    expect(`${failure?.stdout}${failure?.stderr}`).not.toContain(CANARY.slice(0, 12));
  });
});
