import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeChromiumProfile } from '../../server/src/capture/browser/chromium-launch.js';
import { hashPassword } from '../../server/src/services/passwords.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { launchTestBrowser } from '../helpers/test-browser.js';
import { captureQuery, startTestService, type TestService } from '../helpers/test-service.js';
import { until } from '../helpers/until.js';

const PASSWORD = 'a long enough password for the log';
const SECRET = `sekret-${randomBytes(6).toString('hex')}`;
const PAGE = '<html><body style="margin:0;background:rgb(200,80,40)"><h1>log page</h1></body></html>';

describe('the request log in the dashboard', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  let browser: Browser;
  let profile: string;
  let member: Page;
  let stranger: Page;
  let formulaKey: string;
  const ids: Record<'ok' | 'failed' | 'refused', string> = { ok: '', failed: '', refused: '' };

  const capture = (params: Record<string, string | number | boolean>, apiKey = service.apiKey) =>
    service.get(`/capture?${captureQuery(params)}`, { headers: { 'x-api-key': apiKey } });

  async function signIn(page: Page, email: string): Promise<void> {
    await page.goto(`${service.url}/dashboard/sign-in`, { waitUntil: 'domcontentloaded' });
    await page.type('#email', email);
    await page.type('#password', PASSWORD);
    await Promise.all([
      page.waitForNavigation({ waitUntil: 'domcontentloaded' }),
      page.click('form[action$="/sign-in"] button[type="submit"]'),
    ]);
  }
  const rowIds = (page: Page) => page.$$eval('#log-table tbody tr', (rows) => rows.map((row) => row.getAttribute('data-request-id')));

  beforeAll(async () => {
    fixtures = await new FixtureServer()
      .route('/page', (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE))
      .start();
    service = await startTestService({ credits: 100, env: { RATE_LIMIT_MAX: '1000' } });
    const { accounts, apiKeys } = service.runtime;
    const hash = await hashPassword(PASSWORD);
    const user = await accounts.createUser('logreader@example.test', 'Log Reader', hash);
    await accounts.addMember(service.organizationId, user.id);
    // A member of another organization only.
    const other = await accounts.createOrganization(
      'Elsewhere',
      await accounts.createPlan({ name: `elsewhere-${SECRET}`, tier: 'test', creditsPerMonth: 5 }),
    );
    const outsider = await accounts.createUser('outsider@example.test', 'Out Sider', hash);
    await accounts.addMember(other.id, outsider.id);
    // A key whose name a spreadsheet would run as a formula.
    formulaKey = (await apiKeys.create({ organizationId: service.organizationId, name: '=HYPERLINK("http://evil.example","x")' })).key;

    ids.ok = (
      await capture({ url: `${fixtures.url}/page?api_key=${SECRET}`, viewportWidth: 320, viewportHeight: 200 }, formulaKey)
    ).headers.get('x-request-id')!;
    ids.failed = (await capture({ url: `${fixtures.url}/missing`, failOnHttpError: true })).headers.get('x-request-id')!;
    ids.refused = (await capture({ html: PAGE, viewportWidth: 99_999 })).headers.get('x-request-id')!;
    await until(
      async () => ((await service.client.listCaptures({ status: 'refused' })).captures.length > 0 ? true : undefined),
      10_000,
      'the refusal in the log',
    );

    profile = makeChromiumProfile('daguerre-log-profile-');
    browser = await launchTestBrowser(profile);
    member = await (await browser.createBrowserContext()).newPage();
    stranger = await (await browser.createBrowserContext()).newPage();
    for (const page of [member, stranger]) page.setDefaultTimeout(30_000);
    await signIn(member, 'logreader@example.test');
    await signIn(stranger, 'outsider@example.test');
  });

  afterAll(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await service?.stop();
    await fixtures?.stop();
  });

  it('shows every capture newest first, with its outcome, error code and masked target', async () => {
    await member.goto(`${service.url}/dashboard/log`, { waitUntil: 'domcontentloaded' });
    expect(await rowIds(member)).toEqual([ids.refused, ids.failed, ids.ok]);
    const failedRow = await member.$eval(`tr[data-request-id="${ids.failed}"]`, (row) => row.textContent?.replace(/\s+/g, ' ') ?? '');
    expect(failedRow).toContain('Failed');
    expect(failedRow).toContain('TARGET_HTTP_ERROR');
    expect(failedRow).toContain('502');
    const refusedRow = await member.$eval(`tr[data-request-id="${ids.refused}"]`, (row) => row.textContent?.replace(/\s+/g, ' ') ?? '');
    expect(refusedRow).toContain('VALIDATION_ERROR');
    expect(refusedRow).toContain('inline HTML');
    const html = await member.content();
    expect(html).not.toContain(SECRET);
    expect(html).toContain('api_key=[REDACTED]');
  });

  it('filters by outcome and key with the form, and keeps the filters in the CSV link', async () => {
    await member.goto(`${service.url}/dashboard/log`, { waitUntil: 'domcontentloaded' });
    await member.select('#log-status', 'failed');
    await Promise.all([member.waitForNavigation({ waitUntil: 'domcontentloaded' }), member.click('.log-filters button[type="submit"]')]);
    expect(new URL(member.url()).searchParams.get('status')).toBe('failed');
    expect(await rowIds(member)).toEqual([ids.failed]);
    expect(await member.$eval('a[download]', (a) => a.getAttribute('href'))).toContain('status=failed');

    const keys = await service.runtime.apiKeys.list(service.organizationId);
    const formulaKeyId = keys.find((key) => key.name.startsWith('=HYPERLINK'))!.id;
    await member.goto(`${service.url}/dashboard/log?keyId=${formulaKeyId}`, { waitUntil: 'domcontentloaded' });
    expect(await rowIds(member)).toEqual([ids.ok]);
    // Bad filters are named, not a blank page.
    const bad = await member.goto(`${service.url}/dashboard/log?from=last+week`, { waitUntil: 'domcontentloaded' });
    expect(bad!.status()).toBe(400);
    expect(await member.$eval('.alert-error', (el) => el.textContent ?? '')).toContain('from must be an ISO 8601 date');
  });

  it('exports the log as CSV with formulas escaped and no secret', async () => {
    const cookie = (await member.browserContext().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const response = await fetch(`${service.url}/dashboard/log.csv`, { headers: { cookie } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/csv');
    expect(response.headers.get('content-disposition')).toMatch(/attachment; filename="daguerre-request-log-\d{4}-\d{2}-\d{2}\.csv"/);
    const text = await response.text();
    const lines = text.trim().split('\n');
    expect(lines[0]).toBe(
      'createdAt,finishedAt,requestId,keyId,keyName,kind,source,target,format,status,httpStatus,errorCode,credits,durationMs,fileSize,jobId',
    );
    expect(lines).toHaveLength(4);
    expect(lines[1]).toContain(ids.refused);
    const okLine = lines.find((line) => line.includes(ids.ok))!;
    // csv-stringify's escape_formulas: the cell starts with a quote mark, not with "=".
    expect(okLine).toContain(`"'=HYPERLINK(""http://evil.example"",""x"")"`);
    expect(text).not.toContain(SECRET);
    const filtered = await (await fetch(`${service.url}/dashboard/log.csv?status=failed`, { headers: { cookie } })).text();
    expect(filtered.trim().split('\n')).toHaveLength(2);
  });

  it("shows a member of another organization none of this organization's captures", async () => {
    await stranger.goto(`${service.url}/dashboard/log`, { waitUntil: 'domcontentloaded' });
    expect(await stranger.$$('#log-table tbody tr')).toHaveLength(0);
    const cookie = (await stranger.browserContext().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const csv = await (await fetch(`${service.url}/dashboard/log.csv`, { headers: { cookie } })).text();
    expect(csv.trim().split('\n')).toHaveLength(1);
    // Signed out: the sign-in page, never the log.
    const anonymous = await fetch(`${service.url}/dashboard/log.csv`, { redirect: 'manual' });
    expect([302, 303]).toContain(anonymous.status);
    expect(anonymous.headers.get('location')).toContain('/dashboard/sign-in');
  });
});
