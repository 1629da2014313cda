import { randomUUID } from 'node:crypto';
import { isDuplicateKey, type Database } from './database.js';
import { firstPeriod } from './billing-period.js';

export interface PlanRow {
  id: string;
  name: string;
  tier: string;
  credits_per_month: number;
  rollover: number | boolean;
  rate_limit_max: number | null;
  rate_limit_window_ms: number | null;
  /** Percent of the capture slots an organization may hold while others wait; null for MAX_ORG_SHARE_PERCENT. */
  max_share_percent: number | null;
  /** Turns per round when several organizations wait for a slot. */
  fair_share_weight: number;
  /** Captures an organization may have in progress at once; null for ORG_MAX_CONCURRENT_CAPTURES (docs/render-slots.md). */
  max_concurrent_captures: number | null;
}

export interface OrganizationRow {
  id: string;
  name: string;
  created_at: number;
  /** Signed links only: keys in the query string are refused (docs/signed-links.md). */
  require_signed_links?: number | boolean;
}

export interface NewPlan {
  name: string;
  tier: string;
  creditsPerMonth: number;
  rollover?: boolean;
  rateLimitMax?: number;
  rateLimitWindowMs?: number;
}

/** Organizations, users, memberships, plans and subscriptions. */
export class AccountsRepository {
  constructor(private readonly db: Database) {}

  async createPlan(plan: NewPlan): Promise<PlanRow> {
    const row: PlanRow & { created_at: number } = {
      id: randomUUID(),
      name: plan.name,
      tier: plan.tier,
      credits_per_month: plan.creditsPerMonth,
      rollover: plan.rollover ?? false,
      rate_limit_max: plan.rateLimitMax ?? null,
      rate_limit_window_ms: plan.rateLimitWindowMs ?? null,
      max_share_percent: null,
      fair_share_weight: 1,
      max_concurrent_captures: null,
      created_at: Date.now(),
    };
    await this.db.knex('plans').insert(row);
    return row;
  }

  /**
   * The plan of that name, created when there is none. Idempotent across processes (several
   * `org create` at once on a fresh database): the name is unique, so the loser of the race gets the
   * duplicate-key error and reads the winner's row.
   */
  async findOrCreatePlan(plan: NewPlan): Promise<PlanRow> {
    const existing = await this.findPlan(plan.name);
    if (existing) return existing;
    try {
      return await this.createPlan(plan);
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      const winner = await this.findPlan(plan.name);
      if (!winner) throw error;
      return winner;
    }
  }

  async findPlan(idOrName: string): Promise<PlanRow | undefined> {
    return this.db.knex<PlanRow>('plans').where('id', idOrName).orWhere('name', idOrName).first();
  }

  /** The plan's fair share of the browser (docs/render-slots.md): percent (null for the default) and weight. */
  async setPlanShare(
    planId: string,
    share: { maxSharePercent?: number | null; weight?: number; maxConcurrentCaptures?: number | null },
  ): Promise<void> {
    const update: Record<string, number | null> = {};
    if (share.maxConcurrentCaptures !== undefined) update.max_concurrent_captures = share.maxConcurrentCaptures;
    if (share.maxSharePercent !== undefined) update.max_share_percent = share.maxSharePercent;
    if (share.weight !== undefined) update.fair_share_weight = share.weight;
    if (Object.keys(update).length > 0) await this.db.knex('plans').where('id', planId).update(update);
  }

  /** The plan's number of monitors per organization (null: MONITORS_PER_ORGANIZATION). */
  async setPlanMonitors(planId: string, maxMonitors: number | null): Promise<void> {
    await this.db.knex('plans').where('id', planId).update({ max_monitors: maxMonitors });
  }

  async listPlans(): Promise<PlanRow[]> {
    return this.db.knex<PlanRow>('plans').orderBy('created_at');
  }

  /** Creates the organization with an active monthly subscription and its first credit period. */
  async createOrganization(name: string, plan: PlanRow, now = Date.now()): Promise<OrganizationRow> {
    const org: OrganizationRow = { id: randomUUID(), name, created_at: now };
    const period = firstPeriod(now);
    await this.db.knex.transaction(async (trx) => {
      await trx('organizations').insert(org);
      await trx('subscriptions').insert({
        id: randomUUID(),
        organization_id: org.id,
        plan_id: plan.id,
        status: 'active',
        billing_cycle: 'monthly',
        created_at: now,
      });
      await trx('credit_balances').insert({
        organization_id: org.id,
        period_start: period.start,
        period_end: period.end,
        allocation: plan.credits_per_month,
        carried_over: 0,
        remaining: plan.credits_per_month,
        reserved: 0,
        used: 0,
      });
    });
    return org;
  }

  async findOrganization(idOrName: string): Promise<OrganizationRow | undefined> {
    return this.db.knex<OrganizationRow>('organizations').where('id', idOrName).orWhere('name', idOrName).first();
  }

  async setRequireSignedLinks(organizationId: string, required: boolean): Promise<void> {
    await this.db.knex('organizations').where('id', organizationId).update({ require_signed_links: required });
  }

  async requiresSignedLinks(organizationId: string): Promise<boolean> {
    const row = await this.db.knex('organizations').where('id', organizationId).first('require_signed_links');
    return Boolean(row?.require_signed_links);
  }

  async listOrganizations(): Promise<OrganizationRow[]> {
    return this.db.knex<OrganizationRow>('organizations').orderBy('created_at');
  }

  async countOrganizations(): Promise<number> {
    const row = await this.db.knex('organizations').count<{ n: number }[]>({ n: '*' }).first();
    return Number(row?.n ?? 0);
  }

  /** Moves the organization to another plan; the new allocation applies from the next period. */
  async assignPlan(organizationId: string, planId: string): Promise<void> {
    await this.db.knex('subscriptions').where('organization_id', organizationId).update({ plan_id: planId, status: 'active' });
  }

  async setSubscriptionStatus(organizationId: string, status: string): Promise<void> {
    await this.db.knex('subscriptions').where('organization_id', organizationId).update({ status });
  }

  async createUser(email: string, name: string, passwordHash: string | null = null) {
    const row = { id: randomUUID(), email, name, password_hash: passwordHash, created_at: Date.now() };
    await this.db.knex('users').insert(row);
    return row;
  }

  async findUser(idOrEmail: string) {
    return this.db
      .knex<{ id: string; email: string; name: string; password_hash: string | null }>('users')
      .where('id', idOrEmail)
      .orWhere('email', idOrEmail)
      .first();
  }

  async addMember(organizationId: string, userId: string, role = 'member') {
    const row = { id: randomUUID(), organization_id: organizationId, user_id: userId, role, active: true, created_at: Date.now() };
    await this.db.knex('memberships').insert(row);
    return row;
  }

  async setMembershipActive(organizationId: string, userId: string, active: boolean): Promise<number> {
    return this.db.knex('memberships').where({ organization_id: organizationId, user_id: userId }).update({ active });
  }
}
