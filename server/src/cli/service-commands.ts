import type { Command } from 'commander';
import { loadConfig, type Config } from '../config.js';
import { createLogger } from '../logger.js';
import type { ProcessRole } from '../jobs/start-jobs.js';
import type { Runtime } from '../runtime.js';
import { ignoreBecause } from '../ignore-error.js';
import { bootstrapDemo } from './admin.js';
import { jsonOption, print, withData } from './cli-output.js';
import { demoSecretFilePath, writeDemoKeyFile } from './demo-key-file.js';

/** Where the server listens, as it binds: a wildcard address says so, with the address this machine reaches it at. */
function listeningOn(host: string, localUrl: string): string {
  if (host !== '0.0.0.0' && host !== '::') return localUrl;
  const port = localUrl.slice(localUrl.lastIndexOf(':') + 1);
  return `http://${host === '::' ? '[::]' : host}:${port}, every interface (on this machine ${localUrl})`;
}

/** `serve` and `worker`: the service starts with SIGTERM and SIGINT handled from its first step. */
function startService(config: Config, role: ProcessRole): Promise<Runtime> {
  const starting = startBesideChromium(config, role);
  stopOnSignals(starting);
  return starting;
}

/**
 * Chromium launches first, then the rest of the service loads (its modules take seconds of a cold
 * start) while Chromium starts beside it (capture/browser/browser-start.ts).
 */
async function startBesideChromium(config: Config, role: ProcessRole): Promise<Runtime> {
  const logger = createLogger(config.LOG_LEVEL);
  const { startBrowserSide } = await import('../capture/browser/browser-start.js');
  const browserSide = await startBrowserSide(config, logger);
  try {
    const { startRuntime } = await import('../runtime.js');
    return await startRuntime(config, { role, logger, browserSide });
  } catch (error) {
    await browserSide.close().catch(ignoreBecause('the failed start is the error thrown'));
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

/** `daguerre serve | worker | mcp | migrate | filters prepare`: the commands that run or prepare the service. */
export function registerServiceCommands(program: Command): void {
  program
    .command('serve')
    .description('start the HTTP service (migrates the database first)')
    .action(async () => {
      const config = loadConfig();
      // Loaded there: the browser, HTTP and queue modules are only for serve and worker, not the admin commands.
      const runtime = await startService(config, 'serve');
      const demo = config.DATABASE_URL.startsWith('sqlite:') ? await bootstrapDemo(runtime, config.DEMO_CREDITS) : undefined;
      console.log(`Daguerre listening on ${listeningOn(config.HOST, runtime.url)} (docs: ${runtime.url}/docs)`);
      if (demo) {
        console.log(`Created demo organization "${demo.organization.name}" with ${config.DEMO_CREDITS} credits.`);
        const keyFile = await writeDemoKeyFile(config.DEMO_KEY_FILE, demo.key.key);
        console.log(`Demo API key written to ${keyFile} (readable by its owner only; the key is never printed).`);
        console.log(`Try: curl -o shot.png -H "X-API-Key: $(cat ${keyFile})" "${runtime.url}/capture?url=https://example.com"`);
        const secretFile = await writeDemoKeyFile(demoSecretFilePath(config.DEMO_KEY_FILE), demo.key.signingSecret);
        console.log(
          `Its key id: ${demo.key.id}; its signing secret (signed links, webhook signatures: new Webhook(secret)) is in ${secretFile} (owner only).`,
        );
      }
    });

  program
    .command('worker')
    .description('run a render worker only: takes async capture jobs from Redis (REDIS_URL); /health, /ready and /metrics on WORKER_PORT')
    .action(async () => {
      const config = loadConfig();
      const runtime = await startService(config, 'worker');
      console.log(
        `Daguerre worker rendering up to ${Math.max(1, config.CAPTURE_WORKERS)} jobs at once, listening on ${listeningOn(config.HOST, runtime.url)} (health: ${runtime.url}/health)`,
      );
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
        console.error(
          `daguerre mcp needs ${!url ? 'the service address (--url or DAGUERRE_URL)' : ''}${!url && !apiKey ? ' and ' : ''}${!apiKey ? 'an API key (--api-key or DAGUERRE_API_KEY)' : ''}`,
        );
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

  const filters = program.command('filters').description('the ad and cookie-banner filter lists (docs/content-filters.md)');
  filters
    .command('prepare')
    .description(
      'write the filter engines in their serialized form beside the lists, so that a new process loads them instead of parsing the lists (done when the package is packed and the image is built)',
    )
    .addOption(jsonOption())
    .action(async (opts: { json?: boolean }) => {
      const { prepareEngines } = await import('../capture/page/content-filters/engines.js');
      const written = await prepareEngines();
      print(
        Boolean(opts.json),
        { engines: written },
        written.map((engine) => `${engine.name}: ${engine.file} (${engine.bytes} bytes)`).join('\n'),
      );
    });
}
