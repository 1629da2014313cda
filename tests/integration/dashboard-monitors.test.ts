import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { type Browser, type BrowserContext, type HTTPResponse, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type DaguerreClient, type Monitor, type MonitorRun } from '../../client/src/index.js';
import { makeChromiumProfile } from '../../server/src/capture/browser/chromium-launch.js';
import { hashPassword } from '../../server/src/services/passwords.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { launchTestBrowser } from '../helpers/test-browser.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { until } from '../helpers/until.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PASSWORD = 'correct horse battery staple';
const MEMBER = 'monitor.member@example.test';
const OUTSIDER = 'monitor.outsider@example.test';
const COLOURS = ['#1d4ed8', '#b91c1c', '#15803d', '#a16207'];
const WIDTHS = [375, 768, 1280, 1920];
const SHOTS = '/tmp/monitor-shots';

/**
 * The dashboard's monitors (docs/monitors.md), in a real browser signed in as a member: the
 * Monitors page (list and form), a monitor's page (settings, Pause and Resume, its runs as
 * thumbnails that load, pin as golden), a run's page (baseline and run side by side, the diff as an
 * overlay, regions, text added and removed), at every width without sideways scroll. Another
 * organization's member gets 404. Real Redis (a prefix of its own), Chromium, SQLite; the watched
 * page is a loopback server that changes on every visit.
 */
