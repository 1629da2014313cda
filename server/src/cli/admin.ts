import type { DataLayer } from '../runtime.js';
import type { PlanRow } from '../store/accounts-repository.js';

export const DEFAULT_PLAN_NAME = 'Starter';

/** The plan an organization gets when none is named: created on first use. */
export async function defaultPlan(data: DataLayer, credits: number): Promise<PlanRow> {
  return (await data.accounts.findPlan(DEFAULT_PLAN_NAME)) ?? data.accounts.createPlan({ name: DEFAULT_PLAN_NAME, tier: 'starter', creditsPerMonth: credits });
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
  const plan = await data.accounts.findPlan('Demo') ?? (await data.accounts.createPlan({ name: 'Demo', tier: 'demo', creditsPerMonth: credits }));
  const org = await data.accounts.createOrganization('Demo', plan);
  const key = await data.apiKeys.create({ organizationId: org.id, name: 'demo' });
  return { organization: org, key };
}
