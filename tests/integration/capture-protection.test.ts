import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaguerreError } from '../../client/src/index.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const NORMAL_PAGE = '<!doctype html><html><head><title>Welcome</title></head><body><h1>Hello</h1><p>An ordinary page.</p></body></html>';

/** Spec rule 2: anti-bot interstitials fail at once with 403 TARGET_PROTECTED and cost nothing. */
describe('capture of anti-bot interstitials (TARGET_PROTECTED)', () => {
  let service: TestService;
  let fixtures: FixtureServer;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    // A Cloudflare challenge announced only by the response header.
    fixtures.page('/protection/cf-mitigated', NORMAL_PAGE, { 'cf-mitigated': 'challenge' });
    fixtures.route('/protection/datadome-403', (_req, res) => {
      res.writeHead(403, { 'content-type': 'text/html; charset=utf-8', 'x-datadome': 'protected' }).end(NORMAL_PAGE);
    });
    fixtures.page(
      '/protection/imperva',
      '<!doctype html><html><head><title>Pardon Our Interruption</title></head><body><p>As you were browsing something about your browser made us think you were a bot.</p></body></html>',
    );
    service = await startTestService({ env: { RATE_LIMIT_MAX: '1000' } });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  const interstitials: Array<[name: string, path: string, vendor: RegExp]> = [
    ['Cloudflare "Just a moment..." with #challenge-form', '/protection/cloudflare.html', /Cloudflare/],
    ['a response with cf-mitigated: challenge', '/protection/cf-mitigated', /Cloudflare/],
    ['an hCaptcha interstitial', '/protection/hcaptcha.html', /captcha/i],
    ['a reCAPTCHA interstitial', '/protection/recaptcha.html', /captcha/i],
    ['a Turnstile interstitial', '/protection/turnstile.html', /captcha/i],
    ['DataDome (iframe from captcha-delivery.com)', '/protection/datadome.html', /DataDome/],
    ['DataDome (403 with x-datadome)', '/protection/datadome-403', /DataDome/],
    ['PerimeterX (#px-captcha, "Access to this page has been denied.")', '/protection/perimeterx.html', /PerimeterX/],
    ['Imperva "Pardon Our Interruption"', '/protection/imperva', /Imperva/],
  ];

  for (const [name, path, vendor] of interstitials) {
    it(`refuses ${name} with 403 TARGET_PROTECTED and charges nothing`, async () => {
      const before = await service.client.usage();
      const error = await service.client.capture({ url: `${fixtures.url}${path}`, viewportWidth: 400, viewportHeight: 300 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(DaguerreError);
      const apiError = error as DaguerreError;
      expect([apiError.status, apiError.code]).toEqual([403, 'TARGET_PROTECTED']);
      expect(apiError.message).toMatch(vendor);
      const after = await service.client.usage();
      expect(after.credits.remaining).toBe(before.credits.remaining);
      expect(after.credits.usedThisPeriod).toBe(before.credits.usedThisPeriod);
    });
  }

  it('refuses in JSON mode and for pdf alike', async () => {
    const json = await service.get(
      `/capture?${new URLSearchParams({ url: `${fixtures.url}/protection/turnstile.html`, returnFile: 'false', apiKey: service.apiKey })}`,
    );
    expect(json.status).toBe(403);
    expect(((await json.json()) as { error: { code: string } }).error.code).toBe('TARGET_PROTECTED');
    const pdf = await service.get(
      `/capture?${new URLSearchParams({ url: `${fixtures.url}/protection/cloudflare.html`, format: 'pdf', apiKey: service.apiKey })}`,
    );
    expect(pdf.status).toBe(403);
  });

  it('captures an ordinary sign-up form that embeds a reCAPTCHA widget', async () => {
    const before = await service.client.usage();
    const file = await service.client.capture({ url: `${fixtures.url}/protection/signup.html`, viewportWidth: 800, viewportHeight: 600 });
    expect(file.contentType).toBe('image/png');
    expect((await service.client.usage()).credits.remaining).toBe(before.credits.remaining - 1);
  });

  it('captures a page whose title merely starts like a challenge title', async () => {
    const file = await service.client.capture({
      url: `${fixtures.url}/protection/moment-in-history.html`,
      viewportWidth: 800,
      viewportHeight: 600,
    });
    expect(file.contentType).toBe('image/png');
  });

  it('lists no charged capture for any refused interstitial in the ledger', async () => {
    const ledger = (await service.runtime.credits.ledger(service.organizationId, 500)) as Array<{
      status: string;
      target_host: string | null;
    }>;
    const charged = ledger.filter((row) => row.status === 'charged');
    // Only the two ordinary pages were charged.
    expect(charged).toHaveLength(2);
    expect(ledger.filter((row) => row.status === 'released').length).toBeGreaterThanOrEqual(interstitials.length + 2);
  });
});
