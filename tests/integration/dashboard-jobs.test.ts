import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { rmSync } from 'node:fs';
import { type Browser, type BrowserContext, type HTTPResponse, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type BatchData, type DaguerreClient } from '../../client/src/index.js';
import { makeChromiumProfile } from '../../server/src/capture/browser/chromium-launch.js';
import { hashPassword } from '../../server/src/services/passwords.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { decodePng } from '../helpers/images.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { launchTestBrowser } from '../helpers/test-browser.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { until } from '../helpers/until.js';
import { independentlyVerified, type Delivery } from '../helpers/webhooks.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PASSWORD = 'correct horse battery staple';
const MEMBER = 'member@example.test';
const OUTSIDER = 'outsider@example.test';
const TINY = (i: number) => `<body style="margin:0;background:rgb(${i * 40},90,160)"><p>${i}</p></body>`;

/**
 * The dashboard's jobs (docs/dashboard.md), in a real browser signed in as a member: the Jobs page,
 * a page per job (state, error, credits, the file under the session, webhook attempts and "Send
 * again") and per batch (items, Cancel, the batch webhook). Another organization's member gets 404
 * for all of it. Real Redis, Chromium, SQLite; the webhook receiver and the captured pages are
 * loopback servers.
 */
describe('dashboard: jobs, batches and their webhook deliveries', () => {
  let service: TestService;
  let client: DaguerreClient;
  let signingSecret: string;
  let browser: Browser;
  let profile: string;
  let member: Page;
  let outsider: Page;
  const contexts: BrowserContext[] = [];
  const fixtures = new FixtureServer();
  const prefix = `rs-test-dash-jobs-${randomBytes(4).toString('hex')}`;
  const hooks: Delivery[] = [];
  /** What the webhook receiver answers: 500 until the test fixes it. */
  let hookStatus = 500;
  /** Answers of /hold: a capture stays active until the test releases it. */
  const held: ServerResponse[] = [];
  const consoleErrors: string[] = [];

  let okJob: string;
  let failedJob: string;
  let batch: BatchData;

  const base = () => `${service.url}/dashboard`;
  const text = (page: Page, selector: string) => page.$eval(selector, (el) => el.textContent?.replace(/\s+/g, ' ').trim() ?? '');
  const field = (page: Page, name: string) => text(page, `[data-field="${name}"] dd`);
  const hooksOf = (eventId: string) => hooks.filter((hook) => hook.headers['webhook-id'] === eventId);
  const release = () => {
    for (const response of held.splice(0))
      if (!response.destroyed) response.writeHead(200, { 'content-type': 'text/html' }).end('<p>late</p>');
  };

  async function navigateBy(page: Page, selector: string): Promise<HTTPResponse | null> {
    const [response] = await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click(selector)]);
    return response;
  }

  async function signedIn(email: string): Promise<Page> {
    const context = await browser.createBrowserContext();
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 404/.test(message.text())) consoleErrors.push(message.text());
    });
    await page.goto(`${base()}/sign-in`, { waitUntil: 'domcontentloaded' });
    await page.type('#email', email);
    await page.type('#password', PASSWORD);
    await navigateBy(page, 'form[action$="/sign-in"] button[type="submit"]');
    expect(new URL(page.url()).pathname).toBe('/dashboard/usage');
    return page;
  }

  /** A POST as the page's own form would send it (its session and CSRF token), answered without following redirects. */
  const postFrom = (page: Page, path: string) =>
    page.evaluate(async (url) => {
      const csrf = (document.querySelector('input[name="_csrf"]') as HTMLInputElement).value;
      const response = await fetch(url, { method: 'POST', body: new URLSearchParams({ _csrf: csrf }), redirect: 'manual' });
      return response.status;
    }, path);

  /** The page scrolls sideways when its document is wider than the window. */
  const scrollsSideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);

  beforeAll(async () => {
    fixtures
      .route('/hook', (req, res) => {
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (chunk: string) => (body += chunk));
        req.on('end', () => {
          hooks.push({ headers: req.headers, body });
          res.writeHead(hookStatus).end();
        });
      })
      .route('/hold', (_req, res) => void held.push(res))
      .route('/missing', (_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not here</h1>'));
    await fixtures.start();
    // A minute between webhook retries: the first failed attempt's retry is still ahead while the test looks.
    // A held page is never given up on while the test runs (a capture's deadline would end it in 20 s).
    service = await startTestService({
      credits: 100,
      env: {
        REDIS_URL,
        JOB_QUEUE_PREFIX: prefix,
        CAPTURE_WORKERS: '1',
        CAPTURE_TIMEOUT_MS: '300000',
        WEBHOOK_RETRY_BASE_MS: '60000',
        WEBHOOK_TIMEOUT_MS: '3000',
        RATE_LIMIT_MAX: '1000',
      },
    });
    const { accounts, apiKeys } = service.runtime;
    const hash = await hashPassword(PASSWORD);
    await accounts.addMember(service.organizationId, (await accounts.createUser(MEMBER, 'Mona Member', hash)).id);
    const otherOrganization = await accounts.createOrganization(
      'Other org',
      await accounts.createPlan({ name: `other-${prefix}`, tier: 'test', creditsPerMonth: 10 }),
    );
    await accounts.addMember(otherOrganization.id, (await accounts.createUser(OUTSIDER, 'Otto Outsider', hash)).id);
    const key = await apiKeys.create({ organizationId: service.organizationId, name: 'Jobs key' });
    signingSecret = key.signingSecret;
    client = createClient({ baseUrl: service.url, apiKey: key.key });

    // Real jobs: one that succeeds (its webhook refused at first), one whose target answers 404.
    okJob = (await client.captureAsync({ html: TINY(1), viewportWidth: 200, viewportHeight: 120, webhookUrl: `${fixtures.url}/hook` }))
      .jobId;
    await client.waitForCapture(okJob, { intervalMs: 100, timeoutMs: 60_000 });
    failedJob = (
      await client.captureAsync({ url: `${fixtures.url}/missing`, failOnHttpError: true, viewportWidth: 200, viewportHeight: 120 })
    ).jobId;
    await client.waitForCapture(failedJob, { intervalMs: 100, timeoutMs: 60_000 });
    // The first attempt on record, and its retry a minute ahead.
    await until(
      async () => ((await service.runtime.db.knex('webhook_attempts').where('event_id', `msg_${okJob}`).first()) ? true : undefined),
      20_000,
      'the first webhook attempt on record',
    );
    // A batch that stays open: its first item renders, the second waits on a held page, the third behind it.
    batch = await client.captureBulk({
      defaults: { viewportWidth: 120, viewportHeight: 100 },
      requests: [{ html: TINY(2) }, { url: `${fixtures.url}/hold` }, { html: TINY(3) }],
      webhookUrl: `${fixtures.url}/hook`,
    });
    // One worker takes the items in order: the held page asked for means the first item has ended.
    await fixtures.waitForRequest('/hold', 60_000);

    profile = makeChromiumProfile('daguerre-dashboard-jobs-');
    browser = await launchTestBrowser(profile);
    member = await signedIn(MEMBER);
    outsider = await signedIn(OUTSIDER);
  });

  afterAll(async () => {
    release();
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await service?.stop();
    await fixtures.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  it('lists the latest jobs, newest first, each linking to its page; batch items link to their batch', async () => {
    await member.goto(`${base()}/jobs`, { waitUntil: 'domcontentloaded' });
    expect(await text(member, 'h1')).toBe('Jobs');
    expect(await member.$eval('nav a[aria-current="page"]', (a) => a.getAttribute('href'))).toBe('/dashboard/jobs');
    const ids = await member.$$eval('#jobs-table tbody tr', (rows) => rows.map((row) => row.getAttribute('data-job-id')));
    expect(ids.indexOf(failedJob)).toBeLessThan(ids.indexOf(okJob));
    expect(ids).toEqual(expect.arrayContaining(batch.items.map((item) => item.jobId)));
    const itemRow = `#jobs-table tr[data-job-id="${batch.items[0]!.jobId}"]`;
    expect(await member.$eval(`${itemRow} td[data-label="Batch"] a`, (a) => a.getAttribute('href'))).toBe(
      `/dashboard/batches/${batch.batchId}`,
    );
    expect(await text(member, `#jobs-table tr[data-job-id="${failedJob}"] td[data-label="Status"]`)).toBe('failed');
    await navigateBy(member, `#jobs-table tr[data-job-id="${okJob}"] td[data-label="Job"] a`);
    expect(new URL(member.url()).pathname).toBe(`/dashboard/jobs/${okJob}`);
  });

  it("a job's page shows its status, format, target, credits and a file link that serves the file under the session", async () => {
    await member.goto(`${base()}/jobs/${okJob}`, { waitUntil: 'domcontentloaded' });
    const job = await client.getCapture(okJob);
    expect(await field(member, 'status')).toBe('succeeded');
    expect(await field(member, 'format')).toBe('png');
    expect(await field(member, 'target')).toMatch(/^Inline HTML \(\d+ B\)$/);
    expect(await field(member, 'key')).toBe('Jobs key');
    expect(await field(member, 'credits')).toMatch(/^1 charged$/);
    expect(await member.$(`[data-field="error"]`)).toBeNull();
    expect(await member.$('form[action$="/cancel"]')).toBeNull();
    const link = await member.$eval('[data-field="file"] a', (a) => ({ href: a.getAttribute('href'), text: a.textContent }));
    expect(link).toEqual({ href: `/dashboard/jobs/${okJob}/file`, text: job.result!.fileName });

    const file = await member.goto(`${service.url}${link.href}`, { waitUntil: 'load' });
    expect(file?.status()).toBe(200);
    expect(file?.headers()['content-type']).toBe('image/png');
    const png = decodePng(await file!.buffer());
    expect([png.width, png.height]).toEqual([200, 120]);
    // Without the session, the file is not served.
    const anonymous = await fetch(`${service.url}${link.href}`, { redirect: 'manual' });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toContain('/dashboard/sign-in');
  });

  it("a failed job's page shows its error code and message and that nothing was charged", async () => {
    await member.goto(`${base()}/jobs/${failedJob}`, { waitUntil: 'domcontentloaded' });
    expect(await field(member, 'status')).toBe('failed');
    expect(await field(member, 'error')).toMatch(/^TARGET_HTTP_ERROR .*404.*nothing was charged/);
    expect(await field(member, 'credits')).toMatch(/^0 /);
    expect(await field(member, 'file')).toBe('none');
    expect(await text(member, '.webhook-events')).toContain('No webhook');
  });

  it('shows each webhook attempt (time, response status, duration, next retry), and “Send again” re-delivers the event under its webhook-id', async () => {
    const eventId = `msg_${okJob}`;
    await member.goto(`${base()}/jobs/${okJob}`, { waitUntil: 'domcontentloaded' });
    const event = `[data-event-id="${eventId}"]`;
    expect(await text(member, `${event} .webhook-event-title`)).toMatch(/^capture\.succeeded retrying queued /);
    const first = `${event} tr.webhook-attempt[data-attempt="1"]`;
    expect(await text(member, `${first} td[data-label="Response"]`)).toBe('500');
    expect(await text(member, `${first} td[data-label="Error"]`)).toBe('the receiver answered 500');
    expect(await text(member, `${first} td[data-label="Duration"]`)).toMatch(/^\d+ ms$|^\d+\.\d+ s$/);
    const retry = await member.$eval(`${first} td[data-label="Next retry"] time`, (el) => el.getAttribute('datetime'));
    const attempted = await member.$eval(`${first} td[data-label="Time"] time`, (el) => el.getAttribute('datetime'));
    expect(Date.parse(retry!) - Date.parse(attempted!)).toBeGreaterThanOrEqual(60_000);

    hookStatus = 204;
    const response = await navigateBy(member, `${event} form[action$="/redeliver"] button`);
    expect(response?.status()).toBe(200);
    expect(new URL(member.url()).pathname).toBe(`/dashboard/jobs/${okJob}`);
    expect(await text(member, '.alert-success')).toContain('Sent again');

    const [original, resent] = await until(() => (hooksOf(eventId).length >= 2 ? hooksOf(eventId) : undefined), 20_000, 'the resend');
    expect(resent!.body).toBe(original!.body);
    expect(independentlyVerified(signingSecret, resent!)).toBe(true);
    // Its attempt appears on the page once made.
    await until(
      async () => {
        await member.reload({ waitUntil: 'domcontentloaded' });
        return (await member.$$(`${event} tr.webhook-attempt`)).length === 2 ? true : undefined;
      },
      20_000,
      'the resend on the page',
    );
    const again = `${event} tr.webhook-attempt[data-resend="true"]`;
    expect(await text(member, `${again} td[data-label="Attempt"]`)).toBe('#1 (sent again)');
    expect(await text(member, `${again} td[data-label="Response"]`)).toBe('204');
    expect(await text(member, `${again} td[data-label="Next retry"]`)).toBe('none');
    expect(await text(member, `${event} .webhook-event-title`)).toMatch(/^capture\.succeeded delivered /);
  });

  it('a batch page lists its items with status, job link, file and credits; Cancel ends the rest, charging nothing', async () => {
    hookStatus = 204;
    await member.goto(`${base()}/batches`, { waitUntil: 'domcontentloaded' });
    await navigateBy(member, `#batches-table tr[data-batch-id="${batch.batchId}"] a`);
    expect(new URL(member.url()).pathname).toBe(`/dashboard/batches/${batch.batchId}`);
    const item = (index: number, label: string) => text(member, `#batch-items tr[data-index="${index}"] td[data-label="${label}"]`);
    expect(await field(member, 'status')).toBe('running');
    expect([await item(0, 'Status'), await item(1, 'Status'), await item(2, 'Status')]).toEqual(['succeeded', 'active', 'queued']);
    expect([await item(0, 'Credits'), await item(1, 'Credits'), await item(2, 'Credits')]).toEqual(['1', '0', '0']);
    expect(await member.$eval('#batch-items tr[data-index="1"] td[data-label="Job"] a', (a) => a.getAttribute('href'))).toBe(
      `/dashboard/jobs/${batch.items[1]!.jobId}`,
    );
    const fileHref = await member.$eval('#batch-items tr[data-index="0"] td[data-label="File"] a', (a) => a.getAttribute('href'));
    expect(fileHref).toBe(`/dashboard/jobs/${batch.items[0]!.jobId}/file`);
    expect(await member.$('#batch-items tr[data-index="1"] td[data-label="File"] a')).toBeNull();
    expect(await text(member, '.webhook-events')).toContain('No event yet');

    const response = await navigateBy(member, 'form[action$="/cancel"] button');
    expect(response?.status()).toBe(200);
    expect(await text(member, '.alert-success')).toContain('Batch cancelled');
    expect(await field(member, 'status')).toBe('cancelled');
    expect([await item(0, 'Status'), await item(1, 'Status'), await item(2, 'Status')]).toEqual(['succeeded', 'cancelled', 'cancelled']);
    expect(await item(2, 'Error')).toMatch(/^CANCELLED .*nothing was charged/);
    expect(await member.$('form[action$="/cancel"]')).toBeNull();
    release();
    const after = await client.getBatch(batch.batchId);
    expect(after).toMatchObject({ status: 'cancelled', creditsCharged: 1, counts: { succeeded: 1, cancelled: 2 } });

    // The batch webhook reports the cancel and is on the page with its attempt.
    await until(() => hooksOf(`msg_batch_${batch.batchId}`)[0], 20_000, 'the batch.cancelled webhook');
    await until(
      async () => {
        await member.reload({ waitUntil: 'domcontentloaded' });
        return (await member.$$('.webhook-events tr.webhook-attempt')).length === 1 ? true : undefined;
      },
      20_000,
      'the batch webhook on the page',
    );
    expect(await text(member, '.webhook-event-title')).toMatch(/^batch\.cancelled delivered /);
  });

  it('fits a phone: the job and batch pages do not scroll sideways at 375 px, and their tables stack', async () => {
    await member.setViewport({ width: 375, height: 800 });
    try {
      for (const path of [`/jobs`, `/jobs/${okJob}`, `/jobs/${failedJob}`, `/batches/${batch.batchId}`]) {
        await member.goto(`${base()}${path}`, { waitUntil: 'load' });
        expect(await scrollsSideways(member), path).toBe(false);
      }
      // Each cell says what it holds, as the column heading is out of sight.
      const label = await member.$eval('#batch-items td[data-label="Status"]', (td) => getComputedStyle(td, '::before').content);
      expect(label).toBe('"Status"');
    } finally {
      await member.setViewport({ width: 1280, height: 900 });
    }
    expect(consoleErrors).toEqual([]);
  });

  it("another organization's member gets 404 for the job, its file, the batch, Cancel and Send again", async () => {
    for (const path of [`/jobs/${okJob}`, `/jobs/${okJob}/file`, `/batches/${batch.batchId}`, '/jobs/not-a-job']) {
      const response = await outsider.goto(`${base()}${path}`, { waitUntil: 'domcontentloaded' });
      expect(response?.status(), path).toBe(404);
    }
    await outsider.goto(`${base()}/jobs`, { waitUntil: 'domcontentloaded' });
    expect(await outsider.$$('#jobs-table tbody tr')).toHaveLength(0);
    const before = hooksOf(`msg_${okJob}`).length;
    expect(await postFrom(outsider, `/dashboard/webhook-events/msg_${okJob}/redeliver`)).toBe(404);
    expect(await postFrom(outsider, `/dashboard/jobs/${okJob}/cancel`)).toBe(404);
    expect(await postFrom(outsider, `/dashboard/batches/${batch.batchId}/cancel`)).toBe(404);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(hooksOf(`msg_${okJob}`)).toHaveLength(before);
  });
});
