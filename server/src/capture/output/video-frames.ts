import type { CDPSession, Page, Protocol } from 'puppeteer-core';
import { ignoreBecause } from '../../ignore-error.js';

/** JPEG quality of a frame; the encoder compresses it again (crf 23 / 33, a GIF palette). */
export const FRAME_JPEG_QUALITY = 90;

/**
 * How long a scrolled frame may take to arrive before it is asked for as a screenshot. Frames take
 * 30–60 ms here; a busy machine makes them later, and a page whose scroll draws nothing new sends none.
 */
const FRAME_WAIT_MS = 250;

interface Frame {
  top: number;
  jpeg: string;
}

/**
 * The video's frames, from Chromium's screencast (Page.startScreencast): every frame the compositor
 * draws is sent as a JPEG with the scroll offset it shows (its metadata), without a request and its
 * round trip per frame. A screenshot (Page.captureScreenshot) asks for a new frame and waits for it
 * to be drawn, copied and encoded, about 2–3 display intervals of 16.7 ms; the screencast had the
 * frame on its way as soon as it was drawn: measured here, 42–47 ms from the scroll to the frame
 * against 74–82 ms for the screenshot at 1280×720, and the same bytes (docs/video.md, "How it is made").
 *
 * A frame is taken only when its metadata shows the exact offset asked for, so the video stays
 * exact; a frame that does not come (nothing drawn: the page did not move, or a busy machine) is
 * taken as a screenshot instead, as every frame was before.
 *
 * https://chromedevtools.github.io/devtools-protocol/tot/Page/#method-startScreencast
 */
export class ScreencastFrames {
  /** Frames received since the last arm(), in order; undefined while not armed. */
  private received: Frame[] | undefined;
  private arrived: (() => void) | undefined;
  private stopped = false;

  private constructor(
    private readonly page: Page,
    private readonly session: CDPSession,
  ) {
    session.on('Page.screencastFrame', (frame: Protocol.Page.ScreencastFrameEvent) => this.receive(frame));
  }

  static async start(page: Page): Promise<ScreencastFrames> {
    const session = await page.createCDPSession();
    const frames = new ScreencastFrames(page, session);
    try {
      await session.send('Page.startScreencast', { format: 'jpeg', quality: FRAME_JPEG_QUALITY, everyNthFrame: 1 });
    } catch (error) {
      await session.detach().catch(ignoreBecause('the failed start is the error thrown'));
      throw error;
    }
    return frames;
  }

  /** Call before scrolling: the frames drawn from now on are candidates (one may come before the scroll's answer). */
  arm(): void {
    this.received = [];
  }

  /**
   * The first frame since arm() that shows the page at `top` (CSS pixels, as the metadata's
   * offsets are), or a screenshot when none comes in time.
   */
  async frameAt(top: number): Promise<Uint8Array> {
    const deadline = Date.now() + FRAME_WAIT_MS;
    for (;;) {
      const match = this.received?.find((frame) => Math.abs(frame.top - top) < 0.5);
      if (match) {
        this.received = undefined;
        return Buffer.from(match.jpeg, 'base64');
      }
      const left = deadline - Date.now();
      if (left <= 0 || this.stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.arrived = done;
      });
      this.arrived = undefined;
    }
    return this.screenshotNow();
  }

  /** The page as it is now, as a screenshot (a new frame drawn for it). */
  screenshotNow(): Promise<Uint8Array> {
    this.received = undefined;
    return this.page.screenshot({ type: 'jpeg', quality: FRAME_JPEG_QUALITY, optimizeForSpeed: true });
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.arrived?.();
    await this.session.send('Page.stopScreencast').catch(ignoreBecause('the page may be gone, and the screencast with it'));
    await this.session.detach().catch(ignoreBecause('the page may be gone, and the session with it'));
  }

  private receive(frame: Protocol.Page.ScreencastFrameEvent): void {
    // Every frame is acknowledged at once: the screencast sends the next only after it.
    void this.session
      .send('Page.screencastFrameAck', { sessionId: frame.sessionId })
      .catch(ignoreBecause('the session may have ended between two frames'));
    if (!this.received) return;
    this.received.push({ top: frame.metadata.scrollOffsetY, jpeg: frame.data });
    this.arrived?.();
  }
}
