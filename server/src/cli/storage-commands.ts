import type { Command } from 'commander';
import { requireOrganization } from './admin.js';
import { jsonOption, print, withData } from './cli-output.js';

/** `daguerre storage add | list | default | test | delete`: an organization's S3-compatible storage. */
export function registerStorageCommands(program: Command): void {
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
      async (opts: {
        org: string;
        name: string;
        endpoint: string;
        bucket: string;
        region: string;
        accessKeyId: string;
        secretAccessKey: string;
        default?: boolean;
        json?: boolean;
      }) => {
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
          print(
            Boolean(opts.json),
            { ...created, createdAt: created.createdAt.toISOString() },
            `Created storage configuration ${created.name} (${created.id})${created.isDefault ? ', the default' : ''}.`,
          );
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
}
