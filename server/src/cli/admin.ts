import type { DataLayer } from '../services/data-layer.js';
import type { PlanRow } from '../store/accounts-repository.js';

export const DEFAULT_PLAN_NAME = 'Starter';

/** The plan an organization gets when none is named: created on first use (by one of several commands run at once). */
export async function defaultPlan(data: DataLayer, credits: number): Promise<PlanRow> {
  return data.accounts.findOrCreatePlan({ name: DEFAULT_PLAN_NAME, tier: 'starter', creditsPerMonth: credits });
}

export async function requireOrganization(data: DataLayer, idOrName: string) {
  const org = await data.accounts.findOrganization(idOrName);
  if (!org) throw new Error(`No organization with id or name "${idOrName}"`);
  return org;
}

export async function requirePlan(data: DataLayer, idOrName: string) {
  const plan = await data.accounts.findPlan(idOrName);
  if (!plan) throw new Error(`No plan with id or name "${idOrName}"`);
  return plan;
}

/**
 * `plan share` values: --max-share-percent is 1..100 or `default` (MAX_ORG_SHARE_PERCENT),
 * --weight a whole number 1..100 (turns per round when several organizations wait).
 */
export function parsePlanShare(opts: { maxSharePercent?: string; weight?: string; maxConcurrentCaptures?: string }): {
  maxSharePercent?: number | null;
  weight?: number;
  maxConcurrentCaptures?: number | null;
} {
  const whole = (flag: string, value: string) => {
    if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 100)
      throw new Error(
        `${flag} must be a whole number from 1 to 100${flag === '--max-share-percent' ? ' or "default"' : ''}; got "${value}"`,
      );
    return Number(value);
  };
  const concurrent = (value: string) => {
    if (value === 'default') return null;
    if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 10_000)
      throw new Error(`--max-concurrent-captures must be a whole number from 1 to 10000 or "default"; got "${value}"`);
    return Number(value);
  };
  if (opts.maxSharePercent === undefined && opts.weight === undefined && opts.maxConcurrentCaptures === undefined) {
    throw new Error('Give --max-share-percent, --weight and/or --max-concurrent-captures');
  }
  return {
    ...(opts.maxConcurrentCaptures !== undefined ? { maxConcurrentCaptures: concurrent(opts.maxConcurrentCaptures) } : {}),
    ...(opts.maxSharePercent !== undefined
      ? { maxSharePercent: opts.maxSharePercent === 'default' ? null : whole('--max-share-percent', opts.maxSharePercent) }
      : {}),
    ...(opts.weight !== undefined ? { weight: whole('--weight', opts.weight) } : {}),
  };
}

export async function requireUser(data: DataLayer, idOrEmail: string) {
  const user = await data.accounts.findUser(idOrEmail);
  if (!user) throw new Error(`No user with id or email "${idOrEmail}"`);
  return user;
}

/**
 * On the first start of an empty embedded database: a demo organization on a plan with credits
 * and one key, printed once, so that the quick start works with nothing else to do.
 */
export async function bootstrapDemo(data: DataLayer, credits: number) {
  if ((await data.accounts.countOrganizations()) > 0) return undefined;
  const plan = await data.accounts.findOrCreatePlan({ name: 'Demo', tier: 'demo', creditsPerMonth: credits });
  const org = await data.accounts.createOrganization('Demo', plan);
  const key = await data.apiKeys.create({ organizationId: org.id, name: 'demo' });
  return { organization: org, key };
}
