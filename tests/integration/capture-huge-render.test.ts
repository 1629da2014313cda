import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { FixtureServer } from '../helpers/fixture-server.js';
import { near } from '../helpers/images.js';
import { captureQuery, startTestService, type TestService } from '../helpers/test-service.js';

const TALL_PAGE =
  '<!doctype html><html><body style="margin:0"><div style="height:200000px;background:rgb(40,120,200)"></div></body></html>';
const HUGE_ELEMENT =
  '<!doctype html><html><body style="margin:0"><div id="huge" style="width:200000px;height:200000px;background:rgb(200,120,40)"></div></body></html>';
const SMALL_PAGE = '<body style="margin:0;background:rgb(40,160,110)"></body>';

/** One enormous render never stalls anyone else. */
describe('enormous renders of one organization beside the ordinary capture of another', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  let otherKey: string;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    fixtures.page('/tall-200k', TALL_PAGE);
    fixtures.page('/huge-element', HUGE_ELEMENT);
    // The size limits are under test, not the deadline: a capture out of time is a 504, never a
    // cut image (docs/capture-fidelity.md), so a busy machine gets the time these renders need.
    service = await startTestService({ env: { RATE_LIMIT_MAX: '1000', CAPTURE_TIMEOUT_MS: '40000' } });
    const plan = await service.runtime.accounts.createPlan({ name: `other-${Date.now()}`, tier: 'test', creditsPerMonth: 100 });
    const org = await service.runtime.accounts.createOrganization('Other org', plan);
    otherKey = (await service.runtime.apiKeys.create({ organizationId: org.id, name: 'other' })).key;
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  const request = (params: Record<string, string | number | boolean>, apiKey = service.apiKey) =>
    service.get(`/capture?${captureQuery({ viewportWidth: 800, viewportHeight: 600, ...params, apiKey })}`);

  it('answers every enormous render within its deadline (cut to the budget, or the WebP refusal) while another organization is served', async () => {
    const before = (await service.client.usage()).credits.usedThisPeriod;
    const tall = request({ url: `${fixtures.url}/tall-200k`, fullPage: true, format: 'jpeg' });
    const webp = request({ url: `${fixtures.url}/huge-element`, fullPage: true, format: 'webp' });
    const element = request({ url: `${fixtures.url}/huge-element`, clipSelector: '#huge', format: 'jpeg' });
    // Let the enormous renders start before the other organization asks.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const other = await request({ html: SMALL_PAGE, viewportWidth: 200, viewportHeight: 150 }, otherKey);
    expect(other.status).toBe(200);
    expect(other.headers.get('x-capture-truncated')).toBe('false');

    const [tallAnswer, webpAnswer, elementAnswer] = await Promise.all([tall, webp, element]);
    // Not 504: each answered before its deadline.
    expect(webpAnswer.status).toBe(400);
    const refusal = (await webpAnswer.json()) as { error: { code: string; message: string } };
    expect(refusal.error.code).toBe('INVALID_INPUT');
    expect(refusal.error.message).toContain('16383 px');
    expect(refusal.error.message).toContain('200000×200000');
    expect(refusal.error.message).toContain('png or jpeg');

    expect(
      tallAnswer.status,
      await tallAnswer
        .clone()
        .text()
        .then((t) => t.slice(0, 300)),
    ).toBe(200);
    expect(tallAnswer.headers.get('x-capture-truncated')).toBe('true');
    const tallImage = sharp(Buffer.from(await tallAnswer.arrayBuffer()), { limitInputPixels: false });
    const tallMeta = await tallImage.metadata();
    expect(tallMeta.format).toBe('jpeg');
    expect(tallMeta.width).toBe(800);
    // JPEG holds at most 65 500 px per side: the budget for jpeg stops there.
    expect(tallMeta.height).toBe(65_500);
    const bottom = await tallImage.extract({ left: 400, top: 65_450, width: 1, height: 1 }).raw().toBuffer();
    expect(near([...bottom], [40, 120, 200], 20)).toBe(true);

    expect(elementAnswer.status).toBe(200);
    expect(elementAnswer.headers.get('x-capture-truncated')).toBe('true');
    const elementImage = sharp(Buffer.from(await elementAnswer.arrayBuffer()), { limitInputPixels: false });
    const elementMeta = await elementImage.metadata();
    // Cut at one frame's width and at the pixel budget.
    expect(elementMeta.width).toBe(16_383);
    expect(elementMeta.height).toBeLessThanOrEqual(Math.floor(192_000_000 / 16_383));
    expect(elementMeta.height).toBeGreaterThan(600);
    const corner = await elementImage
      .extract({ left: 16_000, top: elementMeta.height! - 5, width: 1, height: 1 })
      .raw()
      .toBuffer();
    expect(near([...corner], [200, 120, 40], 20)).toBe(true);

    // The refusal charged nothing: two captures were charged.
    expect((await service.client.usage()).credits.usedThisPeriod - before).toBe(2);
    expect((await service.get('/ready')).status).toBe(200);
  }, 120_000);

  it('cuts a full page of the 200 000 × 200 000 px element in jpeg to one frame wide and the budget, and says so', async () => {
    const answer = await request({ url: `${fixtures.url}/huge-element`, fullPage: true, format: 'jpeg' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-capture-truncated')).toBe('true');
    const meta = await sharp(Buffer.from(await answer.arrayBuffer()), { limitInputPixels: false }).metadata();
    expect(meta.width).toBe(16_383);
    expect(meta.height).toBeLessThanOrEqual(Math.floor(192_000_000 / 16_383));
    expect((await service.get('/ready')).status).toBe(200);
  }, 60_000);
});
