import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGNAL_LIMITS } from '../../server/src/capture/insight/article-signals.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/**
 * A page that replaces the prototypes the in-page collector cuts its texts with, and writes a
 * byline of a megabyte: the article rules in the service still only see bounded texts, so the
 * capture answers and the service's event loop is not held (docs/page-insight.md).
 */
describe('article metadata of a page that breaks String.prototype.slice', () => {
  const fixtures = new FixtureServer();
  let service: TestService;

  beforeAll(async () => {
    const byline = `By ${'x'.repeat(1_000_000)}`;
    fixtures.page(
      '/hostile-byline.html',
      `<!doctype html><script>String.prototype.slice = function () { return String(this) }; Array.prototype.slice = function () { return Array.from(this) };</script>` +
        `<title>Hostile</title><article><h1>A hostile headline here</h1><p class="byline">${byline}</p><p>${'Body text. '.repeat(50)}</p></article>`,
    );
    await fixtures.start();
    service = await startTestService();
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures.stop();
  });

  it('answers with bounded article fields', async () => {
    const result = await service.client.captureJson({ url: `${fixtures.url}/hostile-byline.html`, metadata: true });
    const metadata = result.data.metadata!;
    expect(metadata.articleTitle).toBe('A hostile headline here');
    expect((metadata.author ?? '').length).toBeLessThanOrEqual(SIGNAL_LIMITS.text * 10);
    expect(JSON.stringify(metadata).length).toBeLessThan(200_000);
  });
});
