import { Option } from 'commander';
import { configNotices, loadConfig } from '../config.js';
import type { DataLayer } from '../services/data-layer.js';

/** What every CLI command shares: --json, printing, and a data layer opened for one command. */
export type Output = Record<string, unknown> | Record<string, unknown>[];

/** Prints JSON with --json, else a short human line (or a table for lists). */
export function print(json: boolean, value: Output, human: string) {
  if (json) console.log(JSON.stringify(value, null, 2));
  else if (Array.isArray(value)) console.table(value);
  else console.log(human);
}

export async function withData<T>(fn: (data: DataLayer) => Promise<T>): Promise<T> {
  const config = loadConfig();
  // On stderr, so that --json output stays parseable.
  for (const notice of configNotices(config)) console.error(notice);
  // Loaded here: `serve` and `worker` launch Chromium before they load the data layer (browser-start.ts).
  const { openDataLayer } = await import('../services/data-layer.js');
  const data = await openDataLayer(config);
  try {
    return await fn(data);
  } finally {
    await data.db.close();
  }
}

/** A flag's whole number, written in decimal digits only (Number() would read "0x10" and "1e3" too). */
export function wholeNumberFlag(flag: string, value: string, min = 0): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < min)
    throw new Error(`${flag} must be a whole number of at least ${min}; got "${value}"`);
  return Number(value);
}

export const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString());

export const jsonOption = () => new Option('--json', 'machine-readable output');
