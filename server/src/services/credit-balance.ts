import { ApiError, errors } from '../errors.js';
import type { CreditRepository } from '../store/credit-repository.js';

/** How a kind of request words its refusals. */
export interface BalanceRefusal {
  /** The 402 when `remaining` credits do not cover `cost`. */
  short: (remaining: number, cost: number) => ApiError;
  /** What the 503 says was not done when the database cannot be reached: "queued", "charged". */
  nothingWas: string;
}

/**
 * The balance check of every request that is charged later, when its captures run (a job, a batch,
 * a diff's captures, a monitor's first run): the current billing period, rolled over first when
 * the last one ended (store/billing-period.ts), must have `cost` credits left. A sync capture
 * reserves its credits instead (CreditRepository.reserve checks and holds at once).
 */
export async function requireBalance(
  credits: Pick<CreditRepository, 'rollOverIfDue'>,
  organizationId: string,
  cost: number,
  refusal: BalanceRefusal,
): Promise<void> {
  const balance = await credits.rollOverIfDue(organizationId).catch((error: unknown) => {
    throw error instanceof ApiError ? error : errors.storeUnavailable('database', error, refusal.nothingWas);
  });
  const remaining = balance?.remaining ?? 0;
  if (remaining < cost) throw refusal.short(remaining, cost);
}
