import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = (name: string) => fileURLToPath(new URL(`../../node_modules/.bin/${name}`, import.meta.url));

/** Runs a linter; resolves with its exit code and output whether it passed or not. */
async function lint(command: string, args: string[]): Promise<{ code: number; stdout: string; output: string }> {
  try {
    const { stdout, stderr } = await run(bin(command), args, {
      cwd: root,
      timeout: 120_000,
      env: { ...process.env, NO_COLOR: '1', REDOCLY_TELEMETRY: 'off' },
    });
    return { code: 0, stdout, output: `${stdout}${stderr}` };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string; message?: string };
    const stdout = failed.stdout ?? '';
    return {
      code: typeof failed.code === 'number' ? failed.code : -1,
      stdout,
      output: `${failed.message ?? ''}${stdout}${failed.stderr ?? ''}`,
    };
  }
}

describe('openapi.json under third-party linters', () => {
  it('passes @redocly/cli lint with zero errors', async () => {
    const result = await lint('redocly', ['lint', 'openapi.json', '--format', 'json']);
    expect(result.code, result.output).toBe(0);
    const report = JSON.parse(result.stdout) as { totals: { errors: number; warnings: number } };
    expect(report.totals.errors, result.output).toBe(0);
    expect(report.totals.warnings, result.output).toBe(0);
  }, 120_000);

  it("passes Spectral's spectral:oas ruleset (.spectral.yaml) with zero errors and zero warnings", async () => {
    const result = await lint('spectral', [
      'lint',
      'openapi.json',
      '--ruleset',
      '.spectral.yaml',
      '--format',
      'json',
      '--fail-severity',
      'warn',
    ]);
    expect(result.code, result.output).toBe(0);
    // The JSON array is followed by a summary line.
    const problems = JSON.parse(result.stdout.slice(result.stdout.indexOf('['), result.stdout.lastIndexOf(']') + 1)) as Array<{
      severity: number;
      code: string;
      path: string[];
    }>;
    // Severity 0 is an error, 1 a warning in Spectral's JSON output; hints and infos (2, 3) are allowed.
    expect(
      problems.filter((p) => p.severity <= 1).map((p) => `${p.code} ${p.path.join('.')}`),
      result.output,
    ).toEqual([]);
  }, 120_000);
});
