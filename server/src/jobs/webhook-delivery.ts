import { randomUUID } from 'node:crypto';
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { DelayedError, Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { AddressPolicy } from '../security/address-policy.js';
import type { Resolver } from '../security/resolver.js';
import { guardedLookup } from '../security/target-policy.js';
import { webhookHeaders } from '../security/webhook-signature.js';
import { WEBHOOK_QUEUE, type WebhookDelivery } from './job-types.js';
import type { AttemptOutcome } from './webhook-recorder.js';

/**
 * Waits before each retry, as multiples of WEBHOOK_RETRY_BASE_MS: with the default base of one
 * minute, retries after 1, 5, 15, 30 and 60 minutes: 6 attempts over 111 minutes.
 */
export const WEBHOOK_RETRY_FACTORS = [1, 5, 15, 30, 60] as const;
export const WEBHOOK_ATTEMPTS = WEBHOOK_RETRY_FACTORS.length + 1;

/** The wait after the `attemptsMade`-th failed attempt (BullMQ's backoff, and the next retry time on record). */
export function webhookRetryDelayMs(retryBaseMs: number, attemptsMade: number): number {
  return retryBaseMs * WEBHOOK_RETRY_FACTORS[Math.min(Math.max(attemptsMade, 1), WEBHOOK_RETRY_FACTORS.length) - 1]!;
}

/** Looks up (and decrypts) the signing secret of an API key; undefined when the key is gone. */
export type SigningSecretLookup = (keyId: string) => Promise<string | undefined>;

export interface WebhookOptions {
  prefix: string;
  retryBaseMs: number;
  /** A total deadline per attempt: connecting, the headers and the whole body of the answer. */
  timeoutMs: number;
  retentionSeconds: number;
  /** Deliveries this process makes at once (WEBHOOK_CONCURRENCY). */
  concurrency: number;
  /** Of those, at most this many for one organization (WEBHOOK_MAX_PER_ORGANIZATION). */
  perOrganization: number;
}

export class WebhookQueue {
  readonly queue: Queue<WebhookDelivery>;

  constructor(
    connection: Redis,
    private readonly options: WebhookOptions,
    /** Puts each event on record (docs/async-and-webhooks.md); resolves even when it could not. */
    private readonly recorder?: { queued(delivery: WebhookDelivery): Promise<void> },
  ) {
    this.queue = new Queue(WEBHOOK_QUEUE, { connection, prefix: options.prefix });
  }

  async enqueue(delivery: WebhookDelivery): Promise<void> {
    const age = this.options.retentionSeconds;
    await this.recorder?.queued(delivery);
    // The message id is the job id: an event queued twice is delivered once.
    await this.queue.add('deliver', delivery, {
      jobId: delivery.messageId,
      attempts: WEBHOOK_ATTEMPTS,
      backoff: { type: 'schedule' },
      removeOnComplete: { age },
      removeOnFail: { age },
    });
  }

  /**
   * Sends an event again: a queue job of its own (the queue would take the event's id for the same
   * job again), carrying the same message id and body, so the receiver gets the same webhook-id
   * and bytes under a fresh timestamp and signature. One attempt: the caller sees it and decides.
   */
  async resend(delivery: WebhookDelivery): Promise<string> {
    const age = this.options.retentionSeconds;
    const jobId = `${delivery.messageId}_resend_${randomUUID()}`;
    await this.queue.add('deliver', delivery, { jobId, attempts: 1, removeOnComplete: { age }, removeOnFail: { age } });
    return jobId;
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}

class WebhookRefusedError extends Error {}
class WebhookTimeoutError extends Error {}

/**
 * Why an attempt failed, for the record: words of this module only, never the error's own text,
 * which could quote an address or a header.
 */
function failureText(error: unknown, status: number | null): string {
  if (status !== null) return `the receiver answered ${status}`;
  if (error instanceof WebhookRefusedError) return 'the destination is not allowed by the network policy';
  if (error instanceof WebhookTimeoutError) return error.message;
  if (error instanceof UnrecoverableError) return 'the API key that queued the job has no signing secret any more';
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && /^[A-Z_]{2,40}$/.test(code) ? `no answer (${code})` : 'no answer';
}

/**
 * POSTs one delivery; resolves with the status. Connects only where the egress policy allows. The
 * deadline is total, not idle: a receiver that answers and then drips its body a byte at a time is
 * cut off at `timeoutMs` like one that never answers.
 */
function post(
  url: URL,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  lookup: RequestOptions['lookup'],
): Promise<number> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    let response: IncomingMessage | undefined;
    const deadline = setTimeout(() => {
      const error = new WebhookTimeoutError(`no complete answer within ${timeoutMs} ms`);
      reject(error);
      response?.destroy(error);
      req.destroy(error);
    }, timeoutMs);
    const settle =
      <T>(done: (value: T) => void) =>
      (value: T) => {
        clearTimeout(deadline);
        done(value);
      };
    const req = send(
      url,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'Daguerre-Webhooks/1',
        },
        ...(lookup ? { lookup } : {}),
      },
      (res) => {
        response = res;
        res.resume();
        res.on('end', () => settle(resolve)(res.statusCode ?? 0));
        res.on('error', settle(reject));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) =>
      settle(reject)(error.code === 'EDESTINATIONREFUSED' ? new WebhookRefusedError('the destination is not allowed') : error),
    );
    req.end(body);
  });
}

/**
 * Delivers webhooks: signed with the key's signing secret (Standard Webhooks), retried on a
 * non-2xx answer, a timeout or a refused connection per WEBHOOK_RETRY_FACTORS. Redirects are not
 * followed (a 3xx is a failed attempt), so a receiver cannot bounce a delivery into the internal network.
 */
