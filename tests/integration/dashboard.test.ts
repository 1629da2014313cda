import { createHash, createHmac, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { makeChromiumProfile } from '../../server/src/capture/browser/chromium-launch.js';
import { type Browser, type BrowserContext, type HTTPResponse, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../server/src/services/passwords.js';
import { decodePng } from '../helpers/images.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { launchTestBrowser } from '../helpers/test-browser.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const PASSWORD = 'correct horse battery staple';
const OWNER = 'owner@example.test';
const FORMER = 'former@example.test';
const MULTI = 'multi@example.test';
const PAGE_HTML = '<html><body style="margin:0;background:rgb(30,120,200)"><h1>Dashboard test</h1></body></html>';

describe('the dashboard in a real browser', () => {
  let service: TestService;
  let s3: TestS3;
  let browser: Browser;
  let profile: string;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let ownerId: string;
  /** Console errors of the dashboard pages (a CSP violation would show up here). */
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    s3 = await startS3();
    service = await startTestService({ credits: 50, env: { STORAGE_ENCRYPTION_KEY: randomBytes(32).toString('base64') } });
    base = `${service.url}/dashboard`;
    const { accounts } = service.runtime;
    const hash = await hashPassword(PASSWORD);
    ownerId = (await accounts.createUser(OWNER, 'Olivia Owner', hash)).id;
    await accounts.addMember(service.organizationId, ownerId, 'owner');
    const former = await accounts.createUser(FORMER, 'Fred Former', hash);
    await accounts.addMember(service.organizationId, former.id);
    await accounts.setMembershipActive(service.organizationId, former.id, false);
    // A member of two organizations whose older membership is inactive: the active one is chosen.
    const multi = await accounts.createUser(MULTI, 'Mia Multi', hash);
    const plan = await accounts.createPlan({ name: `second-${Date.now()}`, tier: 'test', creditsPerMonth: 10 });
    const second = await accounts.createOrganization('Second Org', plan);
    await accounts.addMember(service.organizationId, multi.id);
    await accounts.setMembershipActive(service.organizationId, multi.id, false);
    await accounts.addMember(second.id, multi.id);

    profile = makeChromiumProfile('daguerre-dashboard-profile-');
    browser = await launchTestBrowser(profile);
    context = await browser.createBrowserContext();
    page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of (401|403|422)/.test(message.text())) consoleErrors.push(message.text());
    });
    page.setDefaultTimeout(30_000);
    page.setDefaultNavigationTimeout(30_000);
  });

  afterAll(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await service?.stop();
    await s3?.stop();
  });

  /** Clicks something that submits a form or follows a link, and waits for the next page. */
  async function navigateBy(target: Page, selector: string): Promise<HTTPResponse | null> {
    const [response] = await Promise.all([target.waitForNavigation({ waitUntil: 'domcontentloaded' }), target.click(selector)]);
    return response;
  }

  async function signIn(target: Page, email: string, password: string): Promise<HTTPResponse | null> {
    await target.goto(`${base}/sign-in`, { waitUntil: 'domcontentloaded' });
    await target.type('#email', email);
    await target.type('#password', password);
    return navigateBy(target, 'form[action$="/sign-in"] button[type="submit"]');
  }

  const text = (target: Page, selector: string) => target.$eval(selector, (el) => el.textContent?.replace(/\s+/g, ' ').trim() ?? '');
  const sessionCookie = async (target: Page) => (await target.browserContext().cookies()).find((c) => c.name === 'daguerre_session');
  const cookieHeader = async (target: Page) => (await target.browserContext().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
  const capture = (key: string) =>
    fetch(`${service.url}/capture?${new URLSearchParams({ html: PAGE_HTML, viewportWidth: '320', viewportHeight: '200' })}`, {
      headers: { 'x-api-key': key },
    });
  const stat = async (name: string) => Number((await text(page, `[data-stat="${name}"]`)).replace(/[^\d]/g, ''));

  it('sends visitors to the sign-in page and refuses a wrong password in place', async () => {
    await page.goto(`${base}/keys`, { waitUntil: 'domcontentloaded' });
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    expect(new URL(page.url()).searchParams.get('next')).toBe('/dashboard/keys');

    const response = await signIn(page, OWNER, 'not the password');
    expect(response?.status()).toBe(401);
    expect(await text(page, '.alert-error')).toContain('Incorrect email or password.');
    expect(await page.$eval('#email', (el) => (el as HTMLInputElement).value)).toBe(OWNER);
    expect(await sessionCookie(page)).toBeUndefined();

    const unknown = await signIn(page, 'nobody@example.test', PASSWORD);
    expect(unknown?.status()).toBe(401);
    expect(await text(page, '.alert-error')).toContain('Incorrect email or password.');
  });

  it('signs in with an HttpOnly, SameSite=Lax cookie whose token is stored only as a hash', async () => {
    const response = await signIn(page, OWNER, PASSWORD);
    expect(response?.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/dashboard/usage');
    expect(await text(page, 'h1')).toBe('Usage');
    expect(await text(page, '.user-email')).toBe(OWNER);

    const cookie = (await sessionCookie(page))!;
    expect(cookie.httpOnly).toBe(true);
    expect(cookie.sameSite).toBe('Lax');
    expect(cookie.secure).toBe(false); // plain http here; Secure over https is checked in dashboard-session.test.ts
    expect(cookie.path).toBe('/dashboard');
    expect(await page.evaluate(() => document.cookie)).not.toContain('daguerre_session');

    const rows = await service.runtime.db.knex('dashboard_sessions').where('user_id', ownerId);
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).toBe(createHash('sha256').update(cookie.value).digest('hex'));
    expect(JSON.stringify(rows)).not.toContain(cookie.value);
  });

  let createdKey = '';

  it('creates a key, shows its value once with a copy button, and never again', async () => {
    await page.goto(`${base}/keys`, { waitUntil: 'domcontentloaded' });
    await page.type('#key-name', 'Browser test key');
    const response = await navigateBy(page, 'form[action$="/keys"] button[type="submit"]');
    expect(response?.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/dashboard/keys');

    createdKey = await page.$eval('#new-key-value', (el) => (el as HTMLInputElement).value);
    expect(createdKey).toMatch(/^rs_[\w-]{43}$/);
    expect(await page.$('[data-copy="#new-key-value"]')).not.toBeNull();
    const row = await page.$eval('#keys-table tbody', (tbody) =>
      [...tbody.querySelectorAll('tr')]
        .map((tr) => tr.textContent!.replace(/\s+/g, ' ').trim())
        .find((t) => t.includes('Browser test key')),
    );
    expect(row).toContain(`${createdKey.slice(0, 10)}…`);
    expect(row).toContain('Active');
    expect(row).toContain('Never'); // no expiry, never used

    await page.reload({ waitUntil: 'domcontentloaded' });
    expect(await page.$('[data-testid="new-key"]')).toBeNull();
    expect(await page.content()).not.toContain(createdKey);
    // The sealed flash is gone from the session row, and nothing holds the key in clear.
    const rows = await service.runtime.db.knex('dashboard_sessions').where('user_id', ownerId);
    expect(rows.every((r) => r.flash === null)).toBe(true);
    const keyRow = await service.runtime.db.knex('api_keys').where('name', 'Browser test key').first();
    expect(keyRow.key_hash).toBe(createHash('sha256').update(createdKey).digest('hex'));
    expect(keyRow.user_id).toBe(ownerId);
  });

  it('escapes what users type, and explains a refused expiry date in place', async () => {
    await page.type('#key-name', '<img src=x onerror="window.__pwned=1">');
    await page.$eval('#key-expires', (el) => ((el as HTMLInputElement).value = '2001-01-01'));
    const response = await navigateBy(page, 'form[action$="/keys"] button[type="submit"]');
    expect(response?.status()).toBe(422);
    expect(await text(page, '#key-expires-error')).toContain('must be in the future');
    expect(await page.$eval('#key-name', (el) => (el as HTMLInputElement).value)).toBe('<img src=x onerror="window.__pwned=1">');

    await page.$eval(
      '#key-expires',
      (el) => ((el as HTMLInputElement).value = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10)),
    );
    await navigateBy(page, 'form[action$="/keys"] button[type="submit"]');
    expect(await page.$('#keys-table img')).toBeNull();
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await text(page, '#keys-table')).toContain('<img src=x onerror="window.__pwned=1">');
  });

  it('the new key captures (200 PNG) and the usage page shows the capture', async () => {
    await page.goto(`${base}/usage`, { waitUntil: 'domcontentloaded' });
    const usedBefore = await stat('used');
    const remainingBefore = await stat('remaining');
    expect(remainingBefore).toBe(50);
    expect(await stat('allocation')).toBe(50);
    expect(await text(page, '[data-stat="rate-limit"]')).toBe('40 / minute');
    expect(await text(page, '.page-heading')).toMatch(
      /Current billing period: .+ – .+ · 3[01] days left|Current billing period: .+ – .+ · 2[89] days left/,
    );

    const response = await capture(createdKey);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
    expect(decodePng(new Uint8Array(await response.arrayBuffer())).width).toBe(320);

    await page.reload({ waitUntil: 'domcontentloaded' });
    expect(await stat('used')).toBe(usedBefore + 1);
    expect(await stat('remaining')).toBe(remainingBefore - 1);
    expect(await text(page, '[data-stat="captures"]')).toContain('1 capture');
    const latest = await page.$eval('#captures-table tbody tr', (tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim()));
    expect(latest[1]).toBe('PNG');
    expect(latest[2]).toContain('Succeeded');
    expect(latest[4]).toMatch(/KB|B$/);
    expect(latest[5]).toBe('1');
    expect(latest[7]).toBe('Browser test key');
    expect(await page.$$('svg.chart .today rect.bar-ok')).toHaveLength(1);
  });

  it('revokes a key after a confirmation step; the key then gets 401', async () => {
    await page.goto(`${base}/keys`, { waitUntil: 'domcontentloaded' });
    const keyId = await page.$eval('#keys-table tbody', (tbody) =>
      [...tbody.querySelectorAll('tr')].find((tr) => tr.textContent!.includes('Browser test key'))!.getAttribute('data-key-id'),
    );
    await navigateBy(page, `tr[data-key-id="${keyId}"] a[href$="/revoke"]`);
    expect(new URL(page.url()).pathname).toBe(`/dashboard/keys/${keyId}/revoke`);
    expect(await text(page, '#revoke-title')).toBe('Revoke “Browser test key”?');
    // Only the confirmation revokes.
    expect((await service.runtime.db.knex('api_keys').where('id', keyId!).first()).revoked_at).toBeNull();

    await navigateBy(page, '.confirm-card button[type="submit"]');
    expect(new URL(page.url()).pathname).toBe('/dashboard/keys');
    expect(await text(page, '.alert-success')).toContain('revoked');
    expect(await text(page, `tr[data-key-id="${keyId}"]`)).toContain('Revoked');
    expect(await page.$(`tr[data-key-id="${keyId}"] a[href$="/revoke"]`)).toBeNull();

    const refused = await capture(createdKey);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('INVALID_API_KEY');
  });

  it(
    'storage: saves a configuration without sending the secret back, tests it against S3 (pass and fail)',
    { timeout: 120_000 },
    async () => {
      await page.goto(`${base}/storage`, { waitUntil: 'domcontentloaded' });
      expect(await text(page, '.empty-title')).toBe('No storage configured');

      const fill = async (values: Record<string, string>) => {
        for (const [id, value] of Object.entries(values)) {
          await page.$eval(`#${id}`, (el) => ((el as HTMLInputElement).value = ''));
          if (value) await page.type(`#${id}`, value);
        }
      };
      await navigateBy(page, '.page-actions a[href$="/storage/new"]');
      await fill({
        name: 'Test bucket',
        endpoint: s3.endpoint,
        bucket: s3.bucket,
        region: 'us-east-1',
        accessKeyId: s3.accessKeyId,
        secretAccessKey: s3.secretAccessKey,
      });
      await navigateBy(page, 'form[action$="/storage"] button[type="submit"]');
      expect(new URL(page.url()).pathname).toBe('/dashboard/storage');
      expect(await page.content()).not.toContain(s3.secretAccessKey);
      const good = await page.$eval('.storage-card', (el) => el.getAttribute('data-config-id')!);
      expect(await text(page, `[data-config-id="${good}"] .storage-card-header`)).toContain('Default'); // the first one is the default

      // Passing test: a probe object is written and deleted again.
      await navigateBy(page, `[data-config-id="${good}"] form[action$="/test"] button`);
      expect(await text(page, `[data-config-id="${good}"] .test-result`)).toMatch(
        /^Connection works: Daguerre wrote a test object to “captures” and deleted it again \(\d+ ms\)\.$/,
      );
      expect(await s3.listKeys()).toEqual([]);

      // A second configuration with a wrong secret fails, and the page shows why, verbatim.
      await page.goto(`${base}/storage/new`, { waitUntil: 'domcontentloaded' });
      await fill({
        name: 'Wrong secret',
        endpoint: s3.endpoint,
        bucket: s3.bucket,
        region: 'us-east-1',
        accessKeyId: s3.accessKeyId,
        secretAccessKey: 'not-the-secret',
      });
      await navigateBy(page, 'form[action$="/storage"] button[type="submit"]');
      const badId = await page.$$eval('.storage-card', (cards) => cards[cards.length - 1]!.getAttribute('data-config-id')!);
      expect(badId).not.toBe(good);
      await navigateBy(page, `[data-config-id="${badId}"] form[action$="/test"] button`);
      expect(await text(page, `[data-config-id="${badId}"] .test-result .alert-error`)).toBe(
        'Connection test failed: SignatureDoesNotMatch, the secret access key does not match the access key id (storage configuration "Wrong secret")',
      );

      // Exactly one default: making the second one the default takes the flag from the first.
      await navigateBy(page, `[data-config-id="${badId}"] form[action$="/default"] button`);
      expect(await page.$$eval('.storage-card .badge-accent', (badges) => badges.length)).toBe(1);
      expect(await text(page, `[data-config-id="${badId}"] .storage-card-header`)).toContain('Default');
      const defaults = await service.runtime.db
        .knex('storage_configs')
        .where({ organization_id: service.organizationId, is_default: true });
      expect(defaults.map((row) => row.id)).toEqual([badId]);

      // Editing with the secret left blank keeps the stored secret: the test still passes after a rename.
      await navigateBy(page, `[data-config-id="${good}"] a[href$="/edit"]`);
      expect(await page.$eval('#secretAccessKey', (el) => (el as HTMLInputElement).value)).toBe('');
      expect(await page.content()).not.toContain(s3.secretAccessKey);
      await fill({ name: 'Renamed bucket' });
      await navigateBy(page, `form[action$="/storage/${good}"] button[type="submit"]`);
      expect(await text(page, `[data-config-id="${good}"] h3`)).toBe('Renamed bucket');
      await navigateBy(page, `[data-config-id="${good}"] form[action$="/test"] button`);
      expect(await text(page, `[data-config-id="${good}"] .test-result`)).toContain('Connection works');

      // Delete after confirming.
      await navigateBy(page, `[data-config-id="${badId}"] a[href$="/delete"]`);
      expect(await text(page, '#delete-title')).toBe('Delete “Wrong secret”?');
      await navigateBy(page, '.confirm-card button[type="submit"]');
      expect(await page.$(`[data-config-id="${badId}"]`)).toBeNull();
      expect(await page.$$('.storage-card')).toHaveLength(1);
    },
  );

  it('refuses a POST without the CSRF token (403) and changes nothing', async () => {
    const cookie = await cookieHeader(page);
    const keysBefore = (await service.runtime.apiKeys.list(service.organizationId)).length;
    const post = (body: Record<string, string>) =>
      fetch(`${base}/keys`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(body),
      });
    const withoutToken = await post({ name: 'forged' });
    expect(withoutToken.status).toBe(403);
    expect(await withoutToken.text()).toContain('This form has expired');
    expect((await post({ name: 'forged', _csrf: 'x'.repeat(43) })).status).toBe(403);
    const signOut = await fetch(`${base}/sign-out`, { method: 'POST', redirect: 'manual', headers: { cookie } });
    expect(signOut.status).toBe(403);
    expect((await service.runtime.apiKeys.list(service.organizationId)).length).toBe(keysBefore);

    // With the token from the page, the same session may post.
    const token = await page.$eval('input[name="_csrf"]', (el) => (el as HTMLInputElement).value);
    expect((await post({ name: 'with token', _csrf: token })).status).toBe(303);
    // The new key's one-time display waits for the keys page: another page loaded meanwhile does not take it.
    expect(await (await fetch(`${base}/usage`, { headers: { cookie } })).text()).not.toContain('new-key-value');
    const keysPage = await (await fetch(`${base}/keys`, { headers: { cookie } })).text();
    expect(keysPage).toMatch(/id="new-key-value"[^>]*value="rs_[\w-]{43}"/);
    expect(await (await fetch(`${base}/keys`, { headers: { cookie } })).text()).not.toContain('new-key-value');
    // The sign-in form has its own double-submit token.
    const signIn = await fetch(`${base}/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: OWNER, password: PASSWORD }),
    });
    expect(signIn.status).toBe(403);
    expect(signIn.headers.getSetCookie().some((c) => c.startsWith('daguerre_session='))).toBe(false);
  });

  it('playground: captures with a pasted key kept in sessionStorage and shows curl and TypeScript', async () => {
    const key = (await service.runtime.apiKeys.create({ organizationId: service.organizationId, userId: ownerId, name: 'Playground key' }))
      .key;
    await page.goto(`${base}/playground`, { waitUntil: 'domcontentloaded' });
    await page.type('#pg-key', key);
    await page.click('label[for="pg-source-html"]');
    await page.$eval('#pg-html', (el) => ((el as HTMLTextAreaElement).value = ''));
    await page.type('#pg-html', '<h1 style="color:rgb(200,0,0)">Playground</h1>');
    await page.type('#viewportWidth', '480');
    await page.type('#viewportHeight', '320');
    await page.click('#pg-submit');
    await page.waitForSelector('#pg-result img, #pg-result .alert', { timeout: 45_000 });
    expect(await page.$eval('#pg-result', (el) => el.textContent!.trim())).toBe('OpenDownload');
    const size = await page.$eval('#pg-result img', async (img) => {
      const image = img as HTMLImageElement;
      if (!image.complete) await new Promise((resolve) => image.addEventListener('load', resolve, { once: true }));
      return [image.naturalWidth, image.naturalHeight];
    });
    expect(size).toEqual([480, 320]);
    expect(await text(page, '#pg-status')).toMatch(/^200 OK · /);
    expect(await page.evaluate(() => sessionStorage.getItem('daguerre.playground.apiKey'))).toBe(key);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);

    const curl = await text(page, '#pg-curl');
    expect(curl).toContain(`curl -G '${service.url}/capture'`);
    expect(curl).toContain('-H "X-API-Key: $DAGUERRE_API_KEY"');
    expect(curl).toContain(`--data-urlencode 'html=<h1 style="color:rgb(200,0,0)">Playground</h1>'`);
    expect(curl).toContain('-d viewportWidth=480');
    expect(curl).not.toContain(key);
    const ts = await page.$eval('#pg-ts', (el) => el.textContent!);
    expect(ts).toContain("import { createClient } from '@daguerre/client';");
    expect(ts).toContain('  viewportWidth: 480,');
    expect(ts).toContain('apiKey: process.env.DAGUERRE_API_KEY!');

    // An API error is shown in place.
    await page.$eval('#pg-key', (el) => ((el as HTMLInputElement).value = 'rs_unknown'));
    await page.click('#pg-submit');
    await page.waitForSelector('#pg-result .alert-error');
    expect(await text(page, '#pg-result .alert-error')).toContain('401 INVALID_API_KEY. Invalid API key');
  });

  it('playground: shows the quality report and the metadata beside the result, and markdown as text', async () => {
    const key = (await service.runtime.apiKeys.create({ organizationId: service.organizationId, userId: ownerId, name: 'Insight key' }))
      .key;
    await page.goto(`${base}/playground`, { waitUntil: 'domcontentloaded' });
    await page.$eval('#pg-key', (el) => ((el as HTMLInputElement).value = ''));
    await page.type('#pg-key', key);
    await page.click('label[for="pg-source-html"]');
    await page.click('#metadata');
    await page.$eval('#pg-html', (el) => ((el as HTMLTextAreaElement).value = ''));
    // The title is markup on purpose: it must come out as text.
    await page.type(
      '#pg-html',
      '<html lang="sv"><title>&lt;b&gt;Insight&lt;/b&gt;</title><h1>Insight</h1><img src="/missing.png" width="50" height="50" alt="x"></html>',
    );
    await page.type('#viewportWidth', '480');
    await page.type('#viewportHeight', '320');
    await page.click('#pg-submit');
    await page.waitForSelector('#pg-insight dl', { timeout: 45_000 });
    expect(await text(page, '#pg-quality')).toBe('Quality: warn');
    expect(await text(page, '#pg-insight .pg-findings')).toContain('imagesNotLoaded: 1 image in the viewport had no picture');
    const terms = await page.$$eval('#pg-insight dt', (dts) => dts.map((dt) => [dt.textContent, dt.nextElementSibling!.textContent]));
    expect(terms).toContainEqual(['Title', '<b>Insight</b>']);
    expect(terms).toContainEqual(['Language', 'sv']);
    expect(await page.$$eval('#pg-insight b', (bold) => bold.length)).toBe(0);
    expect(await page.$eval('#pg-result img', (img) => (img as HTMLImageElement).src.startsWith('blob:'))).toBe(true);
    expect(await text(page, '#pg-curl')).toContain('-d metadata=true');

    await page.select('#format', 'markdown');
    await page.click('#pg-submit');
    await page.waitForSelector('#pg-result pre.pg-content', { timeout: 45_000 });
    expect(await text(page, '#pg-result pre.pg-content')).toContain('Insight');
  });

  it('playground: offers the page actions and, for pdf only, the pdf options, and puts them in the snippets', async () => {
    await page.goto(`${base}/playground`, { waitUntil: 'domcontentloaded' });
    expect(await page.$eval('#pdfFormat', (el) => (el.closest('[data-format]') as HTMLElement).hidden)).toBe(true);
    await page.type('#click', '#load-more');
    await page.type('#scripts', 'window.ready = true');
    await page.select('#format', 'pdf');
    expect(await page.$eval('#pdfFormat', (el) => (el.closest('[data-format]') as HTMLElement).hidden)).toBe(false);
    await page.select('#pdfFormat', 'Letter');
    await page.click('#pdfLandscape');
    await page.type('#pdfPageRanges', '1-2');
    await page.type('#pdfFooterTemplate', '<span class="pageNumber"></span>');
    const curl = await text(page, '#pg-curl');
    for (const part of [
      '-d format=pdf',
      '-d pdfFormat=Letter',
      '-d pdfLandscape=true',
      '-d pdfPageRanges=1-2',
      `--data-urlencode 'click=#load-more'`,
      `--data-urlencode 'scripts=window.ready = true'`,
      `--data-urlencode 'pdfFooterTemplate=<span class="pageNumber"></span>'`,
    ]) {
      expect(curl).toContain(part);
    }
    // The single layout takes none of the paginated options.
    await page.select('#pdfPageLayout', 'single');
    const single = await text(page, '#pg-curl');
    expect(single).toContain('-d pdfPageLayout=single');
    expect(single).not.toContain('pdfFormat');
  });

  it('signed links: shows the signing secret once with a copy button, rotates it, and sets require-signed-links', async () => {
    const signedCapture = (keyId: string, secret: string) => {
      const query = new URLSearchParams({ html: PAGE_HTML, viewportWidth: '300', viewportHeight: '100', keyId }).toString();
      return fetch(`${service.url}/capture?${query}&signature=${createHmac('sha256', secret).update(query).digest('hex')}`);
    };
    await page.goto(`${base}/keys`, { waitUntil: 'domcontentloaded' });
    await page.type('#key-name', 'Signed links key');
    await navigateBy(page, 'form[action$="/keys"] button[type="submit"]');
    const secret = await page.$eval('#new-signing-secret', (el) => (el as HTMLInputElement).value);
    const keyId = await page.$eval('#new-signing-secret', (el) => el.getAttribute('data-key-id')!);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(await page.$('[data-copy="#new-signing-secret"]')).not.toBeNull();
    expect((await signedCapture(keyId, secret)).status).toBe(200);
    await page.reload({ waitUntil: 'domcontentloaded' });
    expect(await page.$('#new-signing-secret')).toBeNull();
    expect(await page.content()).not.toContain(secret);

    await navigateBy(page, `tr[data-key-id="${keyId}"] form[action$="/rotate-secret"] button`);
    const rotated = await page.$eval('[data-testid="new-secret"] #new-signing-secret', (el) => (el as HTMLInputElement).value);
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    const old = await signedCapture(keyId, secret);
    expect(old.status).toBe(401);
    expect(((await old.json()) as { error: { code: string } }).error.code).toBe('INVALID_SIGNATURE');

    expect(await page.$eval('#require-signed-links', (el) => (el as HTMLInputElement).checked)).toBe(false);
    await page.click('#require-signed-links');
    await navigateBy(page, 'form[action$="/require-signed-links"] button[type="submit"]');
    expect(await page.$eval('#require-signed-links', (el) => (el as HTMLInputElement).checked)).toBe(true);
    expect(await service.runtime.accounts.requiresSignedLinks(service.organizationId)).toBe(true);
    const refused = await service.get(`/usage?apiKey=${service.apiKey}`);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('SIGNATURE_REQUIRED');
    await page.click('#require-signed-links');
    await navigateBy(page, 'form[action$="/require-signed-links"] button[type="submit"]');
    expect(await service.runtime.accounts.requiresSignedLinks(service.organizationId)).toBe(false);
  });

  it("playground: shows a signed link for the chosen options that works in a real browser's <img>", async () => {
    const key = (await service.runtime.apiKeys.list(service.organizationId)).find((k) => k.name === 'Playground key')!;
    await page.goto(`${base}/playground`, { waitUntil: 'domcontentloaded' });
    await page.click('label[for="pg-source-html"]');
    await page.$eval('#pg-html', (el) => ((el as HTMLTextAreaElement).value = ''));
    await page.type('#pg-html', '<h1 style="color:rgb(0,120,0)">Signed</h1>');
    await page.type('#viewportWidth', '360');
    await page.type('#viewportHeight', '240');
    await page.select('#pg-signed-key', key.id);
    await page.select('#pg-signed-expires', '3600');
    await page.waitForFunction(
      (id) => {
        const el = document.querySelector('#pg-signed-url');
        return el?.getAttribute('data-ready') === 'true' && el.textContent!.includes('viewportHeight=240') && el.textContent!.includes(id);
      },
      {},
      key.id,
    );
    const link = await page.$eval('#pg-signed-url', (el) => el.textContent!);
    expect(link).toMatch(
      new RegExp(
        `^${service.url}/capture\\?html=.+&viewportWidth=360&viewportHeight=240&keyId=${key.id}&expires=\\d+&signature=[0-9a-f]{64}$`,
      ),
    );
    expect(link).not.toContain('rs_');
    expect(link).not.toContain('whsec_');

    // A fresh context without the dashboard cookie: the link alone makes the image.
    const anonymous = await browser.createBrowserContext();
    try {
      const viewer = await anonymous.newPage();
      await viewer.setContent(`<img id="shot" src="${link.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}">`);
      const size = await viewer.$eval('#shot', async (img) => {
        const image = img as HTMLImageElement;
        if (!image.complete) await new Promise((resolve) => image.addEventListener('load', resolve, { once: true }));
        return [image.naturalWidth, image.naturalHeight];
      });
      expect(size).toEqual([360, 240]);
    } finally {
      await anonymous.close();
    }
  });

  it('shows a clear page for an inactive membership, and picks the active organization of a member of several', async () => {
    const other = await browser.createBrowserContext();
    try {
      const formerPage = await other.newPage();
      const response = await signIn(formerPage, FORMER, PASSWORD);
      expect(response?.status()).toBe(403);
      expect(await text(formerPage, 'h1')).toBe('Your membership is inactive');
      expect(await text(formerPage, '.status-card')).toContain('Test org');
      expect(await formerPage.$('.sidebar a[href$="/keys"]')).toBeNull();
      const keys = await formerPage.goto(`${base}/keys`, { waitUntil: 'domcontentloaded' });
      expect(keys?.status()).toBe(403);
      expect(await text(formerPage, 'h1')).toBe('Your membership is inactive');
      // Sign-out still works from there.
      await navigateBy(formerPage, '.status-card form[action$="/sign-out"] button');
      expect(new URL(formerPage.url()).pathname).toBe('/dashboard/sign-in');
      await formerPage.close();

      const multiPage = await other.newPage();
      await signIn(multiPage, MULTI, PASSWORD);
      expect(new URL(multiPage.url()).pathname).toBe('/dashboard/usage');
      expect(await multiPage.$eval('#org-select', (el) => (el as HTMLSelectElement).selectedOptions[0]!.textContent)).toBe('Second Org');
      // Switching to the inactive one shows the inactive page, with a way back.
      await multiPage.select('#org-select', service.organizationId);
      await multiPage.waitForFunction(() => document.querySelector('h1')?.textContent === 'Your membership is inactive');
      await navigateBy(multiPage, '.status-card form[action$="/organization"] button');
      expect(await text(multiPage, '.org-switcher')).toContain('Second Org');
      expect(await text(multiPage, 'h1')).toBe('Usage');
    } finally {
      await other.close();
    }
  });

  it('signs out: the session ends on the server and the old cookie no longer works', async () => {
    const cookie = await cookieHeader(page);
    await page.goto(`${base}/usage`, { waitUntil: 'domcontentloaded' });
    await navigateBy(page, '.topbar form[action$="/sign-out"] button');
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    expect(await text(page, '.alert-info')).toContain('You have signed out.');
    expect(await sessionCookie(page)).toBeUndefined();
    expect(await service.runtime.db.knex('dashboard_sessions').where('user_id', ownerId)).toHaveLength(0);

    const replay = await fetch(`${base}/keys`, { redirect: 'manual', headers: { cookie } });
    expect(replay.status).toBe(303);
    expect(replay.headers.get('location')).toBe('/dashboard/sign-in?next=%2Fdashboard%2Fkeys');
    // No page broke the Content-Security-Policy (no inline script or style anywhere).
    expect(consoleErrors).toEqual([]);
  });
});
