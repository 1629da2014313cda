import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  baseImage,
  buildServiceImage,
  containerProcesses,
  containerState,
  docker,
  documentedDockerCommands,
  logs,
  networkGateway,
  publishedPort,
  removeContainers,
  SERVICE_TAG,
  waitUntilReady,
} from '../helpers/container.js';
import { HoldServer } from '../helpers/hold-server.js';
import { expectPngAndPdf } from '../helpers/service-checks.js';
import { REPO_ROOT } from '../helpers/temp-project.js';
import { until } from '../helpers/until.js';

const run = promisify(execFile);
const id = randomBytes(3).toString('hex');

/**
 * The documented `docker run` with only what a test must change: its own container and volume
 * names, a loopback port of its own, this build's tag, and extra settings before the image name.
 */
function asTestRun(documented: string[], name: string, extra: string[] = [], drop: (arg: string) => boolean = () => false): string[] {
  const args = documented.slice(1);
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const value = args[i + 1];
    if (i === args.length - 1) {
      out.push(...extra, SERVICE_TAG);
    } else if (arg === '--name' || arg === '-p' || arg === '-v' || (arg === '--security-opt' && drop(value!))) {
      if (arg === '--name') out.push('--name', name);
      if (arg === '-p') out.push('-p', `127.0.0.1::${value!.split(':').at(-1)}`);
      if (arg === '-v') out.push('-v', value!.replace(/^[^:/]+:/, `${name}-data:`));
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/**
 * An entry of an image layer that could only have come from the build context unasked: a Git folder
 * anywhere, or under /app (outside the installed dependencies) a .env file, anything in the data
 * folder, or the repository's other folders and sources.
 */
function fromBuildContext(entry: string): boolean {
  if (/(^|\/)\.git(\/|$)/.test(entry)) return true;
  if (!entry.startsWith('app/') || /(^|\/)node_modules\//.test(entry)) return false;
  return (
    /(^|\/)\.env$/.test(entry) ||
    /^app\/data\/./.test(entry) ||
    /^app\/(server\/)?(tests|scripts|docs|deploy|client|contract|src)\//.test(entry)
  );
}

describe('the image built from the checkout and run as docs/deploy.md says', () => {
  let documented: Awaited<ReturnType<typeof documentedDockerCommands>>;
  const planted: string[] = [];
  const canary = `daguerre-canary-${randomBytes(8).toString('hex')}`;
  const holds = new HoldServer((tag) => `<body style="margin:0;background:#fff"><h1>${tag}</h1></body>`);
  const name = `daguerre-it-${id}`;
  let base: string;
  let url = '';
  let apiKey = '';

  beforeAll(async () => {
    documented = await documentedDockerCommands();
    expect(documented.build.slice(0, 6)).toEqual(['docker', 'build', '-f', 'deploy/Dockerfile', '-t', 'daguerre']);
    base = await baseImage();
    // Secrets a careless user keeps in the build context (docs/deploy.md tells them to create deploy/.env).
    for (const [path, text] of [
      ['deploy/.env', `MARIADB_PASSWORD=${canary}\n`],
      [`data/${canary}.key`, canary],
    ] as const) {
      const file = join(REPO_ROOT, path);
      if (existsSync(file)) continue;
      await mkdir(join(file, '..'), { recursive: true });
      await writeFile(file, text);
      planted.push(file);
    }
    try {
      const seconds = await buildServiceImage(SERVICE_TAG, base);
      console.log(`docker build of deploy/Dockerfile from ${base}: ${seconds.toFixed(0)} s`);
    } finally {
      for (const file of planted) await rm(file, { force: true });
    }
    await holds.start(await networkGateway('bridge'));
  }, 1_900_000);

  afterAll(async () => {
    await removeContainers([name, `${name}-default-seccomp`]);
    await docker(['volume', 'rm', '-f', `${name}-data`, `${name}-default-seccomp-data`]).catch(() => undefined);
    await holds.stop();
  });

  it('is at most 1.5 GB and no layer holds a secret, .git, tests or local node_modules of the build context', async () => {
    const size = Number((await docker(['image', 'inspect', '-f', '{{.Size}}', SERVICE_TAG])).trim());
    console.log(`image size: ${(size / 1e9).toFixed(2)} GB (${(size / 2 ** 30).toFixed(2)} GiB)`);
    expect(size).toBeLessThanOrEqual(1.5e9);

    const work = await mkdtemp(join(tmpdir(), 'daguerre-image-layers-'));
    try {
      await docker(['save', '-o', join(work, 'image.tar'), SERVICE_TAG], { timeoutMs: 600_000 });
      await run('tar', ['-xf', join(work, 'image.tar'), '-C', work]);
      const layers = (await readdir(work, { recursive: true })).filter((file) => file.endsWith('layer.tar'));
      expect(layers.length).toBeGreaterThan(3);
      const found: string[] = [];
      for (const layer of layers) {
        const { stdout } = await run('tar', ['-tf', join(work, layer)], { maxBuffer: 256 * 1024 * 1024 });
        for (const entry of stdout.split('\n')) {
          if (fromBuildContext(entry) || entry.includes(canary)) found.push(`${layer}: ${entry}`);
        }
        // The canary's text in any file of the layer, whatever its name.
        const grep = await run('grep', ['-a', '-c', canary, join(work, layer)]).catch(() => ({ stdout: '0' }));
        if (Number(grep.stdout.trim()) > 0) found.push(`${layer}: contains ${canary}`);
      }
      expect(found).toEqual([]);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }, 900_000);

  it('starts with its sandbox on, takes a key from the CLI inside it, captures a PNG and a PDF, as a non-root user under seccomp without --no-sandbox', async () => {
    const started = Date.now();
    await docker(asTestRun(documented.run, name, ['-e', `EGRESS_ALLOW_LIST=${holds.url.replace('http://', '')}`]));
    url = `http://127.0.0.1:${await publishedPort(name, 3000)}`;
    await waitUntilReady(`${url}/ready`, name);
    console.log(`docker run to /ready: ${Date.now() - started} ms`);
    // The block's own wait, on this container's port.
    await run('timeout', ['60', 'bash', '-c', documented.wait.replace('http://localhost:3000', url)]);
    const ready = (await (await fetch(`${url}/ready`)).json()) as { checks: { sandbox: { mode: string } } };
    expect(ready.checks.sandbox.mode).toBe('on');
    const startLog = await logs(name);
    expect(startLog).toContain("Chromium's sandbox is on");
    expect(startLog).toMatch(/listening on http:\/\/0\.0\.0\.0:3000, every interface/);
    expect(startLog).not.toMatch(/Tini is not running as PID 1/);

    const exec = documented.exec.slice(1).map((arg, index) => (index === 1 ? name : arg));
    const key = JSON.parse(await docker(exec)) as { key: string };
    apiKey = key.key;

    await expectPngAndPdf(url, apiKey, 500);

    const processes = await containerProcesses(name);
    expect(processes.some((p) => p.args.includes('chromium-headless-shell'))).toBe(true);
    expect(processes.filter((p) => p.uid === 0)).toEqual([]);
    expect(processes.filter((p) => p.args.includes('--no-sandbox'))).toEqual([]);
    let checked = 0;
    for (const { pid } of processes) {
      const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
      if (!status) continue; // exited between the two looks
      checked++;
      expect(status, `pid ${pid}`).toMatch(/^Seccomp:\s+2$/m);
      expect(status, `pid ${pid}`).toMatch(/^NoNewPrivs:\s+1$/m);
    }
    // Read from the host's /proc: an engine whose processes this test cannot see checks nothing.
    expect(checked).toBeGreaterThan(3);
    // The root file system is read-only: only the volume and the tmpfs mounts take writes.
    await expect(docker(['exec', name, 'sh', '-c', 'touch /app/server/x'])).rejects.toThrow(/Read-only file system/);
  }, 240_000);

  it('docker stop lets a capture in flight finish and exits 0 within the documented grace', async () => {
    expect(apiKey).not.toBe('');
    const capture = fetch(`${url}/capture?url=${encodeURIComponent(`${holds.url}/hold/drain`)}`, { headers: { 'X-API-Key': apiKey } });
    await holds.asked('drain');
    const stopStarted = Date.now();
    const stopping = docker(['stop', name], { timeoutMs: 120_000 });
    // The capture goes on for 12 s after the service has begun to drain: past Docker's default grace
    // of 10 s, within the service's 30 s, so only the documented --stop-timeout lets it finish.
    await until(async () => ((await logs(name)).includes('shutting down') ? true : undefined), 30_000, 'the service to begin its shutdown');
    await new Promise((resolve) => setTimeout(resolve, 12_000));
    holds.release('drain');
    const answer = await capture;
    expect(answer.status).toBe(200);
    expect(
      Buffer.from(await answer.arrayBuffer())
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    await stopping;
    const stopSeconds = (Date.now() - stopStarted) / 1000;
    const stopTimeout = Number(documented.run[documented.run.indexOf('--stop-timeout') + 1]);
    expect(stopSeconds).toBeLessThan(stopTimeout);
    expect(await containerState(name)).toEqual({ running: false, exitCode: 0 });
    console.log(`docker stop with a capture in flight: ${stopSeconds.toFixed(1)} s`);
  }, 180_000);

  it("refuses to start under Docker's default seccomp profile and says why", async () => {
    const refused = `${name}-default-seccomp`;
    await docker(asTestRun(documented.run, refused, [], (value) => value.startsWith('seccomp=')));
    await until(async () => ((await containerState(refused)).running ? undefined : true), 60_000, 'the container to stop');
    expect((await containerState(refused)).exitCode).not.toBe(0);
    expect(await logs(refused)).toMatch(/Chromium's sandbox needs unprivileged user namespaces/);
  }, 120_000);
});
