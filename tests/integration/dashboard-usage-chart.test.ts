import { rmSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeChromiumProfile } from '../../server/src/capture/browser/chromium-launch.js';
import { countUsage, usageByKey } from '../../server/src/dashboard/usage-by-key.js';
import { hashPassword } from '../../server/src/services/passwords.js';
import { DATABASE_KINDS } from '../helpers/databases.js';
import { launchTestBrowser } from '../helpers/test-browser.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/**
 * The usage page's chart of captures per day and key, and its per-key totals: ledger rows of past
 * days written straight into the table (a capture cannot be dated back), one real capture today,
 * counted by SQLite and by MariaDB and read back from the page in Chromium as a user sees it.
 */

const DAY = 86_400_000;
const PASSWORD = 'correct horse battery staple';
const OWNER = 'usage-owner@example.test';
const PAGE_HTML = '<html><body style="margin:0;background:#fff"><h1>Usage chart</h1></body></html>';
/** The plot's height in the chart's own units (CHART_HEIGHT 320 less the 34 + 40 of margins). */
const PLOT_HEIGHT = 246;

let browser: Browser;
let profile: string;

beforeAll(async () => {
  profile = makeChromiumProfile('daguerre-usage-chart-profile-');
  browser = await launchTestBrowser(profile);
});

