import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaguerreError } from '../../client/src/index.js';
import { probeVideo } from '../helpers/video.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/**
 * A finished file is never thrown away because the reading of the page after it (the page report,
 * the quality report, the metadata) runs late (docs/capture-fidelity.md, "Reading the page after its
 * file"). The page's first script makes every elementFromPoint call cost 150 ms of its main thread:
 * the quality report's overlay scan makes 160 of them, at least 24 s, far past the deadlines of these
 * captures (15 to 16.8 s), however fast or slow the machine is, while the file itself needs no
 * elementFromPoint. Before, each ended 504 with its file made (or 504 PAGE_UNRESPONSIVE when the
 * watchdog ended the silent page first); now the file is delivered and charged, marked as not inspected.
 */
const SLOW_SCRIPT = `<!doctype html><html><head><script>
  const elementFromPoint = document.elementFromPoint.bind(document);
  document.elementFromPoint = (x, y) => {
    const end = performance.now() + 150;
    while (performance.now() < end);
    return elementFromPoint(x, y);
  };
</script></head><body style="margin:0;background:#1d3557">`;
const SLOW_INSPECTION_PAGE = `${SLOW_SCRIPT}<h1 style="color:#f1faee;font:40px sans-serif;margin:0">Late inspection</h1>
<div style="height:1200px;background:linear-gradient(#1d3557,#e63946)"></div></body></html>`;
/** One colour only: blank by its pixels alone. */
const SLOW_BLANK_PAGE = `${SLOW_SCRIPT}</body></html>`;

const PLAIN_PAGE = '<body style="margin:0;background:#2a9d8f"><h1 style="font:40px sans-serif">Inspected in time</h1></body>';

const VIEW = { viewportWidth: 320, viewportHeight: 240 };

async function outcome(work: Promise<unknown>): Promise<string> {
  return work.then(
    () => 'delivered',
    (error: unknown) => (error instanceof DaguerreError ? `${error.status} ${error.code}: ${error.message}` : String(error)),
  );
}

describe('a late inspection after the file', () => {
  let service: TestService;
  let watchdogOff: TestService;
  const used = async (on: TestService) => (await on.client.usage()).credits.usedThisPeriod;

  beforeAll(async () => {
    // 15 s + a video's own length and allowance: the video is made well within it, its inspection cannot be.
    service = await startTestService({ credits: 100, env: { CAPTURE_TIMEOUT_MS: '15000', RATE_LIMIT_MAX: '1000' } });
    // Without the watchdog the inspection is not ended for its silence: only the deadline stops it.
    watchdogOff = await startTestService({
      credits: 100,
      env: { CAPTURE_TIMEOUT_MS: '15000', RATE_LIMIT_MAX: '1000', PAGE_UNRESPONSIVE_TIMEOUT_MS: '0' },
    });
  });
  afterAll(async () => {
    await service?.stop();
    await watchdogOff?.stop();
  });

  it('a video whose inspection outlives the deadline is delivered, charged and marked; the page is not read in the answer', async () => {
    const before = await used(service);
    const request = { html: SLOW_INSPECTION_PAGE, ...VIEW, format: 'mp4', videoDuration: 1, videoFps: 4 } as const;
    const file = await service.client.capture(request).catch((error: unknown) => {
      throw new Error(`expected the video, got ${String(error)}`);
    });
    expect(file.contentType).toBe('video/mp4');
    expect((await probeVideo(file.bytes, 'mp4')).frames).toBe(4);
    expect(file.headers['x-capture-inspection-timed-out']).toBe('true');
    // Not known to be good: the report says so rather than "ok".
    expect(file.headers['x-capture-quality']).toBe('warn');
    expect((await used(service)) - before).toBe(1);
  });

  it('the same without the watchdog: the deadline alone ends the inspection, the file is kept (JSON answer)', async () => {
    const before = await used(watchdogOff);
    const result = await watchdogOff.client
      .captureJson({ html: SLOW_INSPECTION_PAGE, ...VIEW, format: 'gif', videoDuration: 1, videoFps: 2, metadata: true })
      .catch((error: unknown) => {
        throw new Error(`expected the gif, got ${String(error)}`);
      });
    expect(result.data.imageData).toMatch(/^data:image\/gif;base64,/);
    expect(result.data.page.inspectionTimedOut).toBe(true);
    expect(result.data.page.title).toBe('');
    expect(result.data.quality).toEqual({ ok: false, findings: [] });
    // Read with the quality report, and not in time either: left out rather than half made.
    expect(result.data.metadata).toBeUndefined();
    expect((await used(watchdogOff)) - before).toBe(1);
  });

  it('a full-page image is delivered too, its pixels still checked', async () => {
    const before = await used(watchdogOff);
    const result = await watchdogOff.client
      .captureJson({ html: SLOW_INSPECTION_PAGE, ...VIEW, format: 'png', fullPage: true })
      .catch((error: unknown) => {
        throw new Error(`expected the png, got ${String(error)}`);
      });
    expect(result.data.imageData).toMatch(/^data:image\/png;base64,/);
    expect(result.data.page.inspectionTimedOut).toBe(true);
    // The pixel check needs no page: a one-colour image would still be found blank.
    expect(result.data.quality.findings.map((finding) => finding.check)).not.toContain('blank');
    expect((await used(watchdogOff)) - before).toBe(1);
  });

  it('a page inspected in time says so: not timed out, the report as before', async () => {
    const file = await service.client.capture({ html: PLAIN_PAGE, ...VIEW, format: 'mp4', videoDuration: 1, videoFps: 2 });
    expect(file.headers['x-capture-inspection-timed-out']).toBe('false');
    expect(file.headers['x-capture-quality']).toBe('ok');
  });

  it('failOnBlank on a page it could not inspect: a video is delivered (blank is not known); a one-colour image is still refused by its pixels', async () => {
    const before = await used(watchdogOff);
    const video = await watchdogOff.client
      .capture({ html: SLOW_INSPECTION_PAGE, ...VIEW, format: 'webm', videoDuration: 1, videoFps: 2, failOnBlank: true })
      .catch((error: unknown) => {
        throw new Error(`expected the webm, got ${String(error)}`);
      });
    expect(video.headers['x-capture-inspection-timed-out']).toBe('true');
    const blank = await outcome(
      watchdogOff.client.capture({ html: SLOW_BLANK_PAGE, ...VIEW, format: 'png', fullPage: true, failOnBlank: true }),
    );
    expect(blank).toMatch(/^422 CAPTURE_BLANK: .*single colour/);
    expect((await used(watchdogOff)) - before).toBe(1);
  });
});
