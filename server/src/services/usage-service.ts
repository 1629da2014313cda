import type { UsageReport } from '@daguerre/contract';
import type { Config } from '../config.js';
import { ApiError, errors } from '../errors.js';
import type { CreditRepository } from '../store/credit-repository.js';
import type { Database } from '../store/database.js';
import type { AuthenticatedKey } from './api-keys.js';
import { defaultConcurrentCaptures } from './concurrency-gate.js';

export interface RateLimitPolicy {
  windowMs: number;
  max: number;
}

/** Reads the organization's plan and rate-limit policy (per plan when set, else the configured one). */
export class PlanLookup {
  constructor(
    private readonly db: Database,
    private readonly config: Config,
  ) {}

  async subscription(organizationId: string) {
    return this.db
      .knex('subscriptions as s')
      .join('plans as p', 'p.id', 's.plan_id')
      .where('s.organization_id', organizationId)
      .first(
        's.status',
        's.billing_cycle',
        'p.id as plan_id',
        'p.name',
        'p.tier',
        'p.credits_per_month',
        'p.rollover',
        'p.rate_limit_max',
        'p.rate_limit_window_ms',
        'p.max_concurrent_captures',
      );
  }

  async rateLimit(organizationId: string): Promise<RateLimitPolicy> {
    const sub = await this.subscription(organizationId);
    return {
      max: Number(sub?.rate_limit_max ?? this.config.RATE_LIMIT_MAX),
      windowMs: Number(sub?.rate_limit_window_ms ?? this.config.RATE_LIMIT_WINDOW_MS),
    };
  }

  /** The plan's limit of concurrent captures, else the deployment's default (concurrency-gate.ts). */
  concurrentCaptures(sub: { max_concurrent_captures?: number | null } | undefined): number {
    const own = sub?.max_concurrent_captures;
    return own === null || own === undefined ? defaultConcurrentCaptures(this.config) : Number(own);
  }
}

/** The organization of a key that queues or reads jobs, batches, webhooks or monitors. */
export function keyOrganization(key: AuthenticatedKey): { organizationId: string; keyId: string } {
  if (!key.organizationId) throw new ApiError('NO_ORGANIZATION_CONTEXT', 'This API key belongs to no organization');
  return { organizationId: key.organizationId, keyId: key.keyId };
}

/** Checks that the key may act for an organization: shared by /usage and /capture. */
export function requireOrganization(key: AuthenticatedKey): string {
  if (!key.organizationId) throw new ApiError('NO_ORGANIZATION_CONTEXT', 'This API key is not associated with an organization');
  if (!key.membershipActive) {
    throw new ApiError('MEMBERSHIP_INACTIVE', 'The owner of this API key is not an active member of the organization');
  }
  return key.organizationId;
}

export class UsageService {
  constructor(
    private readonly credits: CreditRepository,
    private readonly plans: PlanLookup,
  ) {}

  async report(key: AuthenticatedKey): Promise<UsageReport> {
    const organizationId = requireOrganization(key);
    try {
      const balance = await this.credits.rollOverIfDue(organizationId);
      const sub = await this.plans.subscription(organizationId);
      if (!balance || !sub)
        throw new ApiError('INTERNAL_ERROR', 'The organization has no credit balance', { logDetail: { organizationId } });
      const limit = await this.plans.rateLimit(organizationId);
      return {
        credits: {
          totalMonthlyAllocation: balance.allocation,
          remaining: balance.remaining,
          usedThisPeriod: balance.used,
          includesCreditRollover: balance.carried_over > 0,
          periodStart: new Date(balance.period_start).toISOString(),
          periodEnd: new Date(balance.period_end).toISOString(),
          billingCycle: sub.billing_cycle,
          subscriptionStatus: sub.status,
          ...(sub.status === 'active'
            ? { plan: { id: sub.plan_id, name: sub.name, tier: sub.tier, creditsPerMonth: Number(sub.credits_per_month) } }
            : {}),
        },
        rateLimits: {
          capture: { windowMs: limit.windowMs, maxRequestsPerWindow: limit.max },
          concurrency: { maxConcurrentCaptures: this.plans.concurrentCaptures(sub) },
        },
      };
    } catch (error) {
      if (error instanceof ApiError) throw error;
      throw errors.storeUnavailable('database', error);
    }
  }
}
