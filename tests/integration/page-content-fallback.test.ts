import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/**
 * format=markdown when Readability takes the wrong block for the article (docs/page-insight.md,
 * "How the article is chosen"): the real service and Chromium on the synthetic pages of
 * tests/fixtures/pages/content-fallback, served on loopback.
 */
describe('markdown: the article when Readability takes the wrong block', () => {
  let service: TestService;
  let fixtures: FixtureServer;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    service = await startTestService({ env: { RATE_LIMIT_MAX: '1000' }, credits: 1000 });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  const markdown = async (page: string, options: Record<string, unknown> = {}) => {
    const result = await service.client.captureJson({
      url: `${fixtures.url}/content-fallback/${page}`,
      format: 'markdown',
      viewportWidth: 1024,
      viewportHeight: 700,
      ...options,
    } as never);
    return result.data.content ?? '';
  };

  it('gives the short article, not the scoreboard of links Readability takes for it', async () => {
    const content = await markdown('score-menu.html');
    expect(content.startsWith('# Harbour pilots vote to strike\n')).toBe(true);
    expect(content).toContain('The harbour pilots of the northern port voted on Tuesday to strike from next Monday');
    expect(content).toContain('Ships waiting to enter the port will be held at anchor');
    expect(content).not.toContain('Lakers');
    expect(content).not.toContain('/games/');
  });

  it('keeps a short article short when the rest of the main text is teasers of other stories', async () => {
    const content = await markdown('teasers.html');
    expect(content).toContain("Entry 1 of the keeper's log tells of the lamp");
    expect(content).toContain("Entry 8 of the keeper's log tells of the lamp");
    expect(content).not.toContain('Another story number');
    expect(content).not.toContain('A short summary of story');
  });

  it('converts an element chosen with clipSelector whole, even a list of links', async () => {
    const content = await markdown('score-menu.html', { clipSelector: '#scoreboard' });
    expect(content).toContain('## Scores');
    expect(content).toContain('[Lakers at Spurs, final]');
    expect(content).toContain('/games/39');
    expect(content).not.toContain('Harbour pilots');
  });
});
