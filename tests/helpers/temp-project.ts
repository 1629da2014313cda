import { execFile } from 'node:child_process';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const exec = promisify(execFile);
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const bin = (name: string) => join(REPO_ROOT, 'node_modules', '.bin', name);

/** A throwaway project with a package.json and a strict tsconfig that sees only Node's types. */
export async function createTempProject(dir: string, type: 'module' | 'commonjs', files: Record<string, string>): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: `temp-${type}`, version: '1.0.0', private: true, type }));
  await writeFile(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: 'node16',
        moduleResolution: 'node16',
        target: 'es2022',
        outDir: 'out',
        typeRoots: [join(REPO_ROOT, 'node_modules', '@types')],
        types: ['node'],
      },
      include: ['src'],
    }),
  );
  for (const [name, text] of Object.entries(files)) {
    await mkdir(join(dir, name, '..'), { recursive: true });
    await writeFile(join(dir, name), text);
  }
}

/** Type-checks (strict) and compiles a temp project with the repository's TypeScript 5. */
export async function compile(dir: string): Promise<void> {
  await exec(bin('tsc'), ['-p', join(dir, 'tsconfig.json')], { cwd: dir, timeout: 120_000 }).catch(
    (error: { stdout?: string; stderr?: string }) => {
      throw new Error(`tsc failed in ${dir}:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
    },
  );
}

/**
 * Runs `work` while holding a lock folder shared by every process of the suite (mkdir is atomic).
 * A lock older than `staleMs` was left by a killed run and is taken over.
 */
export async function withLockFolder<T>(lock: string, staleMs: number, work: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch {
      const age = Date.now() - (await stat(lock).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
      if (age > staleMs) await rm(lock, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  try {
    return await work();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/**
 * Runs `npm pack` of a workspace package with no other test file packing at the same time: a
 * package's prepack rebuilds its dist/ from scratch (and the server's postpack removes its copy of
 * openapi.json), so two packs at once could tar a half-built folder.
 */
export function withPackLock<T>(pack: () => Promise<T>): Promise<T> {
  return withLockFolder(join(tmpdir(), 'daguerre-npm-pack.lock'), 10 * 60_000, pack);
}
