import { z } from 'zod';
import { withOpenApi } from './openapi-meta.js';

export const PlanSchema = withOpenApi(
  z.object({
    id: z.string().uuid().describe('Plan identifier'),
    name: z.string().describe('Plan name'),
    tier: z.string().describe('Plan tier'),
    creditsPerMonth: z.number().int().describe('Credits per month of the plan'),
  }),
  { title: 'Plan' },
);

export const UsageReportSchema = withOpenApi(
  z.object({
    credits: z.object({
      totalMonthlyAllocation: z.number().int().describe('Credits the plan includes per billing period'),
      remaining: z.number().int().describe('Credits left in the current period'),
      usedThisPeriod: z.number().int().describe('Credits used so far in the current period'),
      includesCreditRollover: z.boolean().describe('Whether the balance includes credits carried over from earlier periods'),
      periodStart: z.string().datetime().describe('Start of the current billing period (ISO 8601)'),
      periodEnd: z.string().datetime().describe('End of the current billing period (ISO 8601)'),
      billingCycle: z.string().describe('Billing cycle; monthly'),
      subscriptionStatus: z.string().describe('Subscription status; active'),
      plan: PlanSchema.optional().describe('Current plan, when there is an active subscription'),
    }),
    rateLimits: z.object({
      capture: z.object({
        windowMs: z.number().int().describe('Length of the rate-limit window in milliseconds'),
        maxRequestsPerWindow: z.number().int().describe('Maximum capture requests in that window'),
      }),
      concurrency: z
        .object({
          maxConcurrentCaptures: z
            .number()
            .int()
            .describe(
              "Captures the organization may have in progress at once (waiting for a browser, rendering, uploading), set by its plan; a synchronous capture beyond it gets 429 CONCURRENCY_LIMIT_EXCEEDED with Retry-After, an async job waits for a place. Counted per API instance. An addition to the usage body's original fields.",
            ),
        })
        .describe("The plan's limit of concurrent captures"),
    }),
  }),
  { title: 'UsageReport' },
);
export type UsageReport = z.infer<typeof UsageReportSchema>;

export const UsageQuerySchema = z
  .object({ apiKey: z.string().optional().describe('API key; may instead be sent in header X-API-Key.') })
  .strict();
