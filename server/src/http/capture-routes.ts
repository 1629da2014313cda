import { Readable } from 'node:stream';
import { isContentFormat, type CaptureOptions, type CaptureResult, type PageReport } from '@daguerre/contract';
import type { Request, Response } from 'express';
import { ApiError } from '../errors.js';
import { aiResultBody, aiResultHeader } from '../services/ai-analysis.js';
import type { CaptureFile, CaptureService } from '../services/capture-service.js';
import { observeCapture } from './capture-metrics.js';
import { contentTypeOf, setInsightHeaders } from './insight-headers.js';
import { contextOf } from './request-context.js';
import { captureKindOf } from './request-log-routes.js';

/** The signal that tells a capture its client has gone: a closed socket before the response finished. */
export function disconnectSignal(res: Response, shutdown?: AbortSignal): AbortSignal {
  const controller = new AbortController();
  // A shutdown past its grace period ends the capture the same way a departed client does.
  const onShutdown = () => controller.abort();
  shutdown?.addEventListener('abort', onShutdown, { once: true });
  res.on('close', () => shutdown?.removeEventListener('abort', onShutdown));
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** A URL as an HTTP header value: ASCII only (non-ASCII percent-encoded), never a line break. */
function headerSafeUrl(url: string): string {
  return encodeURI(decodeURIComponentSafe(url)).replace(/[\r\n]/g, '');
}

function decodeURIComponentSafe(url: string): string {
  try {
    return decodeURI(url);
  } catch {
    return url;
  }
}

/** The page report as headers: X-Capture-Truncated, X-Capture-Wait-Timed-Out, X-Capture-Still-Growing and X-Capture-Inspection-Timed-Out always; the target's status and final URL for url captures only. */
export function setPageHeaders(res: Response, page: PageReport): void {
  res.setHeader('X-Capture-Truncated', String(page.truncated));
  // docs/capture-fidelity.md: a best-attempt capture (waitUntil not reached in time) and a page still growing when the scroll stopped.
  res.setHeader('X-Capture-Wait-Timed-Out', String(page.waitTimedOut === true));
  res.setHeader('X-Capture-Still-Growing', String(page.stillGrowing === true));
  // The page could not be read in time after the file (late-inspection.ts): the file is as taken, the reports are not.
  res.setHeader('X-Capture-Inspection-Timed-Out', String(page.inspectionTimedOut === true));
  if (page.status !== null) res.setHeader('X-Target-Status', String(page.status));
  if (page.finalUrl !== null) res.setHeader('X-Final-Url', headerSafeUrl(page.finalUrl));
}

function setCommonHeaders(res: Response, file: CaptureFile) {
  res.setHeader('X-Request-Id', file.requestId);
  setPageHeaders(res, file.page);
  setInsightHeaders(res, file);
  if (file.cache) res.setHeader('X-Cache', file.cache);
  if (file.storageUrl) res.setHeader('X-Storage-Url', file.storageUrl);
  const timing = Object.entries(file.timings).map(([stage, ms]) => `${stage};dur=${ms}`);
  if (timing.length) res.setHeader('Server-Timing', timing.join(', '));
}

export function toJsonResult(file: CaptureFile, format: CaptureOptions['format']): CaptureResult {
  return {
    success: true,
    data: {
      requestId: file.requestId,
      fileName: file.fileName,
      processingTime: file.processingTime,
      fileSize: file.buffer.length,
      ...(file.storageUrl ? { url: file.storageUrl } : {}),
      ...(isContentFormat(format)
        ? { content: file.buffer.toString('utf8') }
        : format !== 'pdf'
          ? { imageData: `data:${file.mime};base64,${file.buffer.toString('base64')}` }
          : {}),
      ...(file.aiResult ? { aiResult: aiResultBody(file.aiResult) } : {}),
      page: file.page,
      quality: file.quality,
      ...(file.metadata ? { metadata: file.metadata } : {}),
    },
  };
}

/**
 * Binary mode: ts-rest pipes a returned stream verbatim, so the headers are set here and the body
 * is typed as the route's declared 200 (the JSON form) only to satisfy the contract's types.
 */
function binaryBody(res: Response, file: CaptureFile): CaptureResult {
  res.setHeader('Content-Type', contentTypeOf(file.mime));
  res.setHeader('Content-Disposition', `inline; filename="${file.fileName}"`);
  res.setHeader('Content-Length', String(file.buffer.length));
  if (file.aiResult) {
    // Header-safe and cut to AI_RESULT_HEADER_MAX_BYTES; the full text is in JSON mode.
    const header = aiResultHeader(file.aiResult.text);
    res.setHeader('X-Service-AI-Result', header.value);
    res.setHeader('X-Service-AI-Result-Truncated', String(header.truncated));
  }
  return Readable.from([file.buffer]) as unknown as CaptureResult;
}

const shuttingDown = (cause: unknown) =>
  new ApiError('SERVICE_UNAVAILABLE', 'The service is shutting down and stopped this capture; nothing was charged. Retry the request.', {
    retryAfterSeconds: 5,
    logDetail: cause,
  });

/** Captures currently being handled; shutdown waits for them to settle (credits released). */
export class InFlight {
  count = 0;
  private idle: Array<() => void> = [];

  track<T>(work: Promise<T>): Promise<T> {
    this.count += 1;
    return work.finally(() => {
      this.count -= 1;
      if (this.count === 0) for (const resolve of this.idle.splice(0)) resolve();
    });
  }

  settled(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((resolve) => this.idle.push(resolve));
  }
}

export function captureHandler(service: CaptureService, shutdown?: AbortSignal, inFlight = new InFlight()) {
  return async ({
    options: query,
    providerKeyHeader,
    req,
    res,
  }: {
    options: CaptureOptions;
    providerKeyHeader?: string;
    req: Pick<Request, 'get'>;
    res: Response;
  }) => {
    const context = contextOf(res);
    // A signed link's parameters did their job in authentication: they are not capture options.
    const { keyId: _keyId, expires: _expires, signature: _signature, ...captureOptions } = query;
    const options: CaptureOptions = captureOptions;
    // Shutdown waits until the response is fully written (or its connection gone), not only until
    // the capture settled: the error body of an aborted capture is still to be sent then.
    void inFlight.track(new Promise<void>((resolve) => res.once('close', resolve)));
    const file = await service
      .capture({
        requestId: context.requestId,
        key: context.auth!,
        options,
        ...(providerKeyHeader ? { providerKeyHeader } : {}),
        kind: captureKindOf(req, 'sync'),
        signal: disconnectSignal(res, shutdown),
      })
      .catch((error: unknown) => {
        // Ended by a shutdown past its grace period (credits already released): the client may retry elsewhere.
        if (shutdown?.aborted && !res.destroyed) throw shuttingDown(error);
        throw error;
      });
    setCommonHeaders(res, file);
    observeCapture(res, { format: options.format, timings: file.timings });
    return { status: 200 as const, body: options.returnFile ? binaryBody(res, file) : toJsonResult(file, options.format) };
  };
}
