import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { loadConfig, ConfigError, type Config } from '../config.js';
import { createLogger } from '../logger.js';
import type { ProcessRole } from '../jobs/start-jobs.js';
import { maskUserinfo } from '../security/redaction.js';
import type { Runtime } from '../runtime.js';
import { packageFile } from '../package-files.js';
import { hashPassword } from '../services/passwords.js';
import { bootstrapDemo, defaultPlan, requireOrganization, requirePlan, requireUser } from './admin.js';
import { iso, jsonOption, print, wholeNumberFlag, withData } from './cli-output.js';
import { registerPlanCommands } from './plan-commands.js';
import { registerMonitorCommands } from './monitor-commands.js';
import { demoSecretFilePath, writeDemoKeyFile } from './demo-key-file.js';

/** Where the server listens, as it binds: a wildcard address says so, with the address this machine reaches it at. */
function listeningOn(host: string, localUrl: string): string {
  if (host !== '0.0.0.0' && host !== '::') return localUrl;
  const port = localUrl.slice(localUrl.lastIndexOf(':') + 1);
  return `http://${host === '::' ? '[::]' : host}:${port}, every interface (on this machine ${localUrl})`;
}

/**
 * `serve` and `worker`: Chromium launches first, then the rest of the service loads (its modules
 * take seconds of a cold start) while Chromium starts beside it (capture/browser/browser-start.ts).
 */
async function startService(config: Config, role: ProcessRole): Promise<Runtime> {
  const logger = createLogger(config.LOG_LEVEL);
  const { startBrowserSide } = await import('../capture/browser/browser-start.js');
  const browserSide = await startBrowserSide(config, logger);
  try {
    const { startRuntime } = await import('../runtime.js');
    return await startRuntime(config, { role, logger, browserSide });
  } catch (error) {
    await browserSide.close().catch(() => undefined);
    throw error;
  }
}

/**
 * SIGTERM/SIGINT: graceful shutdown (runtime.stop), then exit 0, or 1 when stopping failed. Set
 * before the runtime has started: a worker takes its first job while the rest of its start is still
 * finishing (the pool's warm-up), and a signal then waits for the start and drains that job.
 */
