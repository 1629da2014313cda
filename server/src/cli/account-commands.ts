import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { hashPassword } from '../services/passwords.js';
import { defaultPlan, requireOrganization, requirePlan, requireUser } from './admin.js';
import { iso, jsonOption, print, wholeNumberFlag, withData } from './cli-output.js';

/** `daguerre org | user | member | key | credits`: organizations, their people, their keys and their credits. */
export function registerAccountCommands(program: Command): void {
  const org = program.command('org').description('organizations');
  org
    .command('create')
    .requiredOption('--name <name>', 'organization name')
    .option('--plan <plan>', 'plan id or name (default: Starter)')
    .option('--credits <n>', 'monthly credits: creates a plan of that size for this organization')
    .addOption(jsonOption())
    .action(async (opts: { name: string; plan?: string; credits?: string; json?: boolean }) => {
      await withData(async (data) => {
        const config = loadConfig();
        const plan = opts.plan
          ? await requirePlan(data, opts.plan)
          : opts.credits
            ? await data.accounts.createPlan({
                name: `${opts.name} (${opts.credits}/month)`,
                tier: 'custom',
                creditsPerMonth: wholeNumberFlag('--credits', opts.credits),
              })
            : await defaultPlan(data, config.DEMO_CREDITS);
        const created = await data.accounts.createOrganization(opts.name, plan);
        print(
          Boolean(opts.json),
          { id: created.id, name: created.name, planId: plan.id, planName: plan.name, createdAt: iso(created.created_at) },
          `Created organization ${created.name} (${created.id}) on plan ${plan.name}.`,
        );
      });
    });
  org
    .command('list')
    .addOption(jsonOption())
    .action(async (opts: { json?: boolean }) => {
      await withData(async (data) => {
        const rows = (await data.accounts.listOrganizations()).map((o) => ({ id: o.id, name: o.name, createdAt: iso(o.created_at) }));
        print(Boolean(opts.json), rows, '');
      });
    });

  const user = program.command('user').description('users');
  user
    .command('create')
    .requiredOption('--email <email>')
    .option('--name <name>')
    .option('--password <password>', 'for the dashboard sign-in')
    .addOption(jsonOption())
    .action(async (opts: { email: string; name?: string; password?: string; json?: boolean }) => {
      await withData(async (data) => {
        const created = await data.accounts.createUser(
          opts.email,
          opts.name ?? opts.email,
          opts.password ? await hashPassword(opts.password) : null,
        );
        print(
          Boolean(opts.json),
          { id: created.id, email: created.email, name: created.name },
          `Created user ${created.email} (${created.id}).`,
        );
      });
    });

  const member = program.command('member').description('organization memberships');
  member
    .command('add')
    .requiredOption('--org <org>')
    .requiredOption('--user <user>', 'user id or email')
    .option('--role <role>', 'owner or member', 'member')
    .addOption(jsonOption())
    .action(async (opts: { org: string; user: string; role: string; json?: boolean }) => {
      await withData(async (data) => {
        const o = await requireOrganization(data, opts.org);
        const u = await requireUser(data, opts.user);
        const row = await data.accounts.addMember(o.id, u.id, opts.role);
        print(
          Boolean(opts.json),
          { id: row.id, organizationId: o.id, userId: u.id, role: row.role, active: true },
          `Added ${u.email} to ${o.name}.`,
        );
      });
    });
  member
    .command('deactivate')
    .requiredOption('--org <org>')
    .requiredOption('--user <user>')
    .addOption(jsonOption())
    .action(async (opts: { org: string; user: string; json?: boolean }) => {
      await withData(async (data) => {
        const o = await requireOrganization(data, opts.org);
        const u = await requireUser(data, opts.user);
        const changed = await data.accounts.setMembershipActive(o.id, u.id, false);
        if (!changed) throw new Error(`${u.email} is not a member of ${o.name}`);
        print(Boolean(opts.json), { organizationId: o.id, userId: u.id, active: false }, `Deactivated ${u.email} in ${o.name}.`);
      });
    });

  const key = program.command('key').description('API keys');
  key
    .command('create')
    .requiredOption('--org <org>', 'organization id or name')
    .requiredOption('--name <name>', 'key name')
    .option('--user <user>', 'owning user (id or email); the key then works only while the membership is active')
    .option('--expires <iso>', 'expiry date (ISO 8601)')
    .addOption(jsonOption())
    .action(async (opts: { org: string; name: string; user?: string; expires?: string; json?: boolean }) => {
      await withData(async (data) => {
        const o = await requireOrganization(data, opts.org);
        const u = opts.user ? await requireUser(data, opts.user) : undefined;
        const expiresAt = opts.expires ? new Date(opts.expires) : null;
        if (expiresAt && Number.isNaN(expiresAt.getTime())) throw new Error(`--expires must be an ISO 8601 date, got "${opts.expires}"`);
        const created = await data.apiKeys.create({ organizationId: o.id, userId: u?.id ?? null, name: opts.name, expiresAt });
        print(
          Boolean(opts.json),
          { ...created },
          `Created key ${created.name} (${created.id}). Copy both now, they are not shown again:\nkey: ${created.key}\nsigningSecret: ${created.signingSecret}`,
        );
      });
    });
  key
    .command('list')
    .requiredOption('--org <org>')
    .addOption(jsonOption())
    .action(async (opts: { org: string; json?: boolean }) => {
      await withData(async (data) => {
        const o = await requireOrganization(data, opts.org);
        const rows = (await data.apiKeys.list(o.id)).map((k) => ({
          id: k.id,
          name: k.name,
          prefix: k.prefix,
          createdAt: iso(k.created_at),
          expiresAt: iso(k.expires_at),
          lastUsedAt: iso(k.last_used_at),
          revokedAt: iso(k.revoked_at),
        }));
        print(Boolean(opts.json), rows, '');
      });
    });
  key
    .command('revoke')
    .argument('<id>', 'key id')
    .addOption(jsonOption())
    .action(async (id: string, opts: { json?: boolean }) => {
      await withData(async (data) => {
        await data.apiKeys.revoke(id);
        print(Boolean(opts.json), { id, revoked: true }, `Revoked key ${id}.`);
      });
    });

  key
    .command('rotate-secret')
    .description('give the key a new signing secret (links signed with the old one stop working)')
    .requiredOption('--id <id>', 'key id')
    .addOption(jsonOption())
    .action(async (opts: { id: string; json?: boolean }) => {
      await withData(async (data) => {
        const rotated = await data.apiKeys.rotateSigningSecret(opts.id);
        print(
          Boolean(opts.json),
          { ...rotated },
          `New signing secret of key ${rotated.id} (copy it now, it is not shown again):\n${rotated.signingSecret}`,
        );
      });
    });

  org
    .command('require-signed-links')
    .description('with --on, keys sent in the query string (apiKey=) are refused; X-API-Key and signed links still work')
    .requiredOption('--id <org>', 'organization id or name')
    .option('--on', 'require signed links')
    .option('--off', 'accept apiKey in the query string again')
    .addOption(jsonOption())
    .action(async (opts: { id: string; on?: boolean; off?: boolean; json?: boolean }) => {
      if (Boolean(opts.on) === Boolean(opts.off)) throw new Error('give exactly one of --on or --off');
      await withData(async (data) => {
        const o = await requireOrganization(data, opts.id);
        const required = Boolean(opts.on);
        await data.accounts.setRequireSignedLinks(o.id, required);
        print(
          Boolean(opts.json),
          { id: o.id, requireSignedLinks: required },
          `Organization ${o.name} ${required ? 'now requires signed links (apiKey in the query string is refused)' : 'accepts apiKey in the query string again'}.`,
        );
      });
    });

  const credits = program.command('credits').description('credit balances');
  credits
    .command('grant')
    .requiredOption('--org <org>')
    .requiredOption('--amount <n>', 'credits to add to the current period')
    .addOption(jsonOption())
    .action(async (opts: { org: string; amount: string; json?: boolean }) => {
      await withData(async (data) => {
        const o = await requireOrganization(data, opts.org);
        const amount = wholeNumberFlag('--amount', opts.amount, 1);
        const balance = await data.credits.grant(o.id, amount);
        print(
          Boolean(opts.json),
          { organizationId: o.id, remaining: balance?.remaining ?? null },
          `Granted ${amount} credits to ${o.name}; ${balance?.remaining} remaining.`,
        );
      });
    });
}
