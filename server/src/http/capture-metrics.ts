import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { captureCredits } from '@daguerre/contract';
import type { Metrics } from '../ops/metrics.js';

interface CaptureObservation {
  format: string;
  timings: Record<string, number>;
}

/** The handler leaves what it knows about a capture here; the metrics middleware reads it at the end. */
export function observeCapture(res: Response, observation: CaptureObservation): void {
  res.locals.captureObservation = observation;
}

/** Error codes are recorded by the error responder on res.locals.errorCode. */
export function captureMetrics(metrics: Metrics, creditsPerCapture: number): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const observation = res.locals.captureObservation as CaptureObservation | undefined;
      const format =
        observation?.format ??
        String((req.query.format as string | undefined) ?? (req.body as { format?: string } | undefined)?.format ?? 'png');
      const cache = String(res.getHeader('x-cache') ?? 'none').toLowerCase();
      metrics.captures.inc({ status: String(res.statusCode), format, cache });
      if (res.statusCode === 429) metrics.rateLimited.inc();
      const code = res.locals.errorCode as string | undefined;
      if (code && res.statusCode !== 429) metrics.renderErrors.inc({ code });
      if (res.statusCode === 200 && observation) {
        // A video costs per started block of seconds (docs/video.md).
        const videoDuration = Number(
          (req.query.videoDuration as string | undefined) ?? (req.body as { videoDuration?: unknown } | undefined)?.videoDuration ?? 5,
        );
        if (cache !== 'hit') metrics.creditsCharged.inc(captureCredits({ format, videoDuration }, creditsPerCapture));
        metrics.captureSeconds.observe({ format }, Number(process.hrtime.bigint() - started) / 1e9);
        for (const [stage, ms] of Object.entries(observation.timings)) metrics.stageSeconds.observe({ stage }, ms / 1000);
      }
    });
    next();
  };
}