afterAll(async () => {
  await browser?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

interface Bar {
  series: string;
  part: 'paid' | 'free';
  value: number;
  y: number;
  height: number;
  title: string;
}

describe.each(DATABASE_KINDS)('usage per key and per day (%s)', (kind) => {
  let service: TestService;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  const today = Math.floor(Date.now() / DAY) * DAY;
  const isoDay = (offset: number) => new Date(today - offset * DAY).toISOString().slice(0, 10);
  const keys = {
    production: { id: '', key: '', prefix: '' },
    staging: { id: '', key: '', prefix: '' },
    old: { id: '', key: '', prefix: '' },
  };
  let otherOrganizationId = '';
  const consoleErrors: string[] = [];

  let sequence = 0;
  /** A ledger row `daysAgo` days back (at 10:00 UTC plus a few seconds, so rows never share a time). */
  const ledgerRow = (
    apiKeyId: string | null,
    status: string,
    daysAgo: number,
    credits: number,
    organizationId = service.organizationId,
  ) => ({
    request_id: `usage-chart-${kind}-${(sequence += 1)}`,
    organization_id: organizationId,
    api_key_id: apiKeyId,
    status,
    format: 'png',
    source: 'url',
    target_host: 'example.test',
    credits,
    created_at: today - daysAgo * DAY + 10 * 3_600_000 + sequence * 1000,
  });

  beforeAll(async () => {
    service = await startTestService({ database: kind, credits: 100 });
    base = `${service.url}/dashboard`;
    const { accounts, apiKeys, db } = service.runtime;
    const owner = await accounts.createUser(OWNER, 'Uma Usage', await hashPassword(PASSWORD));
    await accounts.addMember(service.organizationId, owner.id, 'owner');
    for (const [slot, name] of [
      ['production', 'Production <web>'],
      ['staging', 'Staging'],
      ['old', 'Old key'],
    ] as const) {
      const created = await apiKeys.create({ organizationId: service.organizationId, name });
      keys[slot] = { id: created.id, key: created.key, prefix: created.prefix };
    }
    const plan = await accounts.createPlan({ name: `usage-other-${Date.now()}`, tier: 'test', creditsPerMonth: 10 });
    otherOrganizationId = (await accounts.createOrganization('Someone else', plan)).id;
    const { production: p, staging: s, old: o } = keys;
    await db.knex('capture_ledger').insert([
      // Two days ago: Production 3 charged (4 credits), 1 cache hit, 1 failed; Staging 2 charged, 1 refused.
      ledgerRow(p.id, 'charged', 2, 1),
      ledgerRow(p.id, 'charged', 2, 1),
      ledgerRow(p.id, 'charged', 2, 2),
      ledgerRow(p.id, 'cache_hit', 2, 0),
      ledgerRow(p.id, 'released', 2, 1), // its reserved credit was given back: not counted as credits
      ledgerRow(s.id, 'charged', 2, 1),
      ledgerRow(s.id, 'charged', 2, 1),
      ledgerRow(s.id, 'refused', 2, 0),
      // Yesterday: Staging 4 charged, the old key 1 charged.
      ...[1, 2, 3, 4].map(() => ledgerRow(s.id, 'charged', 1, 1)),
      ledgerRow(o.id, 'charged', 1, 1),
      // Staging's capture still running now (not counted; its deadline ahead, so the reservation sweeper leaves it alone).
      { ...ledgerRow(s.id, 'reserved', 0, 1), created_at: Date.now(), deadline_at: Date.now() + 600_000 },
      // Ten days ago (only in the last 30 days), and another organization's row (never counted).
      ledgerRow(p.id, 'charged', 10, 1),
      ledgerRow(null, 'charged', 2, 1, otherOrganizationId),
    ]);
    await db.knex('api_keys').where('id', o.id).update({ revoked_at: Date.now() });

    context = await browser.createBrowserContext();
    page = await context.newPage();
    page.setDefaultTimeout(30_000);
    page.setDefaultNavigationTimeout(30_000);
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    await page.goto(`${base}/sign-in`, { waitUntil: 'domcontentloaded' });
    await page.type('#email', OWNER);
    await page.type('#password', PASSWORD);
    await Promise.all([
      page.waitForNavigation({ waitUntil: 'domcontentloaded' }),
      page.click('form[action$="/sign-in"] button[type="submit"]'),
    ]);
    expect(new URL(page.url()).pathname).toBe('/dashboard/usage');
  });

  afterAll(async () => {
    await context?.close();
    await service?.stop();
  });

  const text = (selector: string) => page.$eval(selector, (el) => el.textContent?.replace(/\s+/g, ' ').trim() ?? '');

  /** Every bar segment of the chart, by ISO day. */
  const bars = () =>
    page.$$eval('svg.usage-chart g.day', (groups) =>
      Object.fromEntries(
        groups.map((g) => [
          (g as SVGGElement).dataset.day!,
          [...g.querySelectorAll('rect.bar')].map((rect) => ({
            series: (rect as SVGRectElement).dataset.series!,
            part: rect.classList.contains('bar-ok') ? 'paid' : 'free',
            value: Number((rect as SVGRectElement).dataset.value),
            y: Number(rect.getAttribute('y')),
            height: Number(rect.getAttribute('height')),
            title: rect.querySelector('title')?.textContent ?? '',
          })),
        ]),
      ),
    ) as Promise<Record<string, Bar[]>>;

  /** The per-key totals table: one entry per row (key id, or "total"), its name cell and its numbers. */
  const totals = () =>
    page.$$eval('#usage-by-key-table tbody tr, #usage-by-key-table tfoot tr', (rows) =>
      rows.map((tr) => ({
        key: tr.closest('tfoot') ? 'total' : (tr as HTMLElement).dataset.keyId!,
        name: tr.querySelector('th')!.textContent!.replace(/\s+/g, ' ').trim(),
        swatch: tr.querySelector('.usage-swatch')?.className.replace('usage-swatch', '').trim() ?? null,
        ...Object.fromEntries(
          [...tr.querySelectorAll('td')].map((td) => [(td as HTMLElement).dataset.col!, Number(td.textContent!.replace(/,/g, ''))]),
        ),
      })),
    );

  it('counts the ledger in SQL by day, key and status: one small result set, refused rows included, running ones not', async () => {
    const capture = await fetch(
      `${service.url}/capture?${new URLSearchParams({ html: PAGE_HTML, viewportWidth: '320', viewportHeight: '200' })}`,
      {
        headers: { 'x-api-key': keys.production.key },
      },
    );
    expect(capture.status).toBe(200);
    await capture.arrayBuffer();
    const real = await service.runtime.db
      .knex('capture_ledger')
      .where({ api_key_id: keys.production.id, status: 'charged' })
      .andWhere('created_at', '>=', today);
    expect(real).toHaveLength(1);
    expect(Number(real[0].credits)).toBe(1);

    const start = today - 6 * DAY;
    const counts = await countUsage(service.runtime.db, service.organizationId, start, today + DAY);
    const day = (offset: number) => Math.floor((today - offset * DAY) / DAY);
    const sorted = [...counts].sort(
      (a, b) => a.dayNumber - b.dayNumber || `${a.apiKeyId}${a.status}`.localeCompare(`${b.apiKeyId}${b.status}`),
    );
    const expected = [
      { dayNumber: day(2), apiKeyId: keys.production.id, status: 'cache_hit', count: 1, credits: 0 },
      { dayNumber: day(2), apiKeyId: keys.production.id, status: 'charged', count: 3, credits: 4 },
      { dayNumber: day(2), apiKeyId: keys.production.id, status: 'released', count: 1, credits: 1 },
      { dayNumber: day(2), apiKeyId: keys.staging.id, status: 'charged', count: 2, credits: 2 },
      { dayNumber: day(2), apiKeyId: keys.staging.id, status: 'refused', count: 1, credits: 0 },
      { dayNumber: day(1), apiKeyId: keys.old.id, status: 'charged', count: 1, credits: 1 },
      { dayNumber: day(1), apiKeyId: keys.staging.id, status: 'charged', count: 4, credits: 4 },
      { dayNumber: day(0), apiKeyId: keys.production.id, status: 'charged', count: 1, credits: 1 },
    ];
    const byOrder = (a: (typeof expected)[number], b: (typeof expected)[number]) =>
      a.dayNumber - b.dayNumber || `${a.apiKeyId}${a.status}`.localeCompare(`${b.apiKeyId}${b.status}`);
    expect(sorted).toEqual(expected.sort(byOrder));

    const usage = await usageByKey(service.runtime.db, service.organizationId, start, today + DAY);
    expect(usage.days).toHaveLength(7);
    expect(usage.days[0]).toBe(start);
    // Busiest key first: Staging made 7 requests, Production 6, the old key 1.
    expect(usage.keys.map((k) => k.apiKeyId)).toEqual([keys.staging.id, keys.production.id, keys.old.id]);
    const production = usage.keys[1]!;
    expect(production.total).toEqual({ charged: 4, cached: 1, failed: 1, refused: 0, credits: 5 });
    expect(production.perDay[4]).toEqual({ charged: 3, cached: 1, failed: 1, refused: 0, credits: 4 });
    expect(usage.keys[0]!.total).toEqual({ charged: 6, cached: 0, failed: 0, refused: 1, credits: 6 });
    expect(usage.total).toEqual({ charged: 11, cached: 1, failed: 1, refused: 1, credits: 12 });

    // The last 30 days reach the row of ten days ago; the other organization's row is never seen.
    const month = await usageByKey(service.runtime.db, service.organizationId, today - 29 * DAY, today + DAY);
    expect(month.total.charged).toBe(12);
    expect(month.keys.some((k) => k.apiKeyId === null)).toBe(false);
  });

  it('draws the last 7 days stacked by key, each bar as tall as its count', async () => {
    await page.goto(`${base}/usage?period=7d`, { waitUntil: 'domcontentloaded' });
    expect(await page.$eval('[data-period]', (el) => el.getAttribute('data-period'))).toBe('7d');
    expect(await page.$eval('#usage-period', (el) => (el as HTMLSelectElement).value)).toBe('7d');
    const svg = await page.$eval('svg.usage-chart', (el) => ({
      role: el.getAttribute('role'),
      name: el
        .getAttribute('aria-labelledby')!
        .split(' ')
        .map((id) => document.getElementById(id)!.textContent)
        .join(' | '),
      viewBox: el.getAttribute('viewBox'),
      width: el.getAttribute('width'),
      max: Number(el.getAttribute('data-max')),
    }));
    expect(svg.role).toBe('img');
    expect(svg.name).toMatch(
      /^Captures per day by API key, last 7 days \(.+\) \| 14 capture requests, 11 charged\. Busiest day .+ with 8\./,
    );
    expect(svg.viewBox).toBe('0 0 800 320');
    expect(svg.width).toBe('100%');
    // The busiest day has 8 requests: the axis tops out at 10.
    expect(svg.max).toBe(10);

    const chart = await bars();
    expect(Object.keys(chart)).toEqual([6, 5, 4, 3, 2, 1, 0].map(isoDay));
    const unit = PLOT_HEIGHT / svg.max;
    for (const segments of Object.values(chart)) {
      for (const bar of segments) expect(Math.abs(bar.height - bar.value * unit)).toBeLessThanOrEqual(0.15);
      // Stacked: each segment starts where the one below it ends.
      segments.slice(1).forEach((bar, i) => expect(Math.abs(bar.y + bar.height - segments[i]!.y)).toBeLessThanOrEqual(0.15));
    }
    // Staging (busiest, first colour) at the bottom: 2 charged, 1 refused; then Production: 3 charged, 2 free.
    const summary = (day: number) => chart[isoDay(day)]!.map((b) => `${b.series}:${b.part}:${b.value}`);
    expect(summary(2)).toEqual(['usage-s0:paid:2', 'usage-s0:free:1', 'usage-s1:paid:3', 'usage-s1:free:2']);
    expect(summary(1)).toEqual(['usage-s0:paid:4', 'usage-s2:paid:1']);
    expect(summary(0)).toEqual(['usage-s1:paid:1']);
    expect(summary(3)).toEqual([]);
    const twoDaysAgo = chart[isoDay(2)]!;
    expect(twoDaysAgo[1]!.title).toMatch(/^Staging \(rs_[\w-]+…\), .+: 1 refused$/);
    expect(twoDaysAgo[3]!.title).toMatch(/^Production <web> \(rs_[\w-]+…\), .+: 1 from cache, 1 failed$/);
    expect(twoDaysAgo[2]!.title).toMatch(/: 3 charged \(4 credits\)$/);
    // Today's column is marked (the old selector of the dashboard's own test still finds its bar).
    expect(await page.$$('svg.chart .today rect.bar-ok')).toHaveLength(1);

    const legend = await page.$$eval('.usage-legend li', (items) => items.map((li) => li.textContent!.replace(/\s+/g, ' ').trim()));
    expect(legend.slice(0, 3)).toEqual([
      `Staging ${keys.staging.prefix}…`,
      `Production <web> ${keys.production.prefix}…`,
      `Old key ${keys.old.prefix}… revoked`,
    ]);

    // The numbers behind the chart, as a table.
    const numbers = await page.$$eval('#usage-numbers-table tbody tr', (rows) =>
      rows.map((tr) => [(tr as HTMLElement).dataset.day, ...[...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())]),
    );
    expect(numbers).toHaveLength(7);
    expect(numbers.find((row) => row[0] === isoDay(2))).toEqual([isoDay(2), '3', '5', '0', '8', '5', '6']);
  });

  it('totals the period per key, marks the revoked key, lists the idle one and sums them all', async () => {
    await page.goto(`${base}/usage?period=7d`, { waitUntil: 'domcontentloaded' });
    const rows = await totals();
    expect(rows).toEqual([
      {
        key: keys.staging.id,
        name: `Staging ${keys.staging.prefix}…`,
        swatch: 'usage-s0',
        charged: 6,
        cached: 0,
        failed: 0,
        refused: 1,
        credits: 6,
      },
      {
        key: keys.production.id,
        name: `Production <web> ${keys.production.prefix}…`,
        swatch: 'usage-s1',
        charged: 4,
        cached: 1,
        failed: 1,
        refused: 0,
        credits: 5,
      },
      {
        key: keys.old.id,
        name: `Old key ${keys.old.prefix}… Revoked`,
        swatch: 'usage-s2',
        charged: 1,
        cached: 0,
        failed: 0,
        refused: 0,
        credits: 1,
      },
      // The suite's own key did nothing: listed with zeros, and no colour (it is not in the chart).
      expect.objectContaining({ name: expect.stringMatching(/^test rs_/), swatch: null, charged: 0, credits: 0 }),
      { key: 'total', name: 'All keys', swatch: null, charged: 11, cached: 1, failed: 1, refused: 1, credits: 12 },
    ]);
    // The key name is shown as text, never as markup.
    expect(await page.$('#usage-by-key-table web')).toBeNull();
  });

  it('switches period with the GET form; the billing period stays the default', async () => {
    await page.goto(`${base}/usage?period=7d`, { waitUntil: 'domcontentloaded' });
    await page.select('#usage-period', '30d');
    await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click('form.usage-period button[type="submit"]')]);
    expect(new URL(page.url()).search).toBe('?period=30d');
    expect(Object.keys(await bars())).toHaveLength(30);
    expect((await totals()).at(-1)).toMatchObject({ key: 'total', charged: 12, credits: 13 });

    // The billing period began when the organization was made (today): only the real capture is in it.
    for (const address of [`${base}/usage`, `${base}/usage?period=nonsense`]) {
      await page.goto(address, { waitUntil: 'domcontentloaded' });
      expect(await page.$eval('[data-period]', (el) => el.getAttribute('data-period'))).toBe('current');
      expect(await text('[data-stat="captures"]')).toBe('1 capture');
      expect(Object.keys(await bars())[0]).toBe(isoDay(0));
      expect((await totals()).at(-1)).toMatchObject({ key: 'total', charged: 1, credits: 1 });
    }
    // Another period shown does not change the billing period's card.
    await page.goto(`${base}/usage?period=30d`, { waitUntil: 'domcontentloaded' });
    expect(await text('[data-stat="captures"]')).toBe('1 capture');
  });

  it('fits from 375 px to 1920 px wide without a sideways scroll, with labels still legible, in light and dark', async () => {
    for (const width of [375, 768, 1024, 1920]) {
      await page.setViewport({ width, height: 900 });
      await page.goto(`${base}/usage?period=30d`, { waitUntil: 'load' });
      const fit = await page.evaluate(() => {
        const svg = document.querySelector('svg.usage-chart')!;
        const card = svg.closest('.card')!;
        const box = svg.getBoundingClientRect();
        const cardBox = card.getBoundingClientRect();
        const labels = [...svg.querySelectorAll('text.day-label')].filter((t) => getComputedStyle(t).display !== 'none');
        const labelBoxes = labels.map((t) => t.getBoundingClientRect());
        return {
          viewport: window.innerWidth,
          pageScroll: document.documentElement.scrollWidth,
          cardScroll: card.scrollWidth - card.clientWidth,
          chartLeft: box.left,
          chartRight: box.right,
          cardLeft: cardBox.left,
          cardRight: cardBox.right,
          chartHeight: box.height,
          labelCount: labels.length,
          smallestLabel: Math.min(...labelBoxes.map((b) => b.height)),
          overlapping: labelBoxes.slice(1).some((b, i) => b.left < labelBoxes[i]!.right),
        };
      });
      expect(fit.pageScroll, `page width at ${width} px`).toBeLessThanOrEqual(fit.viewport);
      expect(fit.cardScroll, `chart card at ${width} px`).toBeLessThanOrEqual(0);
      expect(fit.chartLeft).toBeGreaterThanOrEqual(fit.cardLeft);
      expect(fit.chartRight).toBeLessThanOrEqual(fit.cardRight);
      expect(fit.chartHeight).toBeGreaterThan(100);
      expect(fit.labelCount).toBeGreaterThanOrEqual(4);
      expect(fit.smallestLabel).toBeGreaterThanOrEqual(9);
      expect(fit.overlapping).toBe(false);
    }

    const fill = () => page.$eval('svg.usage-chart rect.bar.usage-s0', (rect) => getComputedStyle(rect).fill);
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
    expect(await fill()).toBe('rgb(99, 102, 241)');
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
    expect(await fill()).toBe('rgb(129, 140, 248)');
    await page.emulateMediaFeatures([]);
    // No page broke the Content-Security-Policy (the chart has no inline style or script).
    expect(consoleErrors).toEqual([]);
  });
});
