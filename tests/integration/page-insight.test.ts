import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { CaptureResult, ErrorBody, PageMetadata } from '@daguerre/contract';
import { parseHTML } from 'linkedom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';

/**
 * docs/page-insight.md: metadata=true (field by field against the page's own markup, on real saved
 * pages and on a page written for it) and the content formats html, markdown (against the article's
 * text Readability's own corpus expects), text and mhtml, with their errors, cache and async jobs.
 */

const REAL = new URL('../fixtures/pages/insight/real/', import.meta.url).pathname;
const REAL_PAGES = readdirSync(REAL)
  .filter((name) => name.endsWith('.html') && !name.endsWith('.expected.html'))
  .map((name) => name.replace(/\.html$/, ''));

/** The oracle: the page's head read from the saved file with linkedom (not with the browser). */
function declaredIn(html: string, pageUrl: string) {
  const { document } = parseHTML(html);
  const collapse = (text: string | null | undefined) => (text ?? '').replace(/\s+/g, ' ').trim();
  const prefixed = (prefix: string) => {
    const found: Record<string, string> = {};
    for (const element of document.querySelectorAll('meta[property], meta[name]')) {
      const key = (element.getAttribute('property') || element.getAttribute('name') || '').trim();
      const content = element.getAttribute('content');
      if (!key.toLowerCase().startsWith(prefix) || !content) continue;
      const name = key.slice(prefix.length);
      if (name && !(name in found)) found[name] = content.trim();
    }
    return found;
  };
  const description = [...document.querySelectorAll('head meta[name]')].find(
    (m) => m.getAttribute('name')!.toLowerCase() === 'description',
  );
  const canonical = [...document.querySelectorAll('link[rel][href]')].find((l) =>
    l.getAttribute('rel')!.toLowerCase().split(/\s+/).includes('canonical'),
  );
  const base = document.querySelector('base[href]')?.getAttribute('href');
  const baseUrl = base ? new URL(base, pageUrl).href : pageUrl;
  const openGraph = prefixed('og:');
  const twitter = prefixed('twitter:');
  return {
    title: collapse(document.querySelector('title')?.textContent),
    description: description?.getAttribute('content')?.trim() || openGraph.description || twitter.description || null,
    canonicalUrl: canonical ? new URL(canonical.getAttribute('href')!.trim(), baseUrl).href : null,
    language: document.documentElement.getAttribute('lang')?.trim() || null,
    openGraph,
    twitter,
  };
}

/**
 * Letters and digits only, lower case, no spaces: Markdown syntax, escapes and where a converter
 * put spaces between inline elements do not count.
 */
function words(text: string): string {
  return text
    .replace(/\](?:\((?:[^()]|\([^()]*\))*\))/g, ' ')
    .replace(/\\(.)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '');
}

/** The paragraphs of Readability's expected article (at least 80 characters), as words. */
function expectedParagraphs(name: string): string[] {
  const { document } = parseHTML(readFileSync(`${REAL}${name}.expected.html`, 'utf8'));
  return [...document.querySelectorAll('p')].map((p) => words(p.textContent ?? '')).filter((text) => text.length >= 80);
}