describe('dashboard: monitors', () => {
  let service: TestService;
  let client: DaguerreClient;
  let browser: Browser;
  let profile: string;
  let member: Page;
  let outsider: Page;
  const contexts: BrowserContext[] = [];
  const fixtures = new FixtureServer();
  const prefix = `rs-test-dash-monitors-${randomBytes(4).toString('hex')}`;
  const consoleErrors: string[] = [];
  let version = 0;
  let monitor: Monitor;
  /** A run compared with its baseline, with a diff image. */
  let changed: MonitorRun;

  const base = () => `${service.url}/dashboard`;
  const text = (page: Page, selector: string) => page.$eval(selector, (el) => el.textContent?.replace(/\s+/g, ' ').trim() ?? '');
  const field = (page: Page, name: string) => text(page, `[data-field="${name}"] dd`);

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
      // 404s and the form's refusal (400) are answers the tests ask for.
      if (message.type() === 'error' && !/status of 40[04]/.test(message.text())) consoleErrors.push(message.text());
    });
    await page.goto(`${base()}/sign-in`, { waitUntil: 'domcontentloaded' });
    await page.type('#email', email);
    await page.type('#password', PASSWORD);
    await navigateBy(page, 'form[action$="/sign-in"] button[type="submit"]');
    expect(new URL(page.url()).pathname).toBe('/dashboard/usage');
    return page;
  }

  /** Every <img> of the selector has loaded with pixels (naturalWidth > 0); waits for lazy ones scrolled into view. */
  const imagesLoaded = async (page: Page, selector: string) => {
    await page.$$eval(selector, (images) => images.forEach((img) => img.scrollIntoView()));
    await page.waitForFunction(
      (s) => [...document.querySelectorAll<HTMLImageElement>(s)].every((img) => img.complete),
      { timeout: 30_000 },
      selector,
    );
    return page.$$eval(selector, (images) => images.map((img) => (img as HTMLImageElement).naturalWidth));
  };

  /** Clicks a control scrolled to the middle of the window, so the sticky header is never over it. */
  const press = async (page: Page, selector: string) => {
    await page.$eval(selector, (el) => el.scrollIntoView({ block: 'center' }));
    await page.click(selector);
  };

  const sideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);

  beforeAll(async () => {
    fixtures.route('/changing', (_req, res) => {
      version += 1;
      const colour = COLOURS[version % COLOURS.length];
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          `<!doctype html><body style="margin:0;font:20px sans-serif"><div style="height:140px;width:${120 + (version % 3) * 60}px;background:${colour}"></div><p>Price: ${version * 10} EUR</p><p>Stock: ${version % 2 ? 'in stock' : 'sold out'}</p></body>`,
        );
    });
    await fixtures.start();
    service = await startTestService({
      credits: 1_000,
      env: { REDIS_URL, JOB_QUEUE_PREFIX: prefix, MONITOR_MIN_INTERVAL_SECONDS: '1', RATE_LIMIT_MAX: '1000' },
    });
    const { accounts, apiKeys } = service.runtime;
    const hash = await hashPassword(PASSWORD);
    await accounts.addMember(service.organizationId, (await accounts.createUser(MEMBER, 'Mona Member', hash)).id);
    const other = await accounts.createOrganization(
      'Other org',
      await accounts.createPlan({ name: `other-${prefix}`, tier: 'test', creditsPerMonth: 10 }),
    );
    await accounts.addMember(other.id, (await accounts.createUser(OUTSIDER, 'Otto Outsider', hash)).id);
    const key = await apiKeys.create({ organizationId: service.organizationId, name: 'Monitors key' });
    client = createClient({ baseUrl: service.url, apiKey: key.key });

    monitor = await client.createMonitor({
      url: `${fixtures.url}/changing?token=secret-value`,
      intervalSeconds: 2,
      threshold: 0.5,
      name: 'Pricing page of the shop',
      ignoreSelectors: ['.ad-slot'],
      viewportWidth: 480,
      viewportHeight: 300,
    });
    changed = await until(
      async () => {
        const { runs } = await client.listRuns(monitor.monitorId, { limit: 100 });
        const compared = runs.filter((run) => run.status === 'succeeded' && run.diff?.diffImageUrl);
        // Two compared runs: the newer one's baseline is itself a run with a capture.
        return compared.length >= 2 ? compared[0] : undefined;
      },
      90_000,
      'two compared runs',
      250,
    );

    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    profile = makeChromiumProfile('daguerre-dashboard-monitors-');
    browser = await launchTestBrowser(profile);
    member = await signedIn(MEMBER);
    outsider = await signedIn(OUTSIDER);
  }, 180_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await service?.stop();
    await fixtures.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  it('the Monitors page lists the monitor: name, URL (secrets masked), interval, threshold, status, last run with its diff, next run', async () => {
    await member.goto(`${base()}/monitors`, { waitUntil: 'domcontentloaded' });
    expect(await text(member, 'h1')).toBe('Monitors');
    expect(await member.$eval('nav a[aria-current="page"]', (a) => a.getAttribute('href'))).toBe('/dashboard/monitors');
    const row = `#monitors-table tr[data-monitor-id="${monitor.monitorId}"]`;
    expect(await text(member, `${row} td[data-label="Name"]`)).toBe('Pricing page of the shop');
    const url = await text(member, `${row} td[data-label="URL"]`);
    expect(url).toContain('/changing?token=');
    expect(url).not.toContain('secret-value');
    expect(await text(member, `${row} td[data-label="Interval"]`)).toBe('every 2 s');
    expect(await text(member, `${row} td[data-label="Threshold"]`)).toBe('0.5 %');
    expect(await text(member, `${row} td[data-label="Status"]`)).toBe('Active');
    expect(await text(member, `${row} td[data-label="Last run"]`)).toMatch(/\d/);
    expect(await member.$(`${row} td[data-label="Next run"] time`)).not.toBeNull();
    await navigateBy(member, `${row} td[data-label="Name"] a`);
    expect(new URL(member.url()).pathname).toBe(`/dashboard/monitors/${monitor.monitorId}`);
  });

  it("a monitor's page: its settings and its runs as thumbnails that load, each with its diff; Pause and Resume change its state", async () => {
    await member.goto(`${base()}/monitors/${monitor.monitorId}`, { waitUntil: 'domcontentloaded' });
    expect(await text(member, 'h1')).toBe('Pricing page of the shop');
    expect(await field(member, 'interval')).toBe('every 2 s (2 s)');
    expect(await field(member, 'threshold')).toBe('0.5 % of the pixels');
    expect(await field(member, 'ignore')).toBe('.ad-slot');
    expect(await field(member, 'key')).toBe('Monitors key');
    expect(await field(member, 'options')).toContain('viewportWidth=480');
    const thumbs = await imagesLoaded(member, '#monitor-timeline .monitor-thumb img');
    expect(thumbs.length).toBeGreaterThanOrEqual(3);
    expect(thumbs.every((width) => width > 0)).toBe(true);
    const card = `#monitor-timeline li[data-run-id="${changed.runId}"]`;
    expect(await text(member, `${card} .monitor-run-badges`)).toMatch(/^Changed \d+(\.\d+)? % \+\d+ −\d+$/);
    // The thumbnail is the run's capture, under the session.
    expect(await member.$eval(`${card} img`, (img) => img.getAttribute('src'))).toBe(
      `/dashboard/monitors/${monitor.monitorId}/runs/${changed.runId}/image`,
    );

    await navigateBy(member, 'form[action$="/pause"] button');
    expect(await text(member, '.alert-success')).toContain('Monitor paused');
    expect(await field(member, 'status')).toBe('Paused');
    expect(await field(member, 'next-run')).toBe('paused');
    expect(await member.$('form[action$="/resume"] button')).not.toBeNull();
    expect(await client.getMonitor(monitor.monitorId)).toMatchObject({ paused: true, pausedReason: 'user', nextRunAt: null });
    await member.goto(`${base()}/monitors`, { waitUntil: 'domcontentloaded' });
    expect(await text(member, `#monitors-table tr[data-monitor-id="${monitor.monitorId}"] td[data-label="Status"]`)).toBe('Paused');

    await member.goto(`${base()}/monitors/${monitor.monitorId}`, { waitUntil: 'domcontentloaded' });
    await navigateBy(member, 'form[action$="/resume"] button');
    expect(await text(member, '.alert-success')).toContain('Monitor resumed');
    expect(await field(member, 'status')).toBe('Active');
    expect((await client.getMonitor(monitor.monitorId)).paused).toBe(false);
    // Resumed, it runs again: a run newer than the page's.
    const newest = (await client.listRuns(monitor.monitorId, { limit: 1 })).runs[0]!;
    await until(
      async () => ((await client.listRuns(monitor.monitorId, { limit: 1 })).runs[0]!.runId !== newest.runId ? true : undefined),
      60_000,
      'a run after Resume',
      250,
    );
    // Stable from here on: paused again through the SDK.
    await client.pauseMonitor(monitor.monitorId);
  }, 120_000);

  it("a run's page: the baseline and the run side by side, the diff as an overlay with its regions, the text added and removed", async () => {
    await member.goto(`${base()}/monitors/${monitor.monitorId}/runs/${changed.runId}`, { waitUntil: 'domcontentloaded' });
    expect(await text(member, 'h1')).toBe('Run');
    expect(await field(member, 'diff')).toMatch(/^Changed \d+(\.\d+)? % [\d,]+ of [\d,]+ pixels, threshold 0\.5 %$/);
    expect(await member.$eval('[data-field="baseline"] a', (a) => a.getAttribute('href'))).toBe(
      `/dashboard/monitors/${monitor.monitorId}/runs/${changed.baselineRunId}`,
    );
    const sideBySide = await imagesLoaded(member, '#compare-side-panel img');
    expect(sideBySide).toHaveLength(2);
    expect(sideBySide.every((width) => width > 0)).toBe(true);
    expect(await member.$$eval('#compare-side-panel img', (images) => images.map((img) => img.getAttribute('src')))).toEqual([
      `/dashboard/monitors/${monitor.monitorId}/runs/${changed.baselineRunId}/image`,
      `/dashboard/monitors/${monitor.monitorId}/runs/${changed.runId}/image`,
    ]);
    expect(await member.$eval('#compare-overlay-panel', (el) => el.checkVisibility())).toBe(false);

    // The overlay: a radio styled by the stylesheet (no script), the diff image over the run's capture.
    await press(member, 'label[for="compare-overlay"]');
    expect(await member.$eval('#compare-overlay-panel', (el) => el.checkVisibility())).toBe(true);
    expect(await member.$eval('#compare-side-panel', (el) => el.checkVisibility())).toBe(false);
    const overlay = await imagesLoaded(member, '#compare-overlay-panel img');
    expect(overlay).toHaveLength(2);
    expect(overlay.every((width) => width > 0)).toBe(true);
    const boxes = await member.$$eval('.compare-stack img, .compare-stack svg', (els) =>
      els.map((el) => {
        const r = el.getBoundingClientRect();
        return [Math.round(r.left), Math.round(r.top), Math.round(r.width)];
      }),
    );
    // The layers lie over one another.
    expect(new Set(boxes.map((box) => box.join(','))).size).toBe(1);
    expect(await member.$$eval('.compare-regions rect', (rects) => rects.length)).toBe(changed.diff!.regions.length);
    await press(member, 'label[for="compare-show-diff"]');
    expect(await member.$eval('.compare-diff', (el) => el.checkVisibility())).toBe(false);
    await press(member, 'label[for="compare-show-diff"]');
    expect(await member.$eval('.compare-diff', (el) => el.checkVisibility())).toBe(true);

    expect(await member.$$eval('#regions-table tbody tr', (rows) => rows.length)).toBe(changed.diff!.regions.length);
    const added = await member.$$eval('.text-lines-added li', (items) => items.map((li) => li.textContent?.replace(/\s+/g, ' ').trim()));
    const removed = await member.$$eval('.text-lines-removed li', (items) =>
      items.map((li) => li.textContent?.replace(/\s+/g, ' ').trim()),
    );
    expect(added).toEqual(changed.diff!.textAdded.map((line) => `+ ${line}`));
    expect(removed).toEqual(changed.diff!.textRemoved.map((line) => `− ${line}`));
    expect(added.join('\n')).toMatch(/Price: \d+ EUR/);
  });

  it('Pin as golden makes the run the baseline', async () => {
    await member.goto(`${base()}/monitors/${monitor.monitorId}/runs/${changed.runId}`, { waitUntil: 'domcontentloaded' });
    await navigateBy(member, 'form[action$="/golden"] button');
    expect(new URL(member.url()).pathname).toBe(`/dashboard/monitors/${monitor.monitorId}/runs/${changed.runId}`);
    expect(await text(member, '.alert-success')).toContain('golden');
    expect(await field(member, 'status')).toContain('Golden');
    expect(await member.$('form[action$="/golden"]')).toBeNull();
    expect((await client.getMonitor(monitor.monitorId)).goldenRunId).toBe(changed.runId);
    await member.goto(`${base()}/monitors/${monitor.monitorId}`, { waitUntil: 'domcontentloaded' });
    expect(await text(member, `#monitor-timeline li[data-run-id="${changed.runId}"] .monitor-run-badges`)).toContain('Golden');
    expect(await member.$eval('[data-field="baseline"] a', (a) => a.getAttribute('href'))).toBe(
      `/dashboard/monitors/${monitor.monitorId}/runs/${changed.runId}`,
    );
  });

  it('the form creates a monitor, and refuses bad input naming the field, creating nothing', async () => {
    await member.goto(`${base()}/monitors`, { waitUntil: 'domcontentloaded' });
    const before = (await client.listMonitors()).length;
    await member.type('#monitor-url', `${fixtures.url}/changing`);
    await member.$eval('#monitor-interval', (el) => ((el as HTMLInputElement).value = '0'));
    const refused = await navigateBy(member, 'form.monitor-form button[type="submit"]');
    expect(refused?.status()).toBe(400);
    expect(await text(member, '#monitor-interval-error')).toMatch(/intervalSeconds/);
    expect(await member.$eval('#monitor-url', (el) => (el as HTMLInputElement).value)).toBe(`${fixtures.url}/changing`);
    expect(await client.listMonitors()).toHaveLength(before);

    await member.$eval('#monitor-interval', (el) => ((el as HTMLInputElement).value = '3600'));
    await member.$eval('#monitor-threshold', (el) => ((el as HTMLInputElement).value = '2.5'));
    await member.type('#monitor-name', 'From the form');
    await member.type('#monitor-ignore', '.ad-slot\n#clock');
    const created = await navigateBy(member, 'form.monitor-form button[type="submit"]');
    expect(created?.status()).toBe(200);
    expect(await text(member, '.alert-success')).toContain('Monitor created');
    const made = (await client.listMonitors()).find((m) => m.name === 'From the form')!;
    expect(made).toMatchObject({ intervalSeconds: 3600, threshold: 2.5, ignoreSelectors: ['.ad-slot', '#clock'], webhookUrl: null });
    expect(new URL(member.url()).pathname).toBe(`/dashboard/monitors/${made.monitorId}`);

    // Delete, through its confirmation page.
    await navigateBy(member, 'a[href$="/delete"]');
    await navigateBy(member, 'form[action$="/delete"] button');
    expect(new URL(member.url()).pathname).toBe('/dashboard/monitors');
    expect(await text(member, '.alert-success')).toContain('deleted');
    await expect(client.getMonitor(made.monitorId)).rejects.toMatchObject({ status: 404 });
  }, 60_000);

  it("another organization's member gets 404 for the monitor, its runs, their images and its actions", async () => {
    const paths = [
      `/monitors/${monitor.monitorId}`,
      `/monitors/${monitor.monitorId}/delete`,
      `/monitors/${monitor.monitorId}/runs/${changed.runId}`,
      `/monitors/${monitor.monitorId}/runs/${changed.runId}/image`,
      `/monitors/${monitor.monitorId}/runs/${changed.runId}/diff`,
    ];
    for (const path of paths)
      expect((await outsider.goto(`${base()}${path}`, { waitUntil: 'domcontentloaded' }))?.status(), path).toBe(404);
    await outsider.goto(`${base()}/monitors`, { waitUntil: 'domcontentloaded' });
    expect(await outsider.$('#monitors-table')).toBeNull();
    const posts = await outsider.evaluate(
      async (urls) => {
        const csrf = (document.querySelector('input[name="_csrf"]') as HTMLInputElement).value;
        const statuses: number[] = [];
        for (const url of urls)
          statuses.push((await fetch(url, { method: 'POST', body: new URLSearchParams({ _csrf: csrf }), redirect: 'manual' })).status);
        return statuses;
      },
      ['pause', 'resume', 'delete', `runs/${changed.runId}/golden`].map((action) => `${base()}/monitors/${monitor.monitorId}/${action}`),
    );
    expect(posts).toEqual([404, 404, 404, 404]);
    expect(await client.getMonitor(monitor.monitorId)).toMatchObject({ paused: true, goldenRunId: changed.runId });
    // Without a session, images are not served at all.
    const anonymous = await fetch(`${base()}/monitors/${monitor.monitorId}/runs/${changed.runId}/image`, { redirect: 'manual' });
    expect(anonymous.status).toBe(303);
  });

  it('no monitors page scrolls sideways from 375 to 1920 px (screenshots in /tmp/monitor-shots)', async () => {
    const pages = {
      list: `${base()}/monitors`,
      monitor: `${base()}/monitors/${monitor.monitorId}`,
      run: `${base()}/monitors/${monitor.monitorId}/runs/${changed.runId}`,
    };
    const problems: string[] = [];
    for (const width of WIDTHS) {
      await member.setViewport({ width, height: 900 });
      for (const [name, url] of Object.entries(pages)) {
        await member.goto(url, { waitUntil: 'load' });
        await member.waitForFunction(() => document.documentElement.classList.contains('js'));
        if (await sideways(member)) problems.push(`${name} at ${width} px`);
        if (width === 375 || width === 1920) await member.screenshot({ path: `${SHOTS}/${name}-${width}.png`, fullPage: true });
        if (name === 'run') {
          await press(member, 'label[for="compare-overlay"]');
          await imagesLoaded(member, '#compare-overlay-panel img');
          if (await sideways(member)) problems.push(`run (overlay) at ${width} px`);
          // From the top, so the sticky bar is drawn where it belongs in the full-page picture.
          await member.evaluate(() => window.scrollTo(0, 0));
          if (width === 375 || width === 1920) await member.screenshot({ path: `${SHOTS}/run-overlay-${width}.png`, fullPage: true });
        }
      }
    }
    expect(problems).toEqual([]);
    expect(consoleErrors).toEqual([]);
  }, 120_000);
});