function stopOnSignals(starting: Promise<Runtime>) {
  const shutdown = (signal: string) => {
    starting
      .then((runtime) => {
        runtime.logger.info({ signal }, 'shutting down');
        return runtime.stop();
      })
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

const { version } = JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string };
const program = new Command('daguerre').description('Daguerre: screenshot and PDF capture API').version(version).showHelpAfterError();

program
  .command('serve')
  .description('start the HTTP service (migrates the database first)')
  .action(async () => {
    const config = loadConfig();
    // Loaded there: the browser, HTTP and queue modules are only for serve and worker, not the admin commands.
    const starting = startService(config, 'serve');
    stopOnSignals(starting);
    const runtime = await starting;
    const demo = config.DATABASE_URL.startsWith('sqlite:') ? await bootstrapDemo(runtime, config.DEMO_CREDITS) : undefined;
    console.log(`Daguerre listening on ${listeningOn(config.HOST, runtime.url)} (docs: ${runtime.url}/docs)`);
    if (demo) {
      console.log(`Created demo organization "${demo.organization.name}" with ${config.DEMO_CREDITS} credits.`);
      const keyFile = await writeDemoKeyFile(config.DEMO_KEY_FILE, demo.key.key);
      console.log(`Demo API key written to ${keyFile} (readable by its owner only; the key is never printed).`);
      console.log(`Try: curl -o shot.png -H "X-API-Key: $(cat ${keyFile})" "${runtime.url}/capture?url=https://example.com"`);
      const secretFile = await writeDemoKeyFile(demoSecretFilePath(config.DEMO_KEY_FILE), demo.key.signingSecret);
      console.log(`Its key id: ${demo.key.id}; its signing secret (signed links, webhook signatures: new Webhook(secret)) is in ${secretFile} (owner only).`);
    }
  });

program
  .command('worker')
  .description('run a render worker only: takes async capture jobs from Redis (REDIS_URL); /health, /ready and /metrics on WORKER_PORT')
  .action(async () => {
    const config = loadConfig();
    const starting = startService(config, 'worker');
    stopOnSignals(starting);
    const runtime = await starting;
    console.log(`Daguerre worker rendering up to ${Math.max(1, config.CAPTURE_WORKERS)} jobs at once, listening on ${listeningOn(config.HOST, runtime.url)} (health: ${runtime.url}/health)`);
  });

program
  .command('mcp')
  .description('an MCP server on stdin/stdout for AI agents, talking to a Daguerre service (docs/mcp.md)')
  .option('--url <url>', 'the service address (default: DAGUERRE_URL)')
  .option('--api-key <key>', 'the API key (default: DAGUERRE_API_KEY; prefer the variable: arguments show in process lists)')
  .action(async (opts: { url?: string; apiKey?: string }) => {
    const config = loadConfig();
    const url = opts.url ?? config.DAGUERRE_URL;
    const apiKey = opts.apiKey ?? config.DAGUERRE_API_KEY;
    // stdout is the protocol channel: problems go to stderr.
    if (!url || !apiKey) {
      console.error(`daguerre mcp needs ${!url ? 'the service address (--url or DAGUERRE_URL)' : ''}${!url && !apiKey ? ' and ' : ''}${!apiKey ? 'an API key (--api-key or DAGUERRE_API_KEY)' : ''}`);
      process.exit(2);
    }
    const { serveMcpOverStdio } = await import('../mcp/stdio.js');
    await serveMcpOverStdio({ url, apiKey, budget: { maxBytes: config.MCP_INLINE_MAX_BYTES, maxSidePx: config.MCP_INLINE_MAX_SIDE_PX } });
    process.exit(0);
  });

program
  .command('migrate')
  .description('create or update the database schema')
  .addOption(jsonOption())
  .action(async (opts: { json?: boolean }) => {
    await withData(async () => undefined);
    print(Boolean(opts.json), { migrated: true }, 'Database is up to date.');
  });

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
          ? await data.accounts.createPlan({ name: `${opts.name} (${opts.credits}/month)`, tier: 'custom', creditsPerMonth: wholeNumberFlag('--credits', opts.credits) })
          : await defaultPlan(data, config.DEMO_CREDITS);
      const created = await data.accounts.createOrganization(opts.name, plan);
      print(Boolean(opts.json), { id: created.id, name: created.name, planId: plan.id, planName: plan.name, createdAt: iso(created.created_at) },
        `Created organization ${created.name} (${created.id}) on plan ${plan.name}.`);
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

registerPlanCommands(program);
registerMonitorCommands(program);

const user = program.command('user').description('users');
user
  .command('create')
  .requiredOption('--email <email>')
  .option('--name <name>')
  .option('--password <password>', 'for the dashboard sign-in')
  .addOption(jsonOption())
  .action(async (opts: { email: string; name?: string; password?: string; json?: boolean }) => {
    await withData(async (data) => {
      const created = await data.accounts.createUser(opts.email, opts.name ?? opts.email, opts.password ? await hashPassword(opts.password) : null);
      print(Boolean(opts.json), { id: created.id, email: created.email, name: created.name }, `Created user ${created.email} (${created.id}).`);
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
      print(Boolean(opts.json), { id: row.id, organizationId: o.id, userId: u.id, role: row.role, active: true }, `Added ${u.email} to ${o.name}.`);
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
      print(Boolean(opts.json), { ...created },
        `Created key ${created.name} (${created.id}). Copy both now, they are not shown again:\nkey: ${created.key}\nsigningSecret: ${created.signingSecret}`);
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
      print(Boolean(opts.json), { ...rotated }, `New signing secret of key ${rotated.id} (copy it now, it is not shown again):\n${rotated.signingSecret}`);
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
      print(Boolean(opts.json), { id: o.id, requireSignedLinks: required },
        `Organization ${o.name} ${required ? 'now requires signed links (apiKey in the query string is refused)' : 'accepts apiKey in the query string again'}.`);
    });
  });

const storage = program.command('storage').description('storage configurations (S3-compatible); need STORAGE_ENCRYPTION_KEY');
storage
  .command('add')
  .requiredOption('--org <org>')
  .requiredOption('--name <name>')
  .requiredOption('--endpoint <url>', 'S3-compatible endpoint, e.g. https://s3.eu-central-1.amazonaws.com')
  .requiredOption('--bucket <bucket>')
  .option('--region <region>', 'region', 'us-east-1')
  .requiredOption('--access-key-id <id>')
  .requiredOption('--secret-access-key <secret>')
  .option('--default', 'make it the organization default')
  .addOption(jsonOption())
  .action(
    async (opts: { org: string; name: string; endpoint: string; bucket: string; region: string; accessKeyId: string; secretAccessKey: string; default?: boolean; json?: boolean }) => {
      await withData(async (data) => {
        const o = await requireOrganization(data, opts.org);
        const created = await data.storageConfigs.create(o.id, {
          name: opts.name,
          endpoint: opts.endpoint,
          bucket: opts.bucket,
          region: opts.region,
          accessKeyId: opts.accessKeyId,
          secretAccessKey: opts.secretAccessKey,
          ...(opts.default ? { isDefault: true } : {}),
        });
        print(Boolean(opts.json), { ...created, createdAt: created.createdAt.toISOString() }, `Created storage configuration ${created.name} (${created.id})${created.isDefault ? ', the default' : ''}.`);
      });
    },
  );
storage
  .command('list')
  .requiredOption('--org <org>')
  .addOption(jsonOption())
  .action(async (opts: { org: string; json?: boolean }) => {
    await withData(async (data) => {
      const o = await requireOrganization(data, opts.org);
      const rows = (await data.storageConfigs.list(o.id)).map((c) => ({ ...c, createdAt: c.createdAt.toISOString() }));
      print(Boolean(opts.json), rows, '');
    });
  });
storage
  .command('default')
  .requiredOption('--org <org>')
  .argument('<name>', 'configuration id or name')
  .addOption(jsonOption())
  .action(async (name: string, opts: { org: string; json?: boolean }) => {
    await withData(async (data) => {
      const o = await requireOrganization(data, opts.org);
      if (!(await data.storageConfigs.setDefault(o.id, name))) throw new Error(`No storage configuration "${name}" in ${o.name}`);
      print(Boolean(opts.json), { organizationId: o.id, default: name }, `${name} is now the default storage of ${o.name}.`);
    });
  });
storage
  .command('test')
  .requiredOption('--org <org>')
  .argument('<name>', 'configuration id or name')
  .addOption(jsonOption())
  .action(async (name: string, opts: { org: string; json?: boolean }) => {
    await withData(async (data) => {
      const o = await requireOrganization(data, opts.org);
      const target = await data.storageConfigs.getDecrypted(o.id, name);
      if (!target) throw new Error(`No storage configuration "${name}" in ${o.name}`);
      await data.storage.probeWrite(target);
      print(Boolean(opts.json), { name, ok: true }, `Connection test of ${name} passed: a probe object was written and deleted.`);
    });
  });
storage
  .command('delete')
  .requiredOption('--org <org>')
  .argument('<name>', 'configuration id or name')
  .addOption(jsonOption())
  .action(async (name: string, opts: { org: string; json?: boolean }) => {
    await withData(async (data) => {
      const o = await requireOrganization(data, opts.org);
      if (!(await data.storageConfigs.delete(o.id, name))) throw new Error(`No storage configuration "${name}" in ${o.name}`);
      print(Boolean(opts.json), { name, deleted: true }, `Deleted storage configuration ${name}.`);
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
      print(Boolean(opts.json), { organizationId: o.id, remaining: balance?.remaining ?? null }, `Granted ${amount} credits to ${o.name}; ${balance?.remaining} remaining.`);
    });
  });

const filters = program.command('filters').description('the ad and cookie-banner filter lists (docs/content-filters.md)');
filters
  .command('prepare')
  .description('write the filter engines in their serialized form beside the lists, so that a new process loads them instead of parsing the lists (done when the package is packed and the image is built)')
  .addOption(jsonOption())
  .action(async (opts: { json?: boolean }) => {
    const { prepareEngines } = await import('../capture/page/content-filters/engines.js');
    const written = await prepareEngines();
    print(Boolean(opts.json), { engines: written }, written.map((engine) => `${engine.name}: ${engine.file} (${engine.bytes} bytes)`).join('\n'));
  });

program.parseAsync(process.argv).catch((error: unknown) => {
  // A driver's message may quote a connection URL: its credentials are masked (issue #28).
  console.error(error instanceof ConfigError ? error.message : `daguerre: ${maskUserinfo(error instanceof Error ? error.message : String(error))}`);
  process.exit(1);
});