describe('page insight: metadata and content formats', () => {
  let service: TestService;
  let fixtures: FixtureServer;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    fixtures.route('/insight/with-cookies', (_req, res) =>
      res
        .writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          'set-cookie': ['session=secret-cookie-value; Path=/', 'other=2'],
          'x-served-by': 'fixture',
          'content-language': 'fr',
        })
        .end('<title>Cookies</title><p>cookies</p>'),
    );
    fixtures.route('/insight/hop-1', (_req, res) => res.writeHead(302, { location: '/insight/hop-2' }).end());
    fixtures.route('/insight/hop-2', (_req, res) => res.writeHead(301, { location: '/insight/article.html' }).end());
    fixtures.page(
      '/insight/scripted',
      '<title>Scripted</title><body><main id="m"><p>static</p></main><script>document.getElementById("m").insertAdjacentHTML("beforeend", "<p id=added>added by script</p>")</script></body>',
    );
    service = await startTestService({ env: { RATE_LIMIT_MAX: '1000' }, credits: 1000 });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  const json = (options: Record<string, unknown>) =>
    service.client.captureJson({ viewportWidth: 1024, viewportHeight: 700, ...options } as never);

  it('reads every metadata field of a page written for it, and the file sha256', async () => {
    const url = `${fixtures.url}/insight/article.html`;
    const result = await json({ url, metadata: true });
    const metadata = result.data.metadata!;
    expect(metadata).toMatchObject({
      title: 'Lighthouses of the North Sea – Daguerre fixture',
      description: 'A short history of the lighthouses that guard the North Sea coast, and the keepers who ran them.',
      canonicalUrl: `${fixtures.url}/insight/canonical/lighthouses`,
      language: 'en-GB',
      openGraph: {
        title: 'Lighthouses of the North Sea',
        description: 'Keepers, lamps and storms.',
        type: 'article',
        url: 'https://example.org/lighthouses',
        image: 'https://example.org/images/lighthouse.png',
        site_name: 'Fixture Gazette',
      },
      twitter: { card: 'summary_large_image', site: '@fixturegazette', title: 'Lighthouses (Twitter)' },
      // Largest first: the touch icon comes before the favicon declared above it.
      icons: [
        { rel: 'apple-touch-icon', href: `${fixtures.url}/insight/touch-icon.png`, sizes: '180x180', type: null },
        { rel: 'icon', href: `${fixtures.url}/insight/favicon.png`, sizes: '32x32', type: 'image/png' },
      ],
      // Its h1; no byline ("By the nineteenth century, …" is a sentence) and no date.
      articleTitle: 'Lighthouses of the North Sea',
      author: null,
      authors: [],
      publishedAt: null,
      modifiedAt: null,
      httpStatus: 200,
      redirects: [],
    });
    expect(metadata.httpHeaders['content-type']).toBe('text/html; charset=utf-8');
    // The web font drew the article; the sticky header's sans-serif came from the system.
    const face = metadata.fonts.find((font) => font.family === 'Liberation Mono');
    expect(face).toMatchObject({ webFont: true });
    expect(face!.glyphs).toBeGreaterThan(100);
    expect(metadata.fonts.some((font) => !font.webFont)).toBe(true);
    expect(metadata.timings.navigation).toBeGreaterThanOrEqual(0);
    expect(metadata.timings.load).toBeGreaterThan(0);
    expect(typeof metadata.timings.capture).toBe('number');
    const image = Buffer.from(result.data.imageData!.split(',')[1]!, 'base64');
    expect(metadata.sha256).toBe(createHash('sha256').update(image).digest('hex'));
  });

  it("reads the article's own title, authors and dates beside document.title, and every icon, largest first", async () => {
    const metadata = (await json({ url: `${fixtures.url}/insight/article-meta.html`, metadata: true })).data.metadata!;
    const icon = (name: string, rel = 'icon') => expect.objectContaining({ rel, href: `${fixtures.url}/insight/icons/${name}` });
    expect(metadata).toMatchObject({
      title: 'Tide tables, explained | Fixture Gazette',
      // The article's h1, not the logo's, nor the longer og:title.
      articleTitle: 'Tide tables, explained',
      // JSON-LD names (one by reference in the @graph), confirmed by the byline, not the site's meta author
      // nor the related story's byline; as the markup writes them, not as the CSS upper-cases them.
      author: 'Ann Lee and Bo Chan',
      authors: ['Ann Lee', 'Bo Chan'],
      publishedAt: '2021-03-04T08:30:00.000Z',
      modifiedAt: '2021-03-05T10:00:00.000Z',
      // No <meta name=description>: Open Graph's.
      description: 'Why two high waters a day, and when.',
      icons: [
        icon('logo.svg'),
        icon('512.png'),
        icon('192.png'),
        icon('180.png', 'apple-touch-icon'),
        icon('152.png'),
        icon('144.png'),
        icon('128.png'),
        icon('96.png'),
        icon('64.png'),
        icon('48.png'),
        icon('32.png'),
        icon('16.png'),
        icon('legacy.ico', 'shortcut icon'),
        icon('mask.svg', 'mask-icon'),
      ],
    });

    const inline = (
      await json({
        html: `<html lang="en-US"><head><title>Harbour lights - Coast Weekly</title><meta property="og:site_name" content="Coast Weekly">
          <meta name="author" content="Coast Weekly"><meta name="twitter:description" content="From the card"></head>
          <body><article itemscope itemtype="https://schema.org/Article"><h1 itemprop="headline">Harbour lights</h1>
          <div class="article-byline" style="text-transform: uppercase">By <span itemprop="author" itemscope itemtype="https://schema.org/Person"><span itemprop="name">Dana Ortiz</span></span>
          <span class="published">Published Jan 5, 2017 10:00 AM ET</span></div><p>The harbour has two lights.</p></article></body></html>`,
        metadata: true,
      })
    ).data.metadata!;
    expect(inline).toMatchObject({
      title: 'Harbour lights - Coast Weekly',
      articleTitle: 'Harbour lights',
      author: 'Dana Ortiz',
      authors: ['Dana Ortiz'],
      // Eastern time in January: UTC-5.
      publishedAt: '2017-01-05T15:00:00.000Z',
      modifiedAt: null,
      description: 'From the card',
      icons: [],
    });
  });

  it('has no metadata unless asked, and a compact header form in binary mode', async () => {
    const url = `${fixtures.url}/insight/article.html`;
    expect((await json({ url })).data.metadata).toBeUndefined();
    const file = await service.client.capture({ url, metadata: true, viewportWidth: 640, viewportHeight: 480 });
    expect(file.headers['x-capture-sha256']).toBe(createHash('sha256').update(file.bytes).digest('hex'));
    expect(decodeURIComponent(file.headers['x-page-title']!)).toBe('Lighthouses of the North Sea – Daguerre fixture');
    expect(file.headers['x-page-language']).toBe('en-GB');
  });

  it('removes cookies from the headers, follows redirects, falls back to Content-Language', async () => {
    const cookies = (await json({ url: `${fixtures.url}/insight/with-cookies`, metadata: true })).data.metadata!;
    expect(cookies.httpHeaders['x-served-by']).toBe('fixture');
    expect(Object.keys(cookies.httpHeaders).map((name) => name.toLowerCase())).not.toContain('set-cookie');
    expect(JSON.stringify(cookies)).not.toContain('secret-cookie-value');
    expect(cookies.language).toBe('fr');
    const hops = (await json({ url: `${fixtures.url}/insight/hop-1`, metadata: true })).data.metadata!;
    expect(hops.redirects).toEqual([
      { url: `${fixtures.url}/insight/hop-1`, status: 302, via: 'http' },
      { url: `${fixtures.url}/insight/hop-2`, status: 301, via: 'http' },
    ]);
    expect(hops.httpStatus).toBe(200);
  });

  it('counts console errors, uncaught exceptions and failed requests, listing the first ones', async () => {
    const metadata = (await json({ url: `${fixtures.url}/insight/noisy.html`, metadata: true })).data.metadata!;
    expect(metadata.consoleErrors.count).toBe(3);
    expect(metadata.consoleErrors.first.map((entry) => entry.message)).toEqual([
      'first console error from the page',
      'second console error',
      expect.stringContaining('thrown after load handler'),
    ]);
    expect(metadata.failedRequests.count).toBe(1);
    expect(metadata.failedRequests.first).toEqual([
      { url: `${fixtures.url}/insight/no-such-picture.png`, resourceType: 'image', reason: 'HTTP 404' },
    ]);
  });

  it('has the inline html mode metadata: no status, headers or redirects', async () => {
    const metadata = (
      await json({
        html: '<html lang="nl"><title>Inline</title><meta name="description" content="in line"><p>x</p></html>',
        metadata: true,
      })
    ).data.metadata!;
    expect(metadata).toMatchObject({
      title: 'Inline',
      description: 'in line',
      language: 'nl',
      httpStatus: null,
      httpHeaders: {},
      redirects: [],
    });
  });

  describe('real saved pages', () => {
    const results = new Map<string, CaptureResult>();
    // One png with metadata (and its quality report) and one markdown file per page.
    const markdowns = new Map<string, string>();
    beforeAll(async () => {
      for (const name of REAL_PAGES) {
        const url = `${fixtures.url}/insight/real/${name}.html`;
        // Settled pages (networkidle0): the quality report is judged here for false alarms; a lazy
        // picture still arriving on a busy machine is a true finding (a viewport capture does not
        // wait for late pictures; docs/capture-fidelity.md).
        results.set(name, await json({ url, metadata: true, waitUntil: 'networkidle0' }));
        markdowns.set(name, (await json({ url, format: 'markdown' })).data.content!);
      }
    }, 300_000);

    it("reads metadata that matches each page's own markup, field by field", () => {
      for (const name of REAL_PAGES) {
        const url = `${fixtures.url}/insight/real/${name}.html`;
        const expected = declaredIn(readFileSync(`${REAL}${name}.html`, 'utf8'), url);
        const metadata = results.get(name)!.data.metadata! as PageMetadata;
        expect({ name, ...pick(metadata) }).toEqual({ name, ...expected });
        expect(metadata.httpStatus, name).toBe(200);
      }
    });

    it('gives the article as Markdown: the paragraphs Readability expects are in it', () => {
      const coverage: Record<string, number> = {};
      for (const name of REAL_PAGES) {
        const markdown = words(markdowns.get(name)!);
        const paragraphs = expectedParagraphs(name);
        const found = paragraphs.filter((paragraph) => markdown.includes(paragraph)).length;
        coverage[name] = paragraphs.length === 0 ? 1 : found / paragraphs.length;
      }
      for (const [name, share] of Object.entries(coverage))
        expect(share, `${name}: ${JSON.stringify(coverage)}`).toBeGreaterThanOrEqual(0.9);
    });

    it('raises no quality finding on them (images replaced by local ones, nothing covering)', () => {
      const alarms = REAL_PAGES.filter((name) => !results.get(name)!.data.quality.ok).map((name) => ({
        name,
        findings: results.get(name)!.data.quality.findings,
      }));
      expect(alarms).toEqual([]);
    });
  });

  it('returns the DOM after scripts as html, the visible text as text, the Markdown of the article', async () => {
    const html = await service.client.capture({ url: `${fixtures.url}/insight/scripted`, format: 'html' });
    expect(html.contentType).toBe('text/html; charset=utf-8');
    expect(html.fileName).toMatch(/\.html$/);
    expect(Buffer.from(html.bytes).toString('utf8')).toContain('<p id="added">added by script</p>');

    const text = await service.client.capture({ url: `${fixtures.url}/insight/article.html`, format: 'text' });
    expect(text.contentType).toBe('text/plain; charset=utf-8');
    const body = Buffer.from(text.bytes).toString('utf8');
    expect(body).toContain('Lighthouses of the North Sea\n');
    expect(body).toContain("A keeper's day was measured in wicks and logbooks.");

    const markdown = await json({ url: `${fixtures.url}/insight/article.html`, format: 'markdown' });
    const content = markdown.data.content!;
    expect(content.startsWith('# Lighthouses of the North Sea\n')).toBe(true);
    expect(content).toContain('## The keepers');
    expect(content).toContain('-   Eddystone');
    expect(content).toContain('Storms could cut a rock station off from the shore for weeks at a time.');
    expect(markdown.data.imageData).toBeUndefined();
    expect(markdown.data.quality.ok).toBe(true);
  });

  it("gives an element with clipSelector, and Chromium's mhtml snapshot", async () => {
    const element = await json({ url: `${fixtures.url}/insight/scripted`, format: 'html', clipSelector: '#m' });
    expect(element.data.content).toBe('<main id="m"><p>static</p><p id="added">added by script</p></main>');
    const mhtml = await service.client.capture({ url: `${fixtures.url}/insight/article.html`, format: 'mhtml' });
    expect(mhtml.contentType).toBe('multipart/related');
    const archive = Buffer.from(mhtml.bytes).toString('utf8');
    expect(archive).toContain('Snapshot-Content-Location: ' + `${fixtures.url}/insight/article.html`);
    expect(archive).toMatch(/Content-Type: multipart\/related;[\s\S]*type="text\/html"/);
    // The image travels inside the archive (Chromium's MHTML keeps no web fonts).
    expect(archive).toContain(`Content-Location: ${fixtures.url}/img/swatch.png`);
  });

  it('answers 422 NO_CONTENT for an empty page in every content format, charging nothing', async () => {
    const before = await service.client.usage();
    for (const format of ['html', 'markdown', 'text', 'mhtml']) {
      const response = await service.get(
        `/capture?url=${encodeURIComponent(`${fixtures.url}/insight/blank.html`)}&format=${format}&apiKey=${service.apiKey}`,
      );
      expect(response.status, format).toBe(422);
      const error = ((await response.json()) as ErrorBody).error;
      expect(error.code).toBe('NO_CONTENT');
      expect(error.message).toContain(`no content to return as ${format}`);
    }
    expect((await service.client.usage()).credits.remaining).toBe(before.credits.remaining);
  });

  it('refuses clipSelector with mhtml and openaiSchema without a prompt, naming the field', async () => {
    const mhtml = await service.get(
      `/capture?url=${encodeURIComponent(`${fixtures.url}/insight/article.html`)}&format=mhtml&clipSelector=main&apiKey=${service.apiKey}`,
    );
    expect(mhtml.status).toBe(400);
    expect(((await mhtml.json()) as ErrorBody).error.details).toEqual([expect.objectContaining({ field: 'clipSelector' })]);
    const bad = await service.get(`/capture?html=x&format=nope&apiKey=${service.apiKey}`);
    expect(((await bad.json()) as ErrorBody).error.message).toContain(
      'format must be one of: png, webp, jpeg, pdf, html, markdown, text, mhtml',
    );
  });

  it('caches a content capture like an image (X-Cache: HIT, same bytes)', async () => {
    const options = { url: `${fixtures.url}/insight/article.html`, format: 'markdown' as const, cacheEnabled: true, metadata: true };
    const first = await service.client.capture(options);
    const second = await service.client.capture(options);
    expect(first.headers['x-cache']).toBe('MISS');
    expect(second.headers['x-cache']).toBe('HIT');
    expect(Buffer.from(second.bytes).equals(Buffer.from(first.bytes))).toBe(true);
    expect(second.headers['x-capture-sha256']).toBe(first.headers['x-capture-sha256']);
  });
});

