import { BulkCaptureBodySchema, captureCredits, CaptureQuerySchema, videoFrameCount } from '@daguerre/contract';
import { describe, expect, it } from 'vitest';
import { EASINGS, scrollPosition } from '../../server/src/capture/output/video-scroll.js';

describe('video: frames, easing and credits', () => {
  it('a video has duration × fps frames, at least one', () => {
    expect(videoFrameCount({ videoDuration: 2, videoFps: 10 })).toBe(20);
    expect(videoFrameCount({ videoDuration: 1.5, videoFps: 8 })).toBe(12);
    expect(videoFrameCount({ videoDuration: 1, videoFps: 1 })).toBe(1);
  });

  it('every easing starts at the top, ends at the end and never goes back', () => {
    for (const easing of Object.keys(EASINGS) as Array<keyof typeof EASINGS>) {
      const positions = Array.from({ length: 31 }, (_, i) => scrollPosition(easing, i, 31, 5_000));
      expect(positions[0]).toBe(0);
      expect(positions.at(-1)).toBe(5_000);
      for (let i = 1; i < positions.length; i++) expect(positions[i]!).toBeGreaterThanOrEqual(positions[i - 1]!);
    }
    // ease-in is slow first, ease-out fast first, linear even.
    expect(scrollPosition('ease-in', 15, 31, 1_000)).toBeLessThan(scrollPosition('linear', 15, 31, 1_000));
    expect(scrollPosition('ease-out', 15, 31, 1_000)).toBeGreaterThan(scrollPosition('linear', 15, 31, 1_000));
    expect(scrollPosition('linear', 15, 31, 1_000)).toBe(500);
  });

  it("a video costs one capture's credits per started 10 s; anything else one", () => {
    expect(captureCredits({ format: 'png' }, 1)).toBe(1);
    expect(captureCredits({ format: 'mp4', videoDuration: 1 }, 1)).toBe(1);
    expect(captureCredits({ format: 'mp4', videoDuration: 10 }, 1)).toBe(1);
    expect(captureCredits({ format: 'webm', videoDuration: 10.5 }, 1)).toBe(2);
    expect(captureCredits({ format: 'gif', videoDuration: 60 }, 2)).toBe(12);
  });

  it('query strings parse: videoDuration and videoFps as numbers, scrollEasing by name', () => {
    const parsed = CaptureQuerySchema.parse({
      html: '<p>x</p>',
      format: 'mp4',
      videoDuration: '3',
      videoFps: '12',
      scrollEasing: 'linear',
    });
    expect(parsed).toMatchObject({ format: 'mp4', videoDuration: 3, videoFps: 12, scrollEasing: 'linear' });
    expect(CaptureQuerySchema.parse({ html: '<p>x</p>' })).toMatchObject({ videoDuration: 5, videoFps: 24, scrollEasing: 'ease-in-out' });
  });
});

describe('bulk: every item checked over the defaults', () => {
  it('lays each item over the defaults and keeps the batch webhook apart', () => {
    const parsed = BulkCaptureBodySchema.parse({
      defaults: { format: 'webp', viewportWidth: 800 },
      requests: [{ html: 'a' }, { html: 'b', format: 'png', webhookUrl: 'https://h.example/i' }],
      webhookUrl: 'https://h.example/b',
    });
    expect(parsed.items.map((item) => [item.format, item.viewportWidth, item.webhookUrl])).toEqual([
      ['webp', 800, undefined],
      ['png', 800, 'https://h.example/i'],
    ]);
    expect(parsed.webhookUrl).toBe('https://h.example/b');
  });

  it('names the index and the field of each bad item', () => {
    const result = BulkCaptureBodySchema.safeParse({ requests: [{ html: 'a' }, { html: 'b', videoFps: 99, format: 'mp4' }, {}] });
    expect(result.success).toBe(false);
    const paths = result.error!.issues.map((issue) => String(issue.path[0]));
    expect(paths).toContain('requests[1].videoFps');
    expect(paths).toContain('requests[2].url');
    expect(paths.every((path) => !path.startsWith('requests[0]'))).toBe(true);
  });
});

describe('numbers are decimal text', () => {
  it('refuses hexadecimal, binary, octal and Infinity by the field, and reads decimals with fractions and exponents', () => {
    for (const value of ['0x10', '0b11', '0o7', 'Infinity', '1_0', '']) {
      const result = CaptureQuerySchema.safeParse({ html: '<p>x</p>', format: 'mp4', videoDuration: value });
      expect(result.success, value).toBe(false);
      expect(result.error!.issues[0]!.path).toEqual(['videoDuration']);
      expect(result.error!.issues[0]!.message).toBe('videoDuration must be a number from 1 to 60 (seconds)');
    }
    expect(CaptureQuerySchema.parse({ html: '<p>x</p>', format: 'mp4', videoDuration: ' 2.5 ' }).videoDuration).toBe(2.5);
    expect(CaptureQuerySchema.parse({ html: '<p>x</p>', delay: '1e3' }).delay).toBe(1000);
  });

  it('holds for the server settings too', async () => {
    const { loadConfig } = await import('../../server/src/config.js');
    expect(() => loadConfig({}, { MAX_CONCURRENCY: '0x10' })).toThrow(/MAX_CONCURRENCY must be a whole number from 1 to 64/);
    expect(loadConfig({}, { MAX_CONCURRENCY: '16' }).MAX_CONCURRENCY).toBe(16);
  });
});
