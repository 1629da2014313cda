import type { CaptureOptions } from '@rendershot/contract';
import type { Logger } from 'pino';
import { ApiError, errors } from '../errors.js';
import { CaptureTimeoutError, ClientGoneError, type Renderer } from '../capture/renderer.js';
import type { CreditRepository, LedgerEntry } from '../store/credit-repository.js';
import type { AuthenticatedKey } from './api-keys.js';
import { requireOrganization } from './usage-service.js';

export interface CaptureCommand {
  /** The request id of the HTTP request: one id in logs, headers, ledger and the JSON result. */
  requestId: string;
  key: AuthenticatedKey;
  options: CaptureOptions;
  /** X-OpenAI-Api-Key header, preferred over the openaiApiKey parameter. */
  providerKeyHeader?: string;
  /** Aborted when the client disconnects. */
  signal: AbortSignal;
}

export interface CaptureFile {
  requestId: string;
  fileName: string;
  mime: string;
  buffer: Buffer;
  processingTime: number;
  timings: Record<string, number>;
  storageUrl?: string;
  aiResult?: { text: string; model: string };
  cache?: 'HIT' | 'MISS';
}

export interface CaptureServiceOptions {
  creditsPerCapture: number;
  captureTimeoutMs: number;
}

/** Chromium's network errors carry a stable, safe code (net::ERR_…): the caller may see it. */
const NET_ERROR = /net::ERR_[A-Z_]+/;
const BROWSER_GONE = /Target closed|Session closed|Connection closed|Protocol error|detached|browser has disconnected|Navigating frame was detached/i;

/**
 * The capture use case: check, reserve credits, render, then commit on success or release on any
 * failure. Nothing here knows about HTTP.
 */
export class CaptureService {
  constructor(
    private readonly renderer: Renderer,
    private readonly credits: CreditRepository,
    private readonly options: CaptureServiceOptions,
    private readonly logger: Logger,
  ) {}

  async capture(command: CaptureCommand): Promise<CaptureFile> {
    const started = Date.now();
    const organizationId = requireOrganization(command.key);
    const { options } = command;
    const providerKey = command.providerKeyHeader ?? options.openaiApiKey;
    if (options.openaiPrompt !== undefined && !providerKey) {
      throw new ApiError('VALIDATION_ERROR', 'Validation failed: openaiApiKey (or header X-OpenAI-Api-Key) is required when openaiPrompt is given', {
        details: [{ field: 'openaiApiKey', message: 'a provider key is required when openaiPrompt is given (header X-OpenAI-Api-Key or openaiApiKey)', value: null }],
      });
    }
    if (options.openaiPrompt !== undefined) {
      throw new ApiError('INVALID_INPUT', 'openaiPrompt is not supported yet by this server');
    }
    if (options.cacheEnabled) throw new ApiError('INVALID_INPUT', 'cacheEnabled is not supported yet by this server');
    if (options.requestStorageEnabled) throw new ApiError('INVALID_INPUT', 'requestStorageEnabled is not supported yet by this server');
    if (options.removeAds || options.removeCookieBanners) {
      throw new ApiError('INVALID_INPUT', 'removeAds and removeCookieBanners are not supported yet by this server');
    }

    const { requestId } = command;
    const entry: LedgerEntry = {
      requestId,
      organizationId,
      apiKeyId: command.key.keyId,
      format: options.format,
      source: options.url !== undefined ? 'url' : 'html',
      targetHost: options.url !== undefined ? new URL(options.url).host : null,
      userAgent: options.userAgent ?? null,
    };
    const cost = this.options.creditsPerCapture;
    let reservation;
    try {
      reservation = await this.credits.reserve(entry, cost);
    } catch (error) {
      throw errors.storeUnavailable('database', error);
    }
    if (!reservation.reserved) throw errors.insufficientCredits(reservation.remaining, cost);

    const timings: Record<string, number> = {};
    try {
      const result = await this.renderer.render({
        options,
        deadline: started + this.options.captureTimeoutMs,
        signal: command.signal,
        timings,
      });
      if (command.signal.aborted) throw new ClientGoneError();
      const processingTime = Date.now() - started;
      const committed = await this.credits.commit(requestId, { processingMs: processingTime, fileSize: result.buffer.length });
      if (!committed) throw new ApiError('INTERNAL_ERROR', 'The credit reservation was lost', { logDetail: { requestId } });
      return {
        requestId,
        fileName: `capture-${requestId}.${result.extension}`,
        mime: result.mime,
        buffer: result.buffer,
        processingTime,
        timings,
      };
    } catch (error) {
      const mapped = this.mapFailure(error);
      await this.credits.release(requestId, mapped.code).catch((releaseError: unknown) =>
        this.logger.error({ err: releaseError, requestId }, 'could not release a reservation; start-up reconciliation will'),
      );
      throw mapped;
    }
  }

  private mapFailure(error: unknown): ApiError {
    if (error instanceof ApiError) return error;
    if (error instanceof ClientGoneError) return new ApiError('OPERATION_FAILED', 'The client disconnected before the capture finished');
    if (error instanceof CaptureTimeoutError) {
      return new ApiError('CAPTURE_TIMEOUT', `The capture did not finish within ${this.options.captureTimeoutMs} ms (${error.message}); nothing was charged`);
    }
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof Error && error.name === 'TimeoutError') {
      return new ApiError('CAPTURE_TIMEOUT', `The capture did not finish within ${this.options.captureTimeoutMs} ms while loading the page; nothing was charged`, {
        logDetail: error,
      });
    }
    const net = NET_ERROR.exec(message);
    if (net) return new ApiError('OPERATION_FAILED', `The page could not be loaded (${net[0]}); nothing was charged`, { logDetail: error });
    if (BROWSER_GONE.test(message)) {
      return new ApiError('OPERATION_FAILED', 'The browser stopped during the capture; nothing was charged. Retry the request.', { logDetail: error });
    }
    return new ApiError('OPERATION_FAILED', 'The capture failed; nothing was charged', { logDetail: error });
  }
}
