import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { ConfigError } from '../config.js';
import { maskUserinfo } from '../security/redaction.js';
import { packageFile } from '../package-files.js';
import { registerAccountCommands } from './account-commands.js';
import { registerMonitorCommands } from './monitor-commands.js';
import { registerPlanCommands } from './plan-commands.js';
import { registerServiceCommands } from './service-commands.js';
import { registerStorageCommands } from './storage-commands.js';

/** The `daguerre` command: each group of subcommands is registered by its own module. */
const { version } = JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string };
const program = new Command('daguerre').description('Daguerre: screenshot and PDF capture API').version(version).showHelpAfterError();
registerServiceCommands(program);
registerAccountCommands(program);
registerPlanCommands(program);
registerMonitorCommands(program);
registerStorageCommands(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  // A driver's message may quote a connection URL: its credentials are masked (docs/containment.md).
  console.error(
    error instanceof ConfigError ? error.message : `daguerre: ${maskUserinfo(error instanceof Error ? error.message : String(error))}`,
  );
  process.exit(1);
});
