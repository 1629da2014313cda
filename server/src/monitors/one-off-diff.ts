import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  CaptureBodySchema,
  captureCredits,
  type CaptureDiff,
  type CaptureKind,
  type CaptureOptions,
  type DiffBody,
  type ValidationIssue,
} from '@daguerre/contract';
import { ApiError, validationError } from '../errors.js';
import type { CaptureJobs } from '../jobs/capture-jobs.js';
import type { AuthenticatedKey } from '../services/api-keys.js';
import type { CaptureService } from '../services/capture-service.js';
import type { FinishedCapture } from '../services/capture-types.js';
import { requireOrganization } from '../services/usage-service.js';
import { requireBalance } from '../services/credit-balance.js';
import type { CreditRepository } from '../store/credit-repository.js';
import { compareCaptures, type ComparedCapture } from './compare-captures.js';
import type { DiffImages } from './diff-images.js';
import { newDiffId } from './diff-images.js';
import { pageTextStep } from './page-text.js';
import { ImageTooLarge, PixelDiffBusy, UnreadableImage } from './pixel-diff.js';
import { ignoreBecause } from '../ignore-error.js';

/**
 * A monitor run's capture, for POST /diff's {runId} sides: provided by the monitors core. Undefined
 * for a run that does not exist, is not the organization's, failed, or whose image has expired.
 */
export interface MonitorRunImages {
  image(organizationId: string, runId: string): Promise<{ png: Buffer; text?: string } | undefined>;
}

export interface OneOffDiffDependencies {
  captures: CaptureService;
  credits: CreditRepository;
  creditsPerCapture: number;
  /** Async captures ({jobId} sides); undefined without REDIS_URL. */
  jobs: CaptureJobs | undefined;
  /** Monitor runs ({runId} sides); undefined until the monitors core provides them. */
  runImages: MonitorRunImages | undefined;
  images: DiffImages;
  /** The egress policy's up-front check; throws the 400 naming the field. */
  checkDestination: (field: string, url: string) => Promise<void>;
}

export interface OneOffDiffCommand {
  body: DiffBody;
  key: AuthenticatedKey;
  /** The face that sent it (sync, or mcp), for the request log of the captures it makes. */
  kind: CaptureKind;
  /** Aborted when the client leaves: a capture still running then stops, and nothing is charged. */
  signal: AbortSignal;
}

export interface OneOffDiffResult {
  diffId: string;
  diff: Omit<CaptureDiff, 'diffImageUrl'>;
  hasDiffImage: boolean;
  before: { requestId: string | null };
  after: { requestId: string | null };
  creditsCharged: number;
}

type SideName = 'before' | 'after';
type Side = DiffBody['before'];

/** A side once it is known: its PNG, its text when it was read, and the capture it came from. */
interface LoadedSide extends ComparedCapture {
  requestId: string | null;
}

/** The default of a monitor's threshold (contract/src/monitors.ts). */
const DEFAULT_THRESHOLD = 1;

/** An error of one side, said about that side: its message starts with the side and its details name `before.url`. */
function aboutSide(side: SideName, error: unknown, ignoreSelectors: readonly string[]): unknown {
  if (!(error instanceof ApiError)) return error;
  const rename = (field: string, value: unknown) =>
    field === 'url'
      ? `${side}.url`
      : field === 'hideSelectors' && typeof value === 'string' && ignoreSelectors.includes(value)
        ? 'ignoreSelectors'
        : field;
  const details = Array.isArray(error.details)
    ? (error.details as ValidationIssue[]).map((issue) => ({ ...issue, field: rename(issue.field, issue.value) }))
    : error.details;
  return new ApiError(error.code, `${side}: ${error.message}`, {
    ...error.options,
    ...(details !== undefined ? { details } : {}),
  });
}

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/**
 * POST /diff: two captures compared once, each side a URL captured now, a monitor run or a
 * succeeded png async capture of the organization. Everything that can be refused is refused
 * before any capture: the body's options for a capture (the rules of /capture), the earlier
 * captures (found and png), the URLs' destinations (the egress policy) and the credits of every
 * capture to make. The URL sides are captured one after the other (a plan allowing one capture at
 * a time can still diff), and charged together or not at all: each capture's charge is held
 * (CaptureCommand.finish) until the comparison is done and its images stored, then committed; when
 * anything fails, every held charge is released, so a failed diff costs nothing.
 */
