import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './temp-project.js';
import { until } from './until.js';

const run = promisify(execFile);

/** The service's image as the container tests build it from the checkout. */
export const SERVICE_TAG = 'daguerre:container-test';

/**
 * The docker CLI. The classic builder (DOCKER_BUILDKIT=0): Debian's docker.io 20.10 has no buildx,
 * and the Dockerfile needs nothing BuildKit alone offers.
 */
export async function docker(args: string[], options: { timeoutMs?: number; cwd?: string } = {}): Promise<string> {
  const { stdout } = await run('docker', args, {
    cwd: options.cwd ?? REPO_ROOT,
    timeout: options.timeoutMs ?? 120_000,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, DOCKER_BUILDKIT: '0' },
  }).catch((error: { stderr?: string; stdout?: string; message: string }) => {
    throw new Error(`docker ${args.slice(0, 3).join(' ')} failed: ${error.stderr || error.stdout || error.message}`);
  });
  return stdout;
}

/** node:24-bookworm-slim, or the local stand-in where no registry is reachable (scripts/container/local-base-image.sh). */
export async function baseImage(): Promise<string> {
  const { stdout } = await run('bash', [join(REPO_ROOT, 'scripts/container/local-base-image.sh')], { timeout: 900_000 });
  return stdout.trim();
}

/** `docker build` of deploy/Dockerfile from the checkout, as docs/deploy.md gives it; its duration in seconds. */
export async function buildServiceImage(tag: string, base: string): Promise<number> {
  const started = Date.now();
  await docker(['build', '--build-arg', `BASE_IMAGE=${base}`, '-f', 'deploy/Dockerfile', '-t', tag, '.'], { timeoutMs: 1_800_000 });
  return (Date.now() - started) / 1000;
}

/** One of tests/container/images/*, built once per content of its folder and base. */
export async function testImage(name: 'mariadb' | 'redis' | 's3rver', base: string): Promise<string> {
  const folder = join(REPO_ROOT, 'tests/container/images', name);
  const hash = createHash('sha256').update(base);
  for (const file of (await readdir(folder)).sort()) hash.update(file).update(await readFile(join(folder, file)));
  const tag = `daguerre-test/${name}:${hash.digest('hex').slice(0, 12)}`;
  const present = await docker(['image', 'inspect', tag]).then(
    () => true,
    () => false,
  );
  if (!present) await docker(['build', '--build-arg', `BASE_IMAGE=${base}`, '-t', tag, folder], { timeoutMs: 900_000 });
  return tag;
}

export interface ContainerProcess {
  /** The process id on the host. */
  pid: number;
  uid: number;
  args: string;
}

/** Every process of a container, seen from the host (`docker top` runs ps here). */
export async function containerProcesses(name: string): Promise<ContainerProcess[]> {
  const out = await docker(['top', name, '-eo', 'pid,uid,args']);
  return out
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => {
      const [pid, uid, ...args] = line.trim().split(/\s+/);
      return { pid: Number(pid), uid: Number(uid), args: args.join(' ') };
    });
}

/** The host port a container port is published on (`-p 127.0.0.1::3000`). */
export async function publishedPort(name: string, port: number): Promise<number> {
  const out = await docker(['port', name, `${port}/tcp`]);
  const match = /:(\d+)\s*$/m.exec(out);
  if (!match) throw new Error(`${name} publishes no port for ${port}: ${out}`);
  return Number(match[1]);
}

export async function containerState(name: string): Promise<{ running: boolean; exitCode: number }> {
  const [running, exitCode] = (await docker(['inspect', '-f', '{{.State.Running}} {{.State.ExitCode}}', name])).trim().split(' ');
  return { running: running === 'true', exitCode: Number(exitCode) };
}

export async function containerIp(name: string, network: string): Promise<string> {
  return (await docker(['inspect', '-f', `{{(index .NetworkSettings.Networks "${network}").IPAddress}}`, name])).trim();
}

/** The host's address on a network, which its containers reach it at. */
export async function networkGateway(network: string): Promise<string> {
  const gateway = (await docker(['network', 'inspect', '-f', '{{range .IPAM.Config}}{{.Gateway}}{{end}}', network])).trim();
  if (gateway) return gateway;
  // Docker 20.10 leaves the default bridge's gateway out of its IPAM config: it is the bridge interface's address.
  const bridge =
    (await docker(['network', 'inspect', '-f', '{{index .Options "com.docker.network.bridge.name"}}', network])).trim() || 'docker0';
  const { stdout } = await run('ip', ['-4', '-o', 'addr', 'show', bridge]);
  const address = /inet (\d+\.\d+\.\d+\.\d+)/.exec(stdout)?.[1];
  if (!address) throw new Error(`no IPv4 address on ${bridge} for network ${network}`);
  return address;
}

/** Polls `url` until it answers 200 (the service's /ready), or fails with the container's log. */
export async function waitUntilReady(url: string, container: string, timeoutMs = 120_000): Promise<void> {
  await until(
    async () => {
      const state = await containerState(container);
      if (!state.running) throw new Error(`${container} exited (${state.exitCode}):\n${await logs(container)}`);
      const response = await fetch(url, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
      return response?.status === 200 ? true : undefined;
    },
    timeoutMs,
    `${url} to answer 200`,
    250,
  );
}

export async function logs(name: string): Promise<string> {
  const { stdout, stderr } = await run('docker', ['logs', name], { maxBuffer: 64 * 1024 * 1024 }).catch(
    (error: { stdout?: string; stderr?: string }) => ({
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
    }),
  );
  return `${stdout}${stderr}`;
}

export async function removeContainers(names: string[]): Promise<void> {
  if (names.length > 0) await docker(['rm', '-f', '-v', ...names]).catch(() => undefined);
}

/** The commands of docs/deploy.md's `docker run` block, continuation lines joined. */
export async function documentedDockerCommands(): Promise<{ build: string[]; run: string[]; wait: string; exec: string[] }> {
  const doc = await readFile(join(REPO_ROOT, 'docs/deploy.md'), 'utf8');
  const block = /<!-- docker-run[^>]*-->\s*```sh\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error('docs/deploy.md has no <!-- docker-run --> block');
  const lines = block
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .filter(Boolean);
  const command = (prefix: string) => {
    const line = lines.find((candidate) => candidate.startsWith(prefix));
    if (!line) throw new Error(`docs/deploy.md's docker-run block has no "${prefix}" line`);
    return line.trim().split(/\s+/);
  };
  return { build: command('docker build'), run: command('docker run'), wait: command('until').join(' '), exec: command('docker exec') };
}

/**
 * The settings the documented `docker run` gives a Daguerre container (stop timeout, shared memory,
 * read-only root and its tmpfs mounts, capabilities, no-new-privileges, the seccomp profile),
 * without what names one container: detaching, its name, port, volume and image.
 */
export async function documentedContainerSettings(): Promise<string[]> {
  const args = (await documentedDockerCommands()).run.slice(2, -1);
  const settings: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-d') continue;
    if (args[i] === '--name' || args[i] === '-p' || args[i] === '-v') i++;
    else settings.push(args[i]!);
  }
  return settings;
}
