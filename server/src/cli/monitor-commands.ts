import type { Command } from 'commander';
import pino from 'pino';
import type { Monitor } from '@daguerre/contract';
import { loadConfig } from '../config.js';
import type { MonitorSchedule } from '../monitors/monitor-schedule.js';
import type { MonitorService } from '../monitors/monitor-service.js';
import type { DataLayer } from '../services/data-layer.js';
import type { MonitorRepository } from '../store/monitor-repository.js';
import { requireOrganization } from './admin.js';
import { jsonOption, print, withData } from './cli-output.js';

/**
 * The monitors' service for one command, on the data layer the CLI opened. The schedule is
 * changed in Redis too when REDIS_URL is set (the service's processes would otherwise apply the
 * database's state at their next upkeep, within MONITOR_RECONCILE_INTERVAL_MS); without it no
 * monitor runs anywhere, so the database is all there is to change.
 */
async function withMonitors<T>(data: DataLayer, fn: (service: MonitorService, monitors: MonitorRepository) => Promise<T>): Promise<T> {
  // Loaded here, not at the top: every other command of the CLI starts without the job queue and the
  // capture modules these pull in (the admin CLI loads the data layer only, services/data-layer.ts).
  const [
    { jobConnection },
    { resultFiles },
    { MonitorSchedule },
    { MonitorService },
    { MonitorRepository },
    { MonitorRunRepository },
    { assertUrlAllowed },
  ] = await Promise.all([
    import('../jobs/redis-connection.js'),
    import('../jobs/start-jobs.js'),
    import('../monitors/monitor-schedule.js'),
    import('../monitors/monitor-service.js'),
    import('../store/monitor-repository.js'),
    import('../store/monitor-run-repository.js'),
    import('../security/target-policy.js'),
  ]);
  const config = loadConfig();
  // Warnings on stderr, so that --json output stays parseable.
  const logger = pino({ level: 'warn' }, pino.destination(2));
  const monitors = new MonitorRepository(data.db);
  const connection = config.REDIS_URL ? jobConnection(config.REDIS_URL) : undefined;
  const schedule = connection ? new MonitorSchedule(connection, { monitors, logger }, { prefix: config.JOB_QUEUE_PREFIX }) : undefined;
  const service = new MonitorService(
    {
      monitors,
      runs: new MonitorRunRepository(data.db),
      files: resultFiles(config),
      schedule: schedule ?? ({ plan: async () => undefined, unplan: async () => undefined } as unknown as MonitorSchedule),
      credits: data.credits,
      // The CLI changes no URL of a monitor: only pausing, resuming and deleting, which reach nothing.
      captures: { cheapChecks: async () => undefined },
      checkDestination: (field, url) => assertUrlAllowed(data.policy, data.resolve, field, url),
      logger,
    },
    {
      minIntervalSeconds: config.MONITOR_MIN_INTERVAL_SECONDS,
      defaultLimit: config.MONITORS_PER_ORGANIZATION,
      creditsPerCapture: config.CREDITS_PER_CAPTURE,
    },
  );
  try {
    return await fn(service, monitors);
  } finally {
    await schedule?.close();
    connection?.disconnect();
  }
}

async function requireMonitor(monitors: MonitorRepository, id: string) {
  const monitor = /^[0-9a-f-]{36}$/i.test(id) ? await monitors.get(id) : undefined;
  if (!monitor) throw new Error(`No monitor with id "${id}"`);
  return monitor;
}

/** One line of `monitor list`. */
const summary = (m: Monitor) => ({
  id: m.monitorId,
  name: m.name,
  url: m.url,
  intervalSeconds: m.intervalSeconds,
  threshold: m.threshold,
  status: m.paused ? `paused (${m.pausedReason ?? 'user'})` : 'active',
  lastRun: m.lastRun ? `${m.lastRun.startedAt} ${m.lastRun.status}${m.lastRun.diff ? ` ${m.lastRun.diff.diffPercent}%` : ''}` : null,
  nextRunAt: m.nextRunAt,
});

/** `daguerre monitor list | pause | resume | delete`: an operator's view of the organizations' monitors. */
export function registerMonitorCommands(program: Command): void {
  const monitor = program.command('monitor').description('monitors (pages captured on a schedule and compared)');
  monitor
    .command('list')
    .description("an organization's monitors, each with its last run")
    .requiredOption('--org <org>', 'organization id or name')
    .addOption(jsonOption())
    .action(async (opts: { org: string; json?: boolean }) => {
      await withData(async (data) => {
        const org = await requireOrganization(data, opts.org);
        const list = await withMonitors(data, (service) => service.list(org.id));
        if (opts.json) console.log(JSON.stringify(list, null, 2));
        else if (list.length === 0) console.log(`${org.name} has no monitors.`);
        else console.table(list.map(summary));
      });
    });

  const setPaused = (paused: boolean) => async (id: string, opts: { json?: boolean }) => {
    await withData(async (data) => {
      const after = await withMonitors(data, async (service, monitors) => {
        const record = await requireMonitor(monitors, id);
        const key = { keyId: record.apiKeyId ?? '', organizationId: record.organizationId, userId: null, membershipActive: true };
        return service.update(key, record.id, { paused });
      });
      print(
        Boolean(opts.json),
        after as unknown as Record<string, unknown>,
        paused
          ? `Paused monitor ${after.name} (${after.monitorId}).`
          : `Resumed monitor ${after.name} (${after.monitorId}): it runs now, then every ${after.intervalSeconds} s.`,
      );
    });
  };
  monitor
    .command('pause')
    .description('stop its runs until resumed')
    .argument('<id>', 'monitor id')
    .addOption(jsonOption())
    .action(setPaused(true));
  monitor
    .command('resume')
    .description('run it again on its schedule')
    .argument('<id>', 'monitor id')
    .addOption(jsonOption())
    .action(setPaused(false));
  monitor
    .command('delete')
    .description('stop and delete a monitor, its runs and their images')
    .argument('<id>', 'monitor id')
    .addOption(jsonOption())
    .action(async (id: string, opts: { json?: boolean }) => {
      await withData(async (data) => {
        const record = await withMonitors(data, async (service, monitors) => {
          const found = await requireMonitor(monitors, id);
          await service.remove(found.organizationId, found.id);
          return found;
        });
        print(
          Boolean(opts.json),
          { id: record.id, name: record.name, deleted: true },
          `Deleted monitor ${record.name} (${record.id}) and its runs.`,
        );
      });
    });
}