export class OneOffDiff {
  constructor(private readonly deps: OneOffDiffDependencies) {}

  async run(command: OneOffDiffCommand): Promise<OneOffDiffResult> {
    const organizationId = requireOrganization(command.key);
    const { before, after, threshold = DEFAULT_THRESHOLD, ignoreSelectors = [], ...shared } = command.body;
    const sides = { before, after } as const;
    const urlSides = (['before', 'after'] as const).filter((name) => sides[name].url !== undefined);
    const options = urlSides.length > 0 ? this.captureOptions(shared, ignoreSelectors, sides[urlSides[0]!].url!) : undefined;

    // The earlier captures first: a missing one is a quick 404 before any page is loaded.
    const stored: Partial<Record<SideName, LoadedSide>> = {};
    for (const name of ['before', 'after'] as const) {
      if (sides[name].url === undefined) stored[name] = await this.storedSide(name, sides[name], organizationId);
    }
    for (const name of urlSides) await this.deps.checkDestination(`${name}.url`, sides[name].url!);
    if (options?.proxyUrl !== undefined) await this.deps.checkDestination('proxyUrl', options.proxyUrl);
    const cost = options ? captureCredits(options, this.deps.creditsPerCapture) : 0;
    if (urlSides.length > 0)
      await requireBalance(this.deps.credits, organizationId, cost * urlSides.length, {
        short: (remaining, total) =>
          new ApiError(
            'INSUFFICIENT_CREDITS',
            `Not enough credits: this diff captures pages for ${total} credits, ${remaining} remaining in the current period; nothing was captured`,
          ),
        nothingWas: 'charged',
      });

    const held: FinishedCapture[] = [];
    try {
      const loaded: Partial<Record<SideName, LoadedSide>> = { ...stored };
      for (const name of urlSides) loaded[name] = await this.captureSide(name, sides[name].url!, options!, ignoreSelectors, command, held);
      const compared = await compareCaptures({ before: loaded.before!, after: loaded.after!, threshold }).catch((error: unknown) => {
        if (error instanceof ImageTooLarge)
          throw new ApiError(
            'INVALID_INPUT',
            `The images are too large to compare (${error.message}); nothing was charged. Compare viewport captures, or full pages of less height`,
          );
        if (error instanceof PixelDiffBusy)
          throw new ApiError(
            'SERVICE_UNAVAILABLE',
            'Too many diffs are being compared on this server; nothing was charged. Retry shortly.',
            { logDetail: error, retryAfterSeconds: 5 },
          );
        if (error instanceof UnreadableImage)
          throw new ApiError('INVALID_INPUT', 'One of the images cannot be read as a PNG; nothing was charged', { logDetail: error });
        throw error;
      });
      const diffId = newDiffId();
      await this.deps.images.put(diffId, organizationId, {
        before: loaded.before!.png,
        after: loaded.after!.png,
        ...(compared.diffPng ? { diff: compared.diffPng } : {}),
      });
      let creditsCharged = 0;
      // Each charge leaves `held` once committed: when the database fails midway, the rest are released below.
      while (held.length > 0) {
        const finished = held[0]!;
        if (await this.deps.credits.commit(finished.requestId, { processingMs: finished.processingTime, fileSize: finished.buffer.length }))
          creditsCharged += finished.credits;
        held.shift();
      }
      return {
        diffId,
        diff: compared.diff,
        hasDiffImage: compared.diffPng !== undefined,
        before: { requestId: loaded.before!.requestId },
        after: { requestId: loaded.after!.requestId },
        creditsCharged,
      };
    } catch (error) {
      const code = error instanceof ApiError ? error.code : 'INTERNAL_ERROR';
      await Promise.all(
        held.map((finished) =>
          this.deps.credits
            .release(finished.requestId, code)
            .catch(ignoreBecause('the stale-reservation sweeper releases a charge left held')),
        ),
      );
      throw error;
    }
  }

