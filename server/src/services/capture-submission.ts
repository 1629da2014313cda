import { captureCredits, type AsyncCaptureOptions, type BatchData, type CaptureOptions, type ValidationIssue } from '@daguerre/contract';
import { ApiError, errors } from '../errors.js';
import type { CreditRepository, LedgerEntry } from '../store/credit-repository.js';
import type { AuthenticatedKey } from './api-keys.js';
import { checkAiSchemas, checkSchemaBudget } from './ai-schema.js';
import type { CaptureCommand } from './capture-types.js';
import { requireBalance } from './credit-balance.js';
import { checkProviderKeyRule } from './provider-key-rule.js';
import type { BatchQueue, JobQueue } from './queued-capture.js';
import { keyOrganization, requireOrganization } from './usage-service.js';

/** What the checks before any work need of a capture command. */
export type PrecheckCommand = Pick<CaptureCommand, 'key' | 'options' | 'providerKeyHeader'> & { signal?: AbortSignal };

export interface CaptureSubmissionDependencies {
  /** The balance (rolled over to the current period first) and the sync reservation. */
  credits: Pick<CreditRepository, 'rollOverIfDue' | 'reserve'>;
  creditsPerCapture: number;
  /** Up-front check of a destination (the egress policy); throws the 400 for a refused one. */
  checkDestination: (field: string, url: string) => Promise<void>;
  /** Where accepted jobs go (jobs/capture-jobs.ts); undefined without REDIS_URL: POST /captures answers 503. */
  jobs?: JobQueue | undefined;
  /** Where accepted batches go (jobs/capture-batches.ts); undefined without REDIS_URL like `jobs`. */
  batches?: BatchQueue | undefined;
}

/** POST /captures once its body passed the contract. */
export interface JobSubmission {
  key: AuthenticatedKey;
  /** The capture's options and the job's own webhookUrl. */
  body: AsyncCaptureOptions;
  /** X-OpenAI-Api-Key, preferred over openaiApiKey. */
  providerKeyHeader?: string;
  /** The address the caller used: statusUrl and fileUrl are built on it. */
  baseUrl: string;
  /** The face that sent it, for the request log. */
  kind: 'async' | 'mcp';
}

/** POST /captures/bulk once its body passed the contract. */
export interface BatchSubmission {
  key: AuthenticatedKey;
  items: AsyncCaptureOptions[];
  /** The batch's own webhook (each item may have one too). */
  webhookUrl?: string;
  providerKeyHeader?: string;
  baseUrl: string;
}

/** A configuration, not a passing fault: a retry is pointless before the operator acts, hence a long Retry-After. */
export const asyncCapturesUnavailable = () =>
  new ApiError(
    'SERVICE_UNAVAILABLE',
    'Async captures need a Redis server: this server runs without REDIS_URL. Use GET /capture, or ask the operator to set REDIS_URL.',
    { retryAfterSeconds: 300 },
  );

export const bulkCapturesUnavailable = () =>
  new ApiError(
    'SERVICE_UNAVAILABLE',
    'Bulk captures need a Redis server: this server runs without REDIS_URL. Use GET /capture, or ask the operator to set REDIS_URL.',
  );

/** A 400 about one item, said about `requests[index]`: the caller learns which item and which field. */
function aboutItem(error: unknown, index: number): unknown {
  if (!(error instanceof ApiError) || error.status !== 400) return error;
  const details = Array.isArray(error.details)
    ? (error.details as ValidationIssue[]).map((issue) => ({ ...issue, field: `requests[${index}].${issue.field}` }))
    : [{ field: `requests[${index}]`, message: error.message, value: null }];
  return new ApiError(error.code, `requests[${index}]: ${error.message}`, { details, logDetail: error.options.logDetail });
}

/**
 * Acceptance of a capture, whichever way it comes (docs/architecture.md, "The path of one capture"
 * and "The path of one async job"): what the contract cannot check (the provider key rule, the
 * destinations against the egress policy, the AI schema), then the credits of the current billing
 * period. A sync capture reserves its credits later, in the capture service, once the cache, the
 * concurrency gate and its lane have let it through; a job or a batch is only checked against the
 * balance (each job reserves when a worker runs it) and then handed to the queue.
 */
export class CaptureSubmission {
  constructor(private readonly deps: CaptureSubmissionDependencies) {}

  /** The same acceptance, handing accepted jobs and batches to these queues (they are built after the capture service). */
  withQueues(queues: Pick<CaptureSubmissionDependencies, 'jobs' | 'batches'>): CaptureSubmission {
    return new CaptureSubmission({ ...this.deps, ...queues });
  }

  /** The credits a capture with these options costs. */
  costOf(options: CaptureOptions): number {
    return captureCredits(options, this.deps.creditsPerCapture);
  }

