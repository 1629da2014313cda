import type { Command } from 'commander';
import { parsePlanShare, requireOrganization, requirePlan } from './admin.js';
import { jsonOption, print, wholeNumberFlag, withData } from './cli-output.js';

/** `daguerre plan create | assign | share | list`. */
export function registerPlanCommands(program: Command): void {
  const plan = program.command('plan').description('plans');
  plan
    .command('create')
    .requiredOption('--name <name>')
    .requiredOption('--credits <n>', 'credits per month')
    .option('--tier <tier>', 'tier name', 'custom')
    .option('--rollover', 'unused credits carry over to the next period')
    .option('--rate-limit <n>', 'capture requests per window (default from RATE_LIMIT_MAX)')
    .option('--rate-window-ms <ms>', 'rate-limit window in ms (default from RATE_LIMIT_WINDOW_MS)')
    .addOption(jsonOption())
    .action(
      async (opts: {
        name: string;
        credits: string;
        tier: string;
        rollover?: boolean;
        rateLimit?: string;
        rateWindowMs?: string;
        json?: boolean;
      }) => {
        await withData(async (data) => {
          const created = await data.accounts.createPlan({
            name: opts.name,
            tier: opts.tier,
            creditsPerMonth: wholeNumberFlag('--credits', opts.credits),
            rollover: Boolean(opts.rollover),
            ...(opts.rateLimit ? { rateLimitMax: wholeNumberFlag('--rate-limit', opts.rateLimit, 1) } : {}),
            ...(opts.rateWindowMs ? { rateLimitWindowMs: wholeNumberFlag('--rate-window-ms', opts.rateWindowMs, 1) } : {}),
          });
          print(
            Boolean(opts.json),
            {
              id: created.id,
              name: created.name,
              tier: created.tier,
              creditsPerMonth: created.credits_per_month,
              rollover: Boolean(created.rollover),
            },
            `Created plan ${created.name} (${created.id}).`,
          );
        });
      },
    );
  plan
    .command('assign')
    .requiredOption('--org <org>')
    .requiredOption('--plan <plan>')
    .addOption(jsonOption())
    .action(async (opts: { org: string; plan: string; json?: boolean }) => {
      await withData(async (data) => {
        const o = await requireOrganization(data, opts.org);
        const p = await requirePlan(data, opts.plan);
        await data.accounts.assignPlan(o.id, p.id);
        print(
          Boolean(opts.json),
          { organizationId: o.id, planId: p.id },
          `Organization ${o.name} is now on plan ${p.name} (from the next period).`,
        );
      });
    });
  plan
    .command('share')
    .description('fair share of the browser for organizations on the plan (applies to their next capture)')
    .requiredOption('--plan <plan>', 'plan id or name')
    .option(
      '--max-share-percent <n>',
      'percent of the capture slots one organization may hold while others wait (1-100), or "default" for MAX_ORG_SHARE_PERCENT',
    )
    .option('--weight <n>', 'turns per round when several organizations wait (1-100; default 1)')
    .option(
      '--max-concurrent-captures <n>',
      'captures one organization may have in progress at once (1-10000), or "default" for ORG_MAX_CONCURRENT_CAPTURES',
    )
    .addOption(jsonOption())
    .action(async (opts: { plan: string; maxSharePercent?: string; weight?: string; maxConcurrentCaptures?: string; json?: boolean }) => {
      const share = parsePlanShare(opts);
      await withData(async (data) => {
        const p = await requirePlan(data, opts.plan);
        await data.accounts.setPlanShare(p.id, share);
        const now = await requirePlan(data, p.id);
        const percent = now.max_share_percent === null ? null : Number(now.max_share_percent);
        const concurrent = now.max_concurrent_captures === null ? null : Number(now.max_concurrent_captures);
        print(
          Boolean(opts.json),
          { planId: now.id, maxSharePercent: percent, fairShareWeight: Number(now.fair_share_weight), maxConcurrentCaptures: concurrent },
          `Plan ${now.name}: at most ${percent === null ? 'the default share (MAX_ORG_SHARE_PERCENT)' : `${percent}%`} of the slots while others wait, weight ${now.fair_share_weight}, ` +
            `${concurrent === null ? 'the default number (ORG_MAX_CONCURRENT_CAPTURES) of' : `at most ${concurrent}`} concurrent captures.`,
        );
      });
    });
  plan
    .command('monitors')
    .description('how many monitors an organization on the plan may have (POST /monitors answers 403 QUOTA_EXCEEDED past it)')
    .requiredOption('--plan <plan>', 'plan id or name')
    .requiredOption('--max-monitors <n>', 'a whole number from 0 to 100000, or "default" for MONITORS_PER_ORGANIZATION')
    .addOption(jsonOption())
    .action(async (opts: { plan: string; maxMonitors: string; json?: boolean }) => {
      const value = opts.maxMonitors;
      if (value !== 'default' && (!/^\d+$/.test(value) || Number(value) > 100_000))
        throw new Error(`--max-monitors must be a whole number from 0 to 100000 or "default"; got "${value}"`);
      const maxMonitors = value === 'default' ? null : Number(value);
      await withData(async (data) => {
        const p = await requirePlan(data, opts.plan);
        await data.accounts.setPlanMonitors(p.id, maxMonitors);
        print(
          Boolean(opts.json),
          { planId: p.id, maxMonitors },
          `Plan ${p.name}: ${maxMonitors === null ? 'the default number (MONITORS_PER_ORGANIZATION) of' : `at most ${maxMonitors}`} monitors per organization.`,
        );
      });
    });
  plan
    .command('list')
    .addOption(jsonOption())
    .action(async (opts: { json?: boolean }) => {
      await withData(async (data) => {
        const rows = (await data.accounts.listPlans()).map((p) => ({
          id: p.id,
          name: p.name,
          tier: p.tier,
          creditsPerMonth: p.credits_per_month,
          rollover: Boolean(p.rollover),
          maxSharePercent: p.max_share_percent === null ? null : Number(p.max_share_percent),
          fairShareWeight: Number(p.fair_share_weight),
          maxConcurrentCaptures: p.max_concurrent_captures === null ? null : Number(p.max_concurrent_captures),
        }));
        print(Boolean(opts.json), rows, '');
      });
    });
}
