import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { ContextPool } from '../../server/src/capture/pool/context-pool.js';
import { testBrowserManager } from '../helpers/test-browser.js';

/**
 * The pool hears a page's Page events on puppeteer's own session of the page and sends its commands
 * on a session of its own that does not have the Page domain on, so Chromium sends each event once
 * (page-events-session.ts). Fails when the pool's session gets the Page domain again, which is also
 * what happens when a puppeteer release no longer has the session the pool asks for.
 */
describe('the page events the pool hears', () => {
  const logger = pino({ level: 'silent' });
  const manager = testBrowserManager(logger);
  const pool = new ContextPool(manager, { size: 1, maxQueue: 1, reuseLimit: 50, logger });
  afterAll(async () => {
    await pool.close();
    await manager.close();
  });

  it('come once, on puppeteer’s session of the page, not on the pool’s own', async () => {
    await pool.warm();
    const slot = await pool.acquire('org-events');
    try {
      expect(slot.events).not.toBe(slot.session);
      const heard = { events: 0, own: 0 };
      const onEvents = () => (heard.events += 1);
      const onOwn = () => (heard.own += 1);
      slot.events.on('Page.frameNavigated', onEvents);
      slot.session.on('Page.frameNavigated', onOwn);
      await slot.page.goto('data:text/html,<iframe srcdoc="inner"></iframe>main', { waitUntil: 'load' });
      slot.events.off('Page.frameNavigated', onEvents);
      slot.session.off('Page.frameNavigated', onOwn);
      // The main frame and its iframe each committed a document.
      expect(heard.events).toBeGreaterThanOrEqual(2);
      expect(heard.own).toBe(0);
      // Commands on the pool's own session still work without the domain on (the reset's first one).
      await expect(slot.session.send('Page.resetNavigationHistory')).resolves.toBeDefined();
    } finally {
      await pool.release(slot);
    }
  }, 60_000);
});