  /**
   * The checks that need more than the contract (the provider key from either transport, the egress
   * policy): a clean 400 before any work. Async captures run them before a job is queued. Returns
   * the provider key the rule chose (header first).
   */
  async precheck(command: PrecheckCommand): Promise<string | undefined> {
    const providerKey = await this.cheapChecks(command);
    const { openaiSchema } = command.options;
    if (openaiSchema !== undefined) {
      await checkAiSchemas(
        requireOrganization(command.key),
        [{ field: 'openaiSchema', text: openaiSchema }],
        command.signal ? { signal: command.signal } : {},
      );
    }
    return providerKey;
  }

  /**
   * precheck without compiling openaiSchema: a bulk request runs it on every item first, so that an
   * item refused for anything cheap is refused before any schema work (ai-schema.ts checkAiSchemas).
   */
  async cheapChecks(command: PrecheckCommand): Promise<string | undefined> {
    requireOrganization(command.key);
    const { options } = command;
    const providerKey = checkProviderKeyRule(options, command.providerKeyHeader);
    // A clean 400 before any work for what is known to be refused; the egress proxy is the boundary.
    if (options.url !== undefined) await this.deps.checkDestination('url', options.url);
    if (options.proxyUrl !== undefined) await this.deps.checkDestination('proxyUrl', options.proxyUrl);
    return providerKey;
  }

  /**
   * A sync capture's (or a job's render's) credits, reserved before any browser work: 402 when the
   * period's balance is short. A database failure is the repository's 503.
   */
  async reserve(entry: LedgerEntry, cost: number): Promise<void> {
    const reservation = await this.deps.credits.reserve(entry, cost);
    if (!reservation.reserved) throw errors.insufficientCredits(reservation.remaining, cost);
  }

  /** POST /captures: checked as /capture would be, then queued; resolves to the job id. */
  async submitJob(request: JobSubmission): Promise<string> {
    const { jobs } = this.deps;
    if (!jobs) throw asyncCapturesUnavailable();
    const { organizationId, keyId } = keyOrganization(request.key);
    const { key, providerKeyHeader } = request;
    const { webhookUrl, ...options } = request.body;
    // The same early answers as /capture (provider key, refused destinations), before anything is queued.
    await this.precheck({ key, options, ...(providerKeyHeader ? { providerKeyHeader } : {}) });
    if (webhookUrl !== undefined) await this.deps.checkDestination('webhookUrl', webhookUrl);
    // The credit check only: credits are reserved and charged when a worker runs the job.
    await requireBalance(this.deps.credits, organizationId, this.costOf(options), {
      short: errors.insufficientCredits,
      nothingWas: 'queued',
    });
    return jobs.enqueue({
      organizationId,
      keyId,
      options,
      baseUrl: request.baseUrl,
      kind: request.kind,
      ...(key.fairShare ? { fairShare: key.fairShare } : {}),
      ...(providerKeyHeader ? { providerKeyHeader } : {}),
      ...(webhookUrl !== undefined ? { webhookUrl } : {}),
    });
  }

  /** POST /captures/bulk: every item checked as POST /captures checks one, the credits of the whole batch, then queued. */
  async submitBatch(request: BatchSubmission): Promise<BatchData> {
    const { batches } = this.deps;
    if (!batches) throw bulkCapturesUnavailable();
    const { organizationId, keyId } = keyOrganization(request.key);
    const { key, items, providerKeyHeader } = request;
    // Every item passes the checks of POST /captures before anything is queued: the cheap ones on
    // every item first, then the schemas within one budget, each different one compiled once.
    for (const [index, item] of items.entries()) {
      const { webhookUrl, ...options } = item;
      try {
        await this.cheapChecks({ key, options, ...(providerKeyHeader ? { providerKeyHeader } : {}) });
        if (webhookUrl !== undefined) await this.deps.checkDestination('webhookUrl', webhookUrl);
      } catch (error) {
        throw aboutItem(error, index);
      }
    }
    const schemas = items.flatMap((item, index) => (item.openaiSchema !== undefined ? [{ index, text: item.openaiSchema }] : []));
    checkSchemaBudget(schemas.map(({ index, text }) => ({ field: `requests[${index}].openaiSchema`, text })));
    await checkAiSchemas(
      organizationId,
      schemas.map(({ text }) => ({ field: 'openaiSchema', text })),
      { about: (error, at) => aboutItem(error, schemas[at]!.index) },
    );
    if (request.webhookUrl !== undefined) await this.deps.checkDestination('webhookUrl', request.webhookUrl);
    // The credit check covers the whole batch; each item is charged when it succeeds.
    const cost = items.reduce((sum, item) => sum + this.costOf(item), 0);
    await requireBalance(this.deps.credits, organizationId, cost, {
      short: (remaining) =>
        new ApiError(
          'INSUFFICIENT_CREDITS',
          `Not enough credits: this batch costs up to ${cost}, ${remaining} remaining in the current period; nothing was queued`,
        ),
      nothingWas: 'queued',
    });
    return batches.create({
      organizationId,
      keyId,
      items,
      baseUrl: request.baseUrl,
      ...(request.webhookUrl !== undefined ? { webhookUrl: request.webhookUrl } : {}),
      ...(key.fairShare ? { fairShare: key.fairShare } : {}),
      ...(providerKeyHeader ? { providerKeyHeader } : {}),
    });
  }
}