describe('content formats with storage and signed links', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  let s3: TestS3;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    s3 = await startS3();
    service = await startTestService({ credits: 100 });
  });
  afterAll(async () => {
    await service?.stop();
    await s3?.stop();
    await fixtures?.stop();
  });

  it('uploads a markdown file to per-request storage with its content type', async () => {
    const result = await service.client.captureJson({
      url: `${fixtures.url}/insight/article.html`,
      format: 'markdown',
      requestStorageEnabled: true,
      requestStorageEndpoint: s3.endpoint,
      requestStorageAccessKeyId: s3.accessKeyId,
      requestStorageSecretAccessKey: s3.secretAccessKey,
      requestStorageBucket: s3.bucket,
    });
    const prefix = `${s3.endpoint}/${s3.bucket}/`;
    expect(result.data.url!.startsWith(prefix)).toBe(true);
    const key = result.data.url!.slice(prefix.length);
    expect(key).toMatch(/\.md$/);
    const stored = await s3.getObject(key);
    expect(stored.contentType).toBe('text/markdown');
    expect(stored.bytes.toString('utf8')).toBe(result.data.content);
  });

  it('answers a signed link with the text of the page, charging one credit', async () => {
    const created = await service.runtime.apiKeys.create({ organizationId: service.organizationId, name: 'insight links' });
    const query = new URLSearchParams({ url: `${fixtures.url}/insight/article.html`, format: 'text', keyId: created.id }).toString();
    const signature = createHmac('sha256', created.signingSecret).update(query, 'utf8').digest('hex');
    const before = (await service.client.usage()).credits.remaining;
    const response = await service.get(`/capture?${query}&signature=${signature}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(response.headers.get('x-capture-quality')).toBe('ok');
    expect(await response.text()).toContain('Lighthouses of the North Sea');
    expect((await service.client.usage()).credits.remaining).toBe(before - 1);
  });
});

describe('page insight in async jobs', () => {
  const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `rs-test-${randomBytes(4).toString('hex')}`;
  let service: TestService;
  let fixtures: FixtureServer;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    service = await startTestService({ env: { REDIS_URL, JOB_QUEUE_PREFIX: prefix, CAPTURE_WORKERS: '1' } });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  it('puts metadata and the quality report into the job result, and serves the markdown file', async () => {
    const accepted = await service.client.captureAsync({ url: `${fixtures.url}/insight/article.html`, format: 'markdown', metadata: true });
    const job = await service.client.waitForCapture(accepted.jobId, { timeoutMs: 60_000 });
    expect(job.status).toBe('succeeded');
    expect(job.result!.quality).toEqual({ ok: true, findings: [] });
    expect(job.result!.metadata!.title).toBe('Lighthouses of the North Sea – Daguerre fixture');
    const file = await service.client.getCaptureFile(accepted.jobId);
    expect(file.contentType).toBe('text/markdown; charset=utf-8');
    expect(job.result!.metadata!.sha256).toBe(createHash('sha256').update(file.bytes).digest('hex'));
  });
});

function pick(metadata: PageMetadata) {
  const { title, description, canonicalUrl, language, openGraph, twitter } = metadata;
  return { title, description, canonicalUrl, language, openGraph, twitter };
}
