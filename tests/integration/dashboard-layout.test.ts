import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { type Browser, type BrowserContext, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type DaguerreClient } from '../../client/src/index.js';
import { makeChromiumProfile } from '../../server/src/capture/browser/chromium-launch.js';
import { hashPassword } from '../../server/src/services/passwords.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { launchTestBrowser } from '../helpers/test-browser.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { until } from '../helpers/until.js';

/**
 * docs/dashboard.md: no dashboard page scrolls sideways from a phone to a wide screen, the
 * playground's Copy buttons never sit over the code they copy, and every control is reached with
 * Tab and shows where the focus is. The pages are found by crawling (the sidebar, then the first
 * link of each kind on every page), so a page added later is checked without touching this file.
 */

const WIDTHS = [375, 768, 1024, 1280, 1920];
const HEIGHT = 900;
const SHOTS = '/tmp/layout-shots';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PASSWORD = 'correct horse battery staple';
const MEMBER = 'maximilian.member-with-a-rather-long-address@example.test';
/** Names that do not fit a table cell: one with spaces, one without a single break opportunity. */
const LONG_NAMES = [
  'Production renderer for the marketing site preview environment in eu-west-1',
  'nightly-batch-export-worker-0123456789abcdef0123456789abcdef0123456789',
];
const ARTICLE = `<!doctype html><html><head><title>Layout fixture</title></head><body style="margin:0;font:16px sans-serif">
  <h1>A page to capture</h1><p>${'Some text. '.repeat(40)}</p></body></html>`;

/** One page to check: where it is and what it is (a pattern such as /dashboard/jobs/:id). */
interface Target {
  url: string;
  pattern: string;
  signedIn: boolean;
}

/** A path's shape: ids (uuids, long tokens, numbers) become :id, so one page of each kind is opened. */
function patternOf(path: string): string {
  return path
    .split('/')
    .map((segment) => (/^\d+$|^[0-9a-f]{8}-[0-9a-f-]{27,}$|^[A-Za-z0-9_-]{20,}$/.test(segment) ? ':id' : segment))
    .join('/');
}