export class WebhookWorker {
  private readonly worker: Worker<WebhookDelivery>;
  /** Deliveries under way in this process, per organization. */
  private readonly inFlight = new Map<string, number>();

  constructor(
    connection: Redis,
    private readonly deps: {
      secretFor: SigningSecretLookup;
      policy: AddressPolicy;
      resolve: Resolver;
      logger: Logger;
      /** Told when a delivery succeeded (the job's record stops asking for it after a Redis loss). */
      onDelivered?: (messageId: string) => Promise<void>;
      /** Told when a delivery's last attempt failed: it is not queued again after a Redis loss either. */
      onGaveUp?: (messageId: string) => Promise<void>;
      /** Told of every attempt (the deliveries on record, docs/async-and-webhooks.md); it must not throw. */
      onAttempt?: (delivery: WebhookDelivery, outcome: AttemptOutcome) => Promise<void>;
    },
    private readonly options: WebhookOptions,
  ) {
    this.worker = new Worker<WebhookDelivery>(WEBHOOK_QUEUE, (job, token) => this.deliverFairly(job, token), {
      connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      settings: {
        backoffStrategy: (attemptsMade: number) => webhookRetryDelayMs(options.retryBaseMs, attemptsMade),
      },
    });
    this.worker.on('failed', (job, error) => {
      // BullMQ sets finishedOn only when it moves the job to its failed set: no retry is left. A
      // resend's last attempt says nothing of the event's own delivery, which may still be retrying.
      const gaveUp = job?.finishedOn && job.id === job.data.messageId ? job.data.messageId : undefined;
      deps.logger.warn(
        { messageId: job?.id, attempt: job?.attemptsMade, gaveUp: gaveUp !== undefined, err: error.message },
        'webhook delivery failed',
      );
      if (!gaveUp || !deps.onGaveUp) return;
      deps.onGaveUp(gaveUp).catch((err: unknown) => deps.logger.warn({ messageId: gaveUp, err }, 'could not record a webhook given up'));
    });
    this.worker.on('error', (error) => deps.logger.error({ err: error }, 'webhook worker error'));
  }

  /**
   * An organization already at its cap waits in the delayed set, not in a delivery slot, so the
   * slots stay free for other organizations' webhooks while its slow receivers hold theirs.
   */
  private async deliverFairly(job: Job<WebhookDelivery>, token: string | undefined): Promise<void> {
    const owner = job.data.organizationId ?? job.data.keyId;
    const busy = this.inFlight.get(owner) ?? 0;
    if (busy >= this.options.perOrganization) {
      await job.moveToDelayed(Date.now() + 200 + Math.floor(Math.random() * 300), token);
      throw new DelayedError();
    }
    this.inFlight.set(owner, busy + 1);
    try {
      await this.deliver(job);
    } finally {
      const left = (this.inFlight.get(owner) ?? 1) - 1;
      if (left > 0) this.inFlight.set(owner, left);
      else this.inFlight.delete(owner);
    }
  }

  private async deliver(job: Job<WebhookDelivery>): Promise<void> {
    const { url, keyId, messageId, body } = job.data;
    const startedAt = Date.now();
    let status: number | null = null;
    try {
      const secret = await this.deps.secretFor(keyId);
      if (!secret) throw new UnrecoverableError('the API key that queued the job has no signing secret any more (revoked or deleted)');
      const target = new URL(url);
      const port = target.port ? Number(target.port) : target.protocol === 'https:' ? 443 : 80;
      const lookup = this.deps.policy.allowPrivateNetwork
        ? undefined
        : (guardedLookup(this.deps.policy, this.deps.resolve, port) as RequestOptions['lookup']);
      // A fresh timestamp per attempt: receivers reject old ones (replay protection).
      status = await post(target, body, webhookHeaders(secret, messageId, body), this.options.timeoutMs, lookup);
      if (status < 200 || status >= 300) throw new Error(`the receiver answered ${status}`);
    } catch (error) {
      await this.recordAttempt(job, startedAt, status, error);
      throw error;
    }
    await this.recordAttempt(job, startedAt, status);
    this.deps.logger.info({ messageId, status, attempt: job.attemptsMade + 1 }, 'webhook delivered');
    await this.deps
      .onDelivered?.(messageId)
      .catch((error: unknown) => this.deps.logger.warn({ messageId, err: error }, 'could not record a delivered webhook'));
  }

  /** The attempt on record, with when the next one is due (BullMQ's own schedule); never fails the delivery. */
  private async recordAttempt(job: Job<WebhookDelivery>, startedAt: number, status: number | null, error?: unknown): Promise<void> {
    if (!this.deps.onAttempt) return;
    const endedAt = Date.now();
    // attemptsMade counts the attempts that ended before this one (a wait for the organization's cap is none).
    const attempt = job.attemptsMade + 1;
    const retries = error !== undefined && !(error instanceof UnrecoverableError) && attempt < (job.opts.attempts ?? 1);
    await this.deps
      .onAttempt(job.data, {
        deliveryId: job.id ?? job.data.messageId,
        attempt,
        attemptedAt: startedAt,
        responseStatus: status,
        error: error === undefined ? null : failureText(error, status),
        durationMs: endedAt - startedAt,
        nextRetryAt: retries ? endedAt + webhookRetryDelayMs(this.options.retryBaseMs, attempt) : null,
      })
      .catch((failure: unknown) =>
        this.deps.logger.warn({ messageId: job.data.messageId, err: failure }, 'could not record a webhook attempt'),
      );
  }

  async close(): Promise<void> {
    await this.worker.close();
  }
}
