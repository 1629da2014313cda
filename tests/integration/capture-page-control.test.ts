import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { decodePng, near } from '../helpers/images.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/** Reports what the page saw (time zone, language) through the fixture's /report beacon. */
const PROBE = `<!doctype html><html><body><script>
  const q = new URLSearchParams({ tag: 'probe', tz: Intl.DateTimeFormat().resolvedOptions().timeZone, lang: navigator.language,
    reduced: String(matchMedia('(prefers-reduced-motion: reduce)').matches), print: String(matchMedia('print').matches) });
  fetch('/report?' + q).then(() => { const d = document.createElement('i'); d.id = 'done'; document.body.appendChild(d); });
</script></body></html>`;

const BOXES = `<!doctype html><html><head><style>
  body { margin: 0; background: #fff; } div { width: 100px; height: 100px; }
  #hide { background: rgb(255, 0, 0); } #keep { background: rgb(0, 0, 255); }
</style></head><body><div id="hide"></div><div id="keep"></div></body></html>`;

/** One slot, so every capture reuses the same warm context: options must not leak to the next. */
describe('page control: hideSelectors, styles, timezone, locale, mediaType, reducedMotion', () => {
  let service: TestService;
  let fixtures: FixtureServer;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    fixtures.route('/pc/probe.html', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(PROBE);
    });
    fixtures.route('/pc/boxes.html', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(BOXES);
    });
    service = await startTestService({ env: { MAX_CONCURRENCY: '1', RATE_LIMIT_MAX: '1000' } });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  const probe = async (options: {
    timezone?: string;
    locale?: string;
    mediaType?: 'screen' | 'print';
    reducedMotion?: boolean;
  }): Promise<Record<string, string>> => {
    fixtures.reset();
    await service.client.capture({
      url: `${fixtures.url}/pc/probe.html`,
      waitForSelector: '#done',
      viewportWidth: 200,
      viewportHeight: 100,
      ...options,
    });
    const report = fixtures.reports('probe')[0]!;
    const document = fixtures.requestsTo('/pc/probe.html')[0]!;
    return { ...report, acceptLanguage: String(document.headers['accept-language'] ?? '') };
  };

  it('shows the page the time zone and locale asked for, and Accept-Language; the next capture sees neither', async () => {
    const baseline = await probe({});
    const zone = baseline.tz === 'Asia/Tokyo' ? 'America/New_York' : 'Asia/Tokyo';

    const set = await probe({ timezone: zone, locale: 'fr-FR' });
    expect(set.tz).toBe(zone);
    expect(set.lang).toBe('fr-FR');
    expect(set.acceptLanguage).toMatch(/^fr-FR/);

    const after = await probe({});
    expect(after.reduced).toBe('false');
    expect(after.print).toBe('false');
    expect(after.tz).toBe(baseline.tz);
    expect(after.lang).toBe(baseline.lang);
    expect(after.acceptLanguage).toBe(baseline.acceptLanguage);
  });

  it('keeps the settings on the warm page when the next capture asks for the same ones (not sent again), and after a pdf printed in between', async () => {
    const zone = (await probe({})).tz === 'Asia/Tokyo' ? 'America/New_York' : 'Asia/Tokyo';
    const settings = { timezone: zone, locale: 'de-DE', reducedMotion: true };
    for (let i = 0; i < 2; i++)
      expect(await probe(settings)).toMatchObject({
        tz: zone,
        lang: 'de-DE',
        reduced: 'true',
        print: 'false',
        acceptLanguage: expect.stringMatching(/^de-DE/),
      });
    // A pdf switches the page to print media and back: the next image must not be left in print.
    await service.client.capture({ html: '<p>printed</p>', format: 'pdf', pdfPageLayout: 'single', ...settings });
    expect(await probe(settings)).toMatchObject({ tz: zone, lang: 'de-DE', reduced: 'true', print: 'false' });
    expect(await probe({})).toMatchObject({ tz: expect.not.stringMatching(zone), reduced: 'false' });
  });

  it('gives transparent corners with omitBackground, opaque ones without', async () => {
    const page =
      '<!doctype html><html><body style="margin:0"><div style="margin:40px;width:20px;height:20px;background:red"></div></body></html>';
    const clear = decodePng(
      (await service.client.capture({ html: page, viewportWidth: 100, viewportHeight: 100, scaleFactor: 1, omitBackground: true })).bytes,
    );
    expect(clear.pixel(0, 0)[3]).toBe(0);
    expect(near(clear.pixel(50, 50), [255, 0, 0, 255])).toBe(true);
    const opaque = decodePng((await service.client.capture({ html: page, viewportWidth: 100, viewportHeight: 100, scaleFactor: 1 })).bytes);
    expect(opaque.pixel(0, 0)[3]).toBe(255);
  });

  it('takes the same options as a POST /capture JSON body', async () => {
    fixtures.reset();
    const response = await fetch(`${service.url}/capture`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': service.apiKey },
      body: JSON.stringify({
        url: `${fixtures.url}/pc/probe.html`,
        waitForSelector: '#done',
        viewportWidth: 200,
        viewportHeight: 100,
        timezone: 'Pacific/Auckland',
        locale: 'ja-JP',
      }),
    });
    expect(response.status).toBe(200);
    expect(fixtures.reports('probe')[0]).toMatchObject({ tz: 'Pacific/Auckland', lang: 'ja-JP' });
  });

  it('shows the page prefers-reduced-motion and print media when asked', async () => {
    const seen = await probe({ reducedMotion: true, mediaType: 'print' });
    expect(seen.reduced).toBe('true');
    expect(seen.print).toBe('true');
    // The same warm context, next capture without the options: neither survives.
    const after = await probe({});
    expect(after.reduced).toBe('false');
    expect(after.print).toBe('false');
  });

  it('hides hideSelectors elements keeping the layout, and applies styles', async () => {
    const file = await service.client.capture({
      url: `${fixtures.url}/pc/boxes.html`,
      viewportWidth: 200,
      viewportHeight: 250,
      scaleFactor: 1,
      hideSelectors: ['#hide'],
      styles: '#keep { background: rgb(0, 200, 0) !important; }',
    });
    const image = decodePng(file.bytes);
    // The hidden box's area is the white body; the kept box stays below it (layout kept), recoloured.
    expect(near(image.pixel(50, 50), [255, 255, 255, 255])).toBe(true);
    expect(near(image.pixel(50, 150), [0, 200, 0, 255])).toBe(true);

    const plain = decodePng(
      (await service.client.capture({ url: `${fixtures.url}/pc/boxes.html`, viewportWidth: 200, viewportHeight: 250, scaleFactor: 1 }))
        .bytes,
    );
    expect(near(plain.pixel(50, 50), [255, 0, 0, 255])).toBe(true);
    expect(near(plain.pixel(50, 150), [0, 0, 255, 255])).toBe(true);
  });

  it.each([404, 503])('fails with 502 TARGET_HTTP_ERROR for a %i target with failOnHttpError, charging nothing', async (status) => {
    fixtures.route(`/pc/status-${status}`, (_req, res) => {
      res.writeHead(status, { 'content-type': 'text/html' }).end(`<h1>${status}</h1>`);
    });
    const target = encodeURIComponent(`${fixtures.url}/pc/status-${status}`);
    const before = await service.client.usage();
    const failed = await service.get(`/capture?url=${target}&failOnHttpError=true`, { headers: { 'x-api-key': service.apiKey } });
    expect(failed.status).toBe(502);
    const body = (await failed.json()) as { error: { code: string; details: { status: number } } };
    expect(body.error).toMatchObject({ code: 'TARGET_HTTP_ERROR', details: { status } });
    expect(await service.client.usage()).toEqual(before);
    // Without the option the capture goes on.
    const ok = await service.get(`/capture?url=${target}`, { headers: { 'x-api-key': service.apiKey } });
    expect(ok.status).toBe(200);
    // and is charged, so the usage report would have shown a charge for the failure too.
    expect(await service.client.usage()).not.toEqual(before);
  });

  it.each([
    ['timezone', 'Mars/Olympus', /timezone must be an IANA time zone/],
    ['locale', 'not a locale!', /locale must be a BCP 47 language tag/],
    ['hideSelectors', '#a[', /hideSelectors/],
    ['mediaType', 'paper', /mediaType must be one of: screen, print/],
    ['reducedMotion', 'maybe', /reducedMotion must be true or false/],
    ['failOnHttpError', 'sometimes', /failOnHttpError must be true or false/],
    ['omitBackground', 'true&format=jpeg', /omitBackground needs format png or webp/],
    ['locale', 'de-DE&headers=%7B%22Accept-Language%22%3A%22es-ES%22%7D', /either locale or an Accept-Language entry in headers/],
  ])('rejects an invalid %s with a 400 naming the field', async (field, value, message) => {
    const response = await service.get(
      `/capture?url=${encodeURIComponent(`${fixtures.url}/pc/boxes.html`)}&${field}=${value.includes('&') ? value : encodeURIComponent(value)}`,
      {
        headers: { 'x-api-key': service.apiKey },
      },
    );
    expect(response.status).toBe(400);
    const body = (await response.json()) as { success: boolean; error: { message: string } };
    expect(body.success).toBe(false);
    expect(body.error.message).toMatch(message);
  });
});