  /** The capture options of the URL sides: the body's, as a png without the cache, ignoreSelectors hidden; checked with the rules of /capture. */
  private captureOptions(
    shared: Omit<DiffBody, 'before' | 'after' | 'threshold' | 'ignoreSelectors'>,
    ignoreSelectors: readonly string[],
    url: string,
  ): CaptureOptions {
    const hideSelectors = [...(shared.hideSelectors ?? []), ...ignoreSelectors];
    const raw = {
      ...shared,
      url,
      format: 'png',
      cacheEnabled: false,
      returnFile: true,
      ...(hideSelectors.length > 0 ? { hideSelectors } : {}),
    };
    const parsed = CaptureBodySchema.safeParse(raw);
    if (parsed.success) return parsed.data;
    const issues = parsed.error.issues.map((issue) => {
      const field = String(issue.path[0] ?? 'request');
      if (field === 'hideSelectors' && ignoreSelectors.length > 0)
        return { field: 'ignoreSelectors', message: `hideSelectors and ignoreSelectors together: ${issue.message}`, value: null };
      return { field, message: issue.message, value: null };
    });
    throw validationError(issues);
  }

  /** A {jobId} or {runId} side, or the 404/400 that names its field. */
  private async storedSide(name: SideName, side: Side, organizationId: string): Promise<LoadedSide> {
    if (side.jobId !== undefined) {
      const field = `${name}.jobId`;
      if (!this.deps.jobs) {
        throw new ApiError(
          'SERVICE_UNAVAILABLE',
          `${field}: async captures need a Redis server and this server runs without REDIS_URL; use {url} sides, or ask the operator to set REDIS_URL`,
          { retryAfterSeconds: 300 },
        );
      }
      const file = await this.deps.jobs.file(side.jobId, organizationId).catch((error: unknown) => {
        if (!(error instanceof ApiError)) throw error;
        throw new ApiError(error.code, `${field}: ${error.message}`, {
          ...error.options,
          details: [{ field, message: error.message, value: side.jobId }],
        });
      });
      if (file.mime !== 'image/png') {
        file.stream.destroy();
        const message = `${field} must be an async capture in png (this one is ${file.mime}): a diff compares PNG images`;
        throw new ApiError('INVALID_INPUT', message, { details: [{ field, message, value: side.jobId }] });
      }
      return { png: await bytesOf(file.stream), requestId: file.requestId };
    }
    const field = `${name}.runId`;
    const run = this.deps.runImages ? await this.deps.runImages.image(organizationId, side.runId!) : undefined;
    if (!run) {
      const message = `${field}: no succeeded monitor run ${side.runId} with an image for this organization`;
      throw new ApiError('NOT_FOUND', message, { details: [{ field, message, value: side.runId }] });
    }
    return { ...run, requestId: null };
  }

  /** A {url} side: captured now, its page text read in the same load; its charge held in `held` until the diff is done. */
  private async captureSide(
    name: SideName,
    url: string,
    options: CaptureOptions,
    ignoreSelectors: readonly string[],
    command: OneOffDiffCommand,
    held: FinishedCapture[],
  ): Promise<LoadedSide> {
    const text = pageTextStep(ignoreSelectors);
    const file = await this.deps.captures
      .capture({
        requestId: randomUUID(),
        key: command.key,
        options: { ...options, url },
        kind: command.kind,
        signal: command.signal,
        readPage: text.step,
        finish: async (finished) => {
          held.push(finished);
          return true;
        },
      })
      .catch((error: unknown) => {
        throw aboutSide(name, error, ignoreSelectors);
      });
    const read = text.text();
    return { png: file.buffer, ...(read !== undefined ? { text: read } : {}), requestId: file.requestId };
  }
}