describe('dashboard layout at 375–1920 px: no sideways scroll, nothing over the code, keyboard reachable', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  let browser: Browser;
  let profile: string;
  let context: BrowserContext;
  let page: Page;
  let client: DaguerreClient;
  let playgroundKey = '';
  let changes = 0;
  const prefix = `rs-test-layout-${randomBytes(4).toString('hex')}`;
  const targets: Target[] = [];
  /** Pages that answered an error status: the crawl found a link the service does not serve. */
  const broken: string[] = [];

  beforeAll(async () => {
    fixtures = new FixtureServer()
      .page('/article', ARTICLE)
      .route('/missing', (_req, res) => {
        res.writeHead(404, { 'content-type': 'text/html' });
        res.end('<h1>Not here</h1>');
      })
      .route('/hook', (_req, res) => {
        res.statusCode = 204;
        res.end();
      })
      .route('/hook-down', (_req, res) => {
        res.statusCode = 503;
        res.end();
      })
      // A page that changes on every visit, for a monitor whose runs differ.
      .route('/changing', (_req, res) => {
        changes += 1;
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(
          `<body style="margin:0;font:18px sans-serif"><div style="height:90px;width:${100 + (changes % 4) * 50}px;background:#4f46e5"></div><p>Price ${changes}</p></body>`,
        );
      });
    await fixtures.start();
    service = await startTestService({
      credits: 1_000,
      env: {
        REDIS_URL,
        JOB_QUEUE_PREFIX: prefix,
        CAPTURE_WORKERS: '2',
        RATE_LIMIT_MAX: '1000',
        STORAGE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        MONITOR_MIN_INTERVAL_SECONDS: '1',
      },
    });
    const runtime = service.runtime;
    const member = await runtime.accounts.createUser(MEMBER, 'Maximilian Member', await hashPassword(PASSWORD));
    await runtime.accounts.addMember(service.organizationId, member.id);

    // Keys with names too long for their cell, one expiring and one revoked, as a real list has. The
    // name without a break is made last: the list shows it first, so its revoke page is the one opened.
    const organizationId = service.organizationId;
    const expiring = await runtime.apiKeys.create({
      organizationId,
      userId: member.id,
      name: LONG_NAMES[0]!,
      expiresAt: new Date(Date.now() + 30 * 86_400_000),
    });
    const revoked = await runtime.apiKeys.create({ organizationId, userId: member.id, name: 'Old laptop key (revoked)' });
    await runtime.apiKeys.revoke(revoked.id);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const unbroken = await runtime.apiKeys.create({ organizationId, userId: member.id, name: LONG_NAMES[1]! });
    const keys = [expiring, unbroken];
    playgroundKey = keys[0]!.key;
    client = createClient({ baseUrl: service.url, apiKey: keys[0]!.key });
    const other = createClient({ baseUrl: service.url, apiKey: keys[1]!.key });

    // Real captures: successes, a failure (the target answers 404), async jobs with webhooks, a batch.
    const article = `${fixtures.url}/article`;
    const missing = `${fixtures.url}/missing?token=secret-value&page=${'x'.repeat(80)}`;
    await client.capture({ url: article, viewportWidth: 640, viewportHeight: 400 });
    await other.capture({
      url: `${article}?utm_source=a-very-long-campaign-name-that-goes-on-and-on`,
      format: 'jpeg',
      viewportWidth: 640,
      viewportHeight: 400,
    });
    await client.capture({ html: '<h1>Inline</h1>', viewportWidth: 320, viewportHeight: 200 });
    await expect(client.capture({ url: missing, failOnHttpError: true })).rejects.toMatchObject({ status: 502 });
    const jobs = await Promise.all([
      client.captureAsync({ url: article, viewportWidth: 640, viewportHeight: 400, webhookUrl: `${fixtures.url}/hook` }),
      other.captureAsync({ url: missing, failOnHttpError: true, webhookUrl: `${fixtures.url}/hook-down` }),
    ]);
    await Promise.all(jobs.map((job) => client.waitForCapture(job.jobId, { intervalMs: 200, timeoutMs: 60_000 })));
    const batch = await client.captureBulk({
      defaults: { viewportWidth: 320, viewportHeight: 200 },
      requests: [{ url: article }, { url: missing, failOnHttpError: true }, { html: '<p>one</p>' }, { html: '<p>two</p>', format: 'webp' }],
      webhookUrl: `${fixtures.url}/hook`,
    });
    await client.waitForBatch(batch.batchId, { intervalMs: 200, timeoutMs: 90_000 });
    // A monitor with a name and a URL too long for their cells, and runs compared with a baseline:
    // its page (the timeline) and its newest run's page (side by side, overlay, text) are crawled.
    const monitor = await client.createMonitor({
      url: `${fixtures.url}/changing?utm_source=a-very-long-campaign-name-that-goes-on-and-on`,
      intervalSeconds: 1,
      threshold: 0.5,
      name: LONG_NAMES[1]!,
      ignoreSelectors: ['.advertisement-slot-with-a-long-class-name-0123456789abcdef'],
      viewportWidth: 640,
      viewportHeight: 300,
    });
    await until(
      async () => ((await client.listRuns(monitor.monitorId)).runs.filter((run) => run.diff?.diffImageUrl).length >= 2 ? true : undefined),
      90_000,
      'two compared runs of the monitor',
      250,
    );
    await client.pauseMonitor(monitor.monitorId);
    // After the captures, so none of them is uploaded to it.
    await runtime.storageConfigs.create(service.organizationId, {
      name: 'eu-central-archive-bucket-for-screenshots-of-customer-landing-pages',
      endpoint: 'https://0123456789abcdef0123456789abcdef.eu.r2.cloudflarestorage.com',
      bucket: 'daguerre-captures-archive-with-a-long-bucket-name',
      region: 'eu-central-1',
      accessKeyId: 'AKIAIOSFODNN7EXAMPLEAKIAIOSFODNN7EXAMPLE',
      secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      isDefault: false,
    });

    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    profile = makeChromiumProfile('daguerre-layout-profile-');
    browser = await launchTestBrowser(profile);
    context = await browser.createBrowserContext();
    page = await context.newPage();
    page.setDefaultTimeout(30_000);
    page.setDefaultNavigationTimeout(30_000);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await service?.stop();
    await fixtures?.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  async function open(target: Target, width: number): Promise<number> {
    await page.setViewport({ width, height: HEIGHT });
    const response = await page.goto(target.url, { waitUntil: 'load' });
    // The script localises times after load; wait for it so the widths measured are the final ones.
    await page.waitForFunction(() => document.documentElement.classList.contains('js'));
    return response?.status() ?? 0;
  }

  /** Sideways scroll of the page, with the outermost boxes that stick out to name the cause. */
  const sidewaysOverflow = (target: Page) =>
    target.evaluate(() => {
      const root = document.documentElement;
      const limit = root.clientWidth;
      if (root.scrollWidth <= limit && root.scrollWidth <= window.innerWidth) return null;
      const clipped = (el: Element) => {
        for (let p = el.parentElement; p && p !== root && p !== document.body; p = p.parentElement) {
          if (getComputedStyle(p).overflowX !== 'visible') return true;
        }
        return false;
      };
      const describe = (el: Element) =>
        `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.classList.length ? `.${[...el.classList].join('.')}` : ''}`;
      const out = [...document.body.querySelectorAll('*')].filter((el) => el.getBoundingClientRect().right > limit + 0.5 && !clipped(el));
      const outermost = out.filter((el) => !out.includes(el.parentElement!)).slice(0, 4);
      // Text that runs out of its box (a long word) widens the page without any box doing so.
      const texts: string[] = [];
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node && texts.length < 4; node = walker.nextNode()) {
        const range = document.createRange();
        range.selectNodeContents(node);
        const right = Math.max(0, ...[...range.getClientRects()].map((r) => r.right));
        if (right > limit + 0.5 && node.parentElement && !clipped(node.parentElement) && !out.includes(node.parentElement)) {
          texts.push(
            `text “${node.textContent!.trim().slice(0, 40)}” of ${describe(node.parentElement)} (right edge at ${Math.round(right)})`,
          );
        }
      }
      return {
        scrollWidth: root.scrollWidth,
        clientWidth: limit,
        culprits: [
          ...outermost.map(
            (el) =>
              `${describe(el)} (${Math.round(el.getBoundingClientRect().width)} px wide, right edge at ${Math.round(el.getBoundingClientRect().right)})`,
          ),
          ...texts,
        ],
      };
    });

  /**
   * Tabs through the page from its start and compares what got focus with every visible, enabled
   * control. A radio group is one stop (arrows move inside it), as is a tab list (roving
   * tabindex: the other tabs say tabindex="-1"). Every stop must show a ring (outline, or a
   * box-shadow it did not have before) and be on screen, not under the sticky header.
   */
  async function tabThrough(target: Page): Promise<string[]> {
    const expected = await target.evaluate(() => {
      (document.activeElement as HTMLElement | null)?.blur?.();
      // The field left by blur() fades its ring out: take its unfocused look once that is done.
      for (const animation of document.getAnimations()) animation.finish();
      const all = [...document.querySelectorAll<HTMLElement>('a[href], button, input, select, textarea, summary, [tabindex]')];
      const describe = (el: Element) =>
        `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.getAttribute('href') ? `[href="${el.getAttribute('href')}"]` : ''}${
          el.textContent?.trim() ? ` “${el.textContent.trim().replace(/\s+/g, ' ').slice(0, 30)}”` : ''
        }`;
      const chosenRadio = new Map<string, HTMLInputElement>();
      for (const radio of all.filter((el): el is HTMLInputElement => el instanceof HTMLInputElement && el.type === 'radio')) {
        const group = `${radio.form?.id ?? ''}/${radio.name}`;
        if (radio.checked || !chosenRadio.has(group)) if (!chosenRadio.get(group)?.checked) chosenRadio.set(group, radio);
      }
      const stops = all.filter((el) => {
        if (el.getAttribute('tabindex') === '-1') return false;
        if ((el as HTMLButtonElement).disabled) return false;
        if (el instanceof HTMLInputElement && el.type === 'hidden') return false;
        if (el instanceof HTMLInputElement && el.type === 'radio' && chosenRadio.get(`${el.form?.id ?? ''}/${el.name}`) !== el)
          return false;
        if (el.tagName === 'SUMMARY' && el.parentElement?.querySelector(':scope > summary') !== el) return false;
        if (el.closest('[inert]')) return false;
        return el.checkVisibility({ visibilityProperty: true });
      });
      const baseline = (el: Element) => getComputedStyle(el).boxShadow;
      stops.forEach((el, i) => {
        el.dataset.tabStop = String(i);
        el.dataset.unfocusedShadow = baseline(el);
        for (const label of (el as HTMLInputElement).labels ?? []) label.dataset.unfocusedShadow = baseline(label);
      });
      return stops.map(describe);
    });

    const problems: string[] = [];
    const reached = new Set<number>();
    let first: string | undefined;
    for (let press = 0; press < expected.length + 40; press++) {
      await target.keyboard.press('Tab');
      const focus = await target.evaluate(() => {
        const el = document.activeElement as HTMLElement | null;
        if (!el || el === document.body || el === document.documentElement) return null;
        // The ring as it ends up, not the first frame of its transition.
        for (const animation of document.getAnimations()) animation.finish();
        const rectOf = (e: Element) => e.getBoundingClientRect();
        const ring = (e: HTMLElement) => {
          const style = getComputedStyle(e);
          const outline = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0;
          const shadow = style.boxShadow !== 'none' && style.boxShadow !== (e.dataset.unfocusedShadow ?? 'none');
          return outline || shadow;
        };
        // A control drawn by its label (a radio of a segmented switch) shows its ring there.
        const hiddenControl = getComputedStyle(el).opacity === '0' || rectOf(el).width <= 1;
        const drawn: HTMLElement[] = hiddenControl ? [...((el as HTMLInputElement).labels ?? [])] : [el];
        const visibleRing = drawn.length > 0 && drawn.some(ring);
        const box = rectOf(drawn[0] ?? el);
        const cx = Math.min(Math.max(box.left + Math.min(box.width / 2, 12), 0), window.innerWidth - 1);
        const cy = Math.min(Math.max(box.top + box.height / 2, 0), window.innerHeight - 1);
        const onScreen = box.bottom > 0 && box.top < window.innerHeight && box.right > 0 && box.left < window.innerWidth;
        const hit = document.elementFromPoint(cx, cy);
        const uncovered = Boolean(hit && (el.contains(hit) || hit.contains(el) || drawn.some((d) => d.contains(hit))));
        return {
          stop: el.dataset.tabStop ?? null,
          name: `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className ? `.${String(el.className).split(' ').join('.')}` : ''}`,
          visibleRing,
          onScreen,
          uncovered,
          coveredBy:
            hit && !uncovered ? `${hit.tagName.toLowerCase()}${hit.className ? `.${String(hit.className).split(' ').join('.')}` : ''}` : '',
        };
      });
      if (!focus) continue;
      const id = focus.stop ?? focus.name;
      if (first === id) break;
      first ??= id;
      if (focus.stop !== null) reached.add(Number(focus.stop));
      if (!focus.visibleRing) problems.push(`focus on ${focus.name} shows no outline or ring`);
      if (!focus.onScreen) problems.push(`focus on ${focus.name} is off screen`);
      else if (!focus.uncovered) problems.push(`focus on ${focus.name} is covered by ${focus.coveredBy}`);
    }
    expected.forEach((name, i) => {
      if (!reached.has(i)) problems.push(`Tab never reaches ${name}`);
    });
    return problems;
  }

  /** The text of every code block with a Copy button, line by line, must stay clear of the button, even scrolled to its end. */
  const copyButtonsOverText = (target: Page) =>
    target.evaluate(async () => {
      const found: string[] = [];
      const blocks = [...document.querySelectorAll('pre')].filter((pre) => pre.checkVisibility());
      for (const pre of blocks) {
        const block = pre.closest('.code-block, .card') ?? pre.parentElement!;
        const buttons = [...block.querySelectorAll<HTMLElement>('[data-copy]')].filter((b) => b.checkVisibility());
        for (const scroll of [0, pre.scrollWidth]) {
          pre.scrollLeft = scroll;
          await new Promise(requestAnimationFrame);
          const box = pre.getBoundingClientRect();
          const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
          const lines: DOMRect[] = [];
          for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const range = document.createRange();
            range.selectNodeContents(node);
            lines.push(...range.getClientRects());
          }
          if (lines.length === 0) found.push(`${pre.closest('[id]')?.id ?? 'pre'} has no text to measure`);
          const overlaps = (b: DOMRect, line: { left: number; right: number; top: number; bottom: number }) =>
            Math.min(line.right, box.right, b.right) - Math.max(line.left, box.left, b.left) > 0.5 &&
            Math.min(line.bottom, box.bottom, b.bottom) - Math.max(line.top, box.top, b.top) > 0.5;
          for (const button of buttons) {
            const b = button.getBoundingClientRect();
            const name = button.getAttribute('data-copy');
            // The text as it is now, where the pre shows it (the rest is scrolled out of sight)…
            if (lines.some((line) => overlaps(b, line)))
              found.push(`the Copy button of ${name} covers its text (scrolled to ${scroll ? 'the end' : 'the start'})`);
            // …and any line as long as the pre is wide: another URL or option would make it so.
            else if (lines.some((line) => overlaps(b, { left: box.left, right: box.right, top: line.top, bottom: line.bottom })))
              found.push(`the Copy button of ${name} sits over a line of its code (a longer line would run under it)`);
          }
        }
        pre.scrollLeft = 0;
      }
      return [...new Set(found)];
    });

  /** Tables wider than their card at this width (they scroll inside it, which is allowed below the widest width). */
  const scrollingTables = (target: Page) =>
    target.$$eval('.table-wrap', (wraps) =>
      wraps
        .filter((wrap) => wrap.checkVisibility() && wrap.scrollWidth > wrap.clientWidth + 1)
        .map((wrap) => `${wrap.querySelector('table')?.id || 'a table'} is ${wrap.scrollWidth} px wide in ${wrap.clientWidth} px`),
    );

  /** Table cells whose text runs out of the cell over its neighbours (text that is clipped or ellipsised is fine). */
  const spillingCells = (target: Page) =>
    target.$$eval('table td, table th', (cells) => {
      const found: string[] = [];
      const clips = (el: Element) => {
        const style = getComputedStyle(el);
        return style.overflowX !== 'visible' || style.clipPath !== 'none' || style.clip !== 'auto';
      };
      for (const cell of cells) {
        if (!cell.checkVisibility()) continue;
        const box = cell.getBoundingClientRect();
        let spill = 0;
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          let hidden = false;
          // Up to the table (its wrapper scrolls, which is allowed): a visually hidden header row clips its text.
          for (let el = node.parentElement; el && el !== cell.closest('table')!.parentElement; el = el.parentElement) hidden ||= clips(el);
          if (hidden) continue;
          const range = document.createRange();
          range.selectNodeContents(node);
          for (const rect of range.getClientRects()) if (rect.width > 0) spill = Math.max(spill, rect.right - box.right);
        }
        if (spill > 1)
          found.push(
            `text “${cell.textContent!.trim().replace(/\s+/g, ' ').slice(0, 40)}” of ${cell.closest('table')?.id || 'a table'} runs ${Math.round(spill)} px out of its cell`,
          );
      }
      return [...new Set(found)].slice(0, 3);
    });

  async function checkLayout(target: Target, width: number): Promise<string[]> {
    const problems: string[] = [];
    const overflow = await sidewaysOverflow(page);
    if (overflow)
      problems.push(`scrolls sideways: ${overflow.scrollWidth} px in ${overflow.clientWidth} px, by ${overflow.culprits.join(', ')}`);
    if (width === 375 || width === 1920) {
      const name = target.pattern.replace(/^\/dashboard\/?/, '').replace(/[/:]+/g, '-') || 'root';
      await page.screenshot({ path: `${SHOTS}/${name}-${width}.png`, fullPage: true });
    }
    // What a disclosure holds (a table of numbers, a payload) must fit as well once opened.
    const opened = await page.$$eval(
      'details:not([open])',
      (all) => all.map((details) => ((details as HTMLDetailsElement).open = true)).length,
    );
    if (opened > 0) {
      const inside = await sidewaysOverflow(page);
      if (inside)
        problems.push(
          `scrolls sideways with its ${opened} disclosures open: ${inside.scrollWidth} px in ${inside.clientWidth} px, by ${inside.culprits.join(', ')}`,
        );
    }
    problems.push(...(await spillingCells(page)));
    const wide = await scrollingTables(page);
    if (wide.length > 0) console.log(`layout: ${target.pattern} at ${width} px: ${wide.join('; ')} (scrolls inside its card)`);
    // On a wide screen the list of batches is in sight whole (its table once scrolled at every width).
    if (width === 1920 && target.pattern === '/dashboard/batches') problems.push(...wide.map((w) => `${w} at the widest width`));
    if (target.pattern === '/dashboard/playground') {
      // The playground's script answers the signed-link block a moment after load (data-ready: a
      // link, or a prompt for a URL); with no key to sign with, the block's text is the server's own.
      await page.waitForFunction(
        () =>
          document.querySelector('#pg-signed-url')?.hasAttribute('data-ready') === true ||
          document.querySelectorAll('#pg-signed-key option').length === 0,
      );
      problems.push(...(await copyButtonsOverText(page)));
      await page.click('#tab-ts');
      problems.push(...(await copyButtonsOverText(page)));
      await page.click('#tab-curl');
    }
    await page.reload({ waitUntil: 'load' });
    problems.push(...(await tabThrough(page)));
    return problems.map((p) => `${target.pattern} at ${width} px: ${p}`);
  }

  /** Signs in through the form, as a person does. */
  async function signIn(): Promise<void> {
    await page.goto(`${service.url}/dashboard/sign-in`, { waitUntil: 'load' });
    await page.type('#email', MEMBER);
    await page.type('#password', PASSWORD);
    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('form[action$="/sign-in"] button[type="submit"]')]);
    expect(new URL(page.url()).pathname).toBe('/dashboard/usage');
  }

  it('finds every page: the sign-in page, each link of the navigation and the first link of each kind on those pages', async () => {
    targets.push({ url: `${service.url}/dashboard/sign-in`, pattern: '/dashboard/sign-in', signedIn: false });
    await signIn();
    const seen = new Set(['/dashboard/sign-in']);
    const queue: string[] = [];
    const nav = await page.$$eval('nav a[href^="/dashboard/"]', (links) => links.map((a) => (a as HTMLAnchorElement).href));
    expect(nav.length).toBeGreaterThanOrEqual(5);
    for (const url of nav) {
      const pattern = patternOf(new URL(url).pathname);
      if (!seen.has(pattern)) {
        seen.add(pattern);
        queue.push(url);
      }
    }
    while (queue.length > 0 && targets.length < 40) {
      const url = queue.shift()!;
      const pattern = patternOf(new URL(url).pathname);
      // Downloads (a CSV export, a capture's file) are not pages.
      const kind = await page.evaluate(async (href) => {
        const response = await fetch(href, { redirect: 'manual' });
        const type = response.headers.get('content-type') ?? '';
        return { status: response.status, type, text: type.startsWith('text/plain') ? (await response.text()).slice(0, 160) : '' };
      }, url);
      if (!kind.type.startsWith('text/html')) {
        if (kind.status >= 400) broken.push(`${pattern} (a download) answers ${kind.status}${kind.text ? `: ${kind.text}` : ''}`);
        continue;
      }
      const response = await page.goto(url, { waitUntil: 'load' });
      const status = response?.status() ?? 0;
      if (status >= 400) {
        broken.push(`${pattern} answers ${status}`);
        continue;
      }
      targets.push({ url, pattern, signedIn: true });
      const links = await page.$$eval('main a[href^="/dashboard/"]', (anchors) => anchors.map((a) => (a as HTMLAnchorElement).href));
      for (const link of links) {
        const next = patternOf(new URL(link).pathname);
        if (!seen.has(next)) {
          seen.add(next);
          queue.push(link);
        }
      }
    }
    console.log(`layout: pages checked: ${targets.map((t) => t.pattern).join(', ')}`);
    expect(broken, 'pages linked from the dashboard that answer an error').toEqual([]);
    // The lists are full, so their detail pages are among those found.
    expect(targets.map((t) => t.pattern)).toEqual(
      expect.arrayContaining(['/dashboard/usage', '/dashboard/keys', '/dashboard/storage', '/dashboard/playground', '/dashboard/batches']),
    );
  }, 120_000);

  for (const width of WIDTHS) {
    it(`at ${width} px: no page scrolls sideways, no Copy button covers code, Tab reaches every control with a visible ring`, async () => {
      expect(targets.length).toBeGreaterThan(0);
      const problems: string[] = [];
      for (const target of targets) {
        if (!target.signedIn) await context.deleteCookie(...(await context.cookies()).filter((c) => c.name === 'daguerre_session'));
        const status = await open(target, width);
        if (status >= 400) problems.push(`${target.pattern} at ${width} px: answers ${status}`);
        problems.push(...(await checkLayout(target, width)));
        if (!target.signedIn) await signIn();
      }
      expect(problems).toEqual([]);
    }, 240_000);
  }

  it('the playground after a capture (image, quality report, metadata, a long URL in the snippets) fits every width', async () => {
    await page.setViewport({ width: 1280, height: HEIGHT });
    await page.goto(`${service.url}/dashboard/playground`, { waitUntil: 'load' });
    await page.$eval('#pg-key', (el, key) => ((el as HTMLInputElement).value = key), playgroundKey);
    const longUrl = `${fixtures.url}/article?campaign=${'a-rather-long-campaign-parameter-'.repeat(4)}end`;
    await page.type('#pg-url', longUrl);
    await page.click('#metadata');
    await page.click('#pg-submit');
    await page.waitForSelector('#pg-result img', { timeout: 60_000 });
    await page.waitForFunction(() => document.querySelector('#pg-insight dl') !== null);
    // The signed link (a long URL too) is asked for in the background: measured once it is there.
    await page.waitForSelector('#pg-signed-url[data-ready="true"]', { timeout: 60_000 });
    const problems: string[] = [];
    for (const width of WIDTHS) {
      await page.setViewport({ width, height: HEIGHT });
      const overflow = await sidewaysOverflow(page);
      if (overflow)
        problems.push(
          `at ${width} px: scrolls sideways: ${overflow.scrollWidth} px in ${overflow.clientWidth} px, by ${overflow.culprits.join(', ')}`,
        );
      problems.push(...(await copyButtonsOverText(page)).map((p) => `at ${width} px: ${p}`));
      if (width === 375 || width === 1920) {
        // From the top, so the sticky bar is drawn where it belongs in the full-page picture.
        await page.evaluate(() => window.scrollTo(0, 0));
        await page.screenshot({ path: `${SHOTS}/playground-result-${width}.png`, fullPage: true });
      }
    }
    expect(await page.$eval('#pg-curl', (el) => el.textContent)).toContain('a-rather-long-campaign-parameter-');
    expect(problems).toEqual([]);
  }, 120_000);

  it('the skip link is the first stop, shows on focus and moves the focus to the content', async () => {
    await page.setViewport({ width: 375, height: HEIGHT });
    await page.goto(`${service.url}/dashboard/keys`, { waitUntil: 'load' });
    await page.keyboard.press('Tab');
    const skip = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement;
      const box = el.getBoundingClientRect();
      return { className: el.className, visible: box.top >= 0 && box.bottom <= window.innerHeight && box.width > 0 };
    });
    expect(skip).toEqual({ className: 'skip-link', visible: true });
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
    // The next Tab goes to the first control of the content, not back to the header.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => Boolean(document.activeElement?.closest('main')))).toBe(true);
    await page.screenshot({ path: `${SHOTS}/focus-ring-375.png` });
  });
});
