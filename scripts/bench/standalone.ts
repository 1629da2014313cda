import { pathToFileURL } from 'node:url';

/**
 * Lets a bench section run alone (`npx tsx scripts/bench/<section>.ts`): when `moduleUrl` is the
 * script node was started with, runs `measure`, prints its table and exits 1 when a target failed.
 */
export function runWhenInvokedDirectly(moduleUrl: string, measure: () => Promise<{ markdown: string; failures: number }>): void {
  if (!process.argv[1] || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  measure().then(
    ({ markdown, failures }) => {
      console.log(`\n${markdown}`);
      process.exit(failures === 0 ? 0 : 1);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
