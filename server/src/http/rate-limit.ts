import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { LRUCache } from 'lru-cache';
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { RateLimiterMemory, RateLimiterMySQL, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError, errors } from '../errors.js';
import type { PlanLookup, RateLimitPolicy } from '../services/usage-service.js';
import { contextOf } from './request-context.js';
import { sendError } from './error-responder.js';

/** The MySQL/MariaDB store needs only the database's knex instance (store/database.ts's Database has it). */
export type RateLimitStore =
  { kind: 'memory' } | { kind: 'mysql'; db: { knex: Knex }; databaseName: string } | { kind: 'redis'; client: Redis };

/**
 * One limiter per policy (plans may set their own), all on the same store: memory for the embedded
 * single-instance SQLite, MySQL/MariaDB or Redis whenever instances share state.
 */
export class CaptureRateLimiter {
  private readonly limiters = new Map<string, Promise<RateLimiterAbstract>>();
  private readonly policies = new LRUCache<string, RateLimitPolicy>({ max: 10_000, ttl: 30_000 });

  constructor(
    private readonly store: RateLimitStore,
    private readonly plans: PlanLookup,
  ) {}

  private limiterFor(policy: RateLimitPolicy): Promise<RateLimiterAbstract> {
    const id = `${policy.max}-${policy.windowMs}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      limiter = this.create(policy, `rs_capture_${id}`);
      limiter.catch(() => this.limiters.delete(id));
      this.limiters.set(id, limiter);
    }
    return limiter;
  }

  private create(policy: RateLimitPolicy, keyPrefix: string): Promise<RateLimiterAbstract> {
    const base = { points: policy.max, duration: policy.windowMs / 1000, keyPrefix };
    switch (this.store.kind) {
      case 'memory':
        return Promise.resolve(new RateLimiterMemory(base));
      case 'redis':
        return Promise.resolve(new RateLimiterRedis({ ...base, storeClient: this.store.client, rejectIfRedisNotReady: true }));
      case 'mysql': {
        const { db, databaseName } = this.store;
        return new Promise((resolve, reject) => {
          const limiter: RateLimiterMySQL = new RateLimiterMySQL(
            { ...base, storeClient: db.knex, storeType: 'knex', dbName: databaseName, tableName: 'rate_limits' },
            (error?: Error) => (error ? reject(error) : resolve(limiter)),
          );
        });
      }
    }
  }

  async policy(organizationId: string): Promise<RateLimitPolicy> {
    const cached = this.policies.get(organizationId);
    if (cached) return cached;
    const policy = await this.plans.rateLimit(organizationId);
    this.policies.set(organizationId, policy);
    return policy;
  }

  /** Consumes one request of the organization's window; resolves to the state for the headers. */
  async consume(organizationId: string): Promise<{ allowed: boolean; limit: number; remaining: number; resetMs: number }> {
    const policy = await this.policy(organizationId);
    const limiter = await this.limiterFor(policy);
    try {
      const result = await limiter.consume(organizationId, 1);
      return { allowed: true, limit: policy.max, remaining: result.remainingPoints, resetMs: result.msBeforeNext };
    } catch (outcome) {
      if (outcome instanceof RateLimiterRes) return { allowed: false, limit: policy.max, remaining: 0, resetMs: outcome.msBeforeNext };
      throw outcome;
    }
  }
}

/**
 * Per-organization throttle on the routes whose RoutePolicy is `rateLimited` (route-policy.ts).
 * Headers go on every response, errors included. When the store cannot be reached the request
 * fails closed (503): never an unmetered capture.
 */
export function rateLimit(limiter: CaptureRateLimiter, logger: Logger): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const organizationId = contextOf(res).auth?.organizationId;
    if (!organizationId) {
      next();
      return;
    }
    limiter
      .consume(organizationId)
      .then((state) => {
        const resetSeconds = Math.ceil((Date.now() + state.resetMs) / 1000);
        res.setHeader('X-RateLimit-Limit', String(state.limit));
        res.setHeader('X-RateLimit-Remaining', String(Math.max(0, state.remaining)));
        res.setHeader('X-RateLimit-Reset', String(resetSeconds));
        if (state.allowed) {
          next();
          return;
        }
        const retryAfter = Math.max(1, Math.ceil(state.resetMs / 1000));
        sendError(
          res,
          new ApiError(
            'RATE_LIMIT_EXCEEDED',
            `Rate limit exceeded: at most ${state.limit} capture requests per window; retry in ${retryAfter} s`,
            {
              retryAfterSeconds: retryAfter,
            },
          ),
        );
      })
      .catch((error: unknown) => {
        logger.error({ err: error }, 'rate-limit store unavailable');
        next(errors.storeUnavailable('rate-limit store', error));
      });
  };
}
