import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { descendantsOf } from '../helpers/process-tree.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/** The second local user of the host: nobody (uid 65534), neither the service's user nor Chromium's. */
const OTHER_USER = 65534;

/**
 * Run as `nobody`: tries every TCP port the test's own processes listen on the way a DevTools client would
 * (GET /json/version, then /json/list), and tries to open the browser's pipe and profile. Prints
 * what it reached as JSON.
 */
const ATTACKER = `
const http = require('node:http');
const fs = require('node:fs');
const [ports, pid, profile] = [JSON.parse(process.argv[1]), process.argv[2], process.argv[3]];
const get = (port, path) => new Promise((resolve) => {
  const req = http.get({ host: '127.0.0.1', port, path, timeout: 3000 }, (res) => {
    let body = '';
    res.on('data', (chunk) => (body += chunk));
    res.on('end', () => resolve(body));
  });
  req.on('error', () => resolve(''));
  req.on('timeout', () => { req.destroy(); resolve(''); });
});
const tryOpen = (path) => { try { fs.closeSync(fs.openSync(path, 'r+')); return true; } catch { return false; } };
const tryList = (path) => { try { fs.readdirSync(path); return true; } catch { return false; } };
(async () => {
  const devtools = [];
  for (const port of ports) {
    const version = await get(port, '/json/version');
    const list = await get(port, '/json/list');
    if (/webSocketDebuggerUrl|Browser/.test(version + list)) devtools.push(port);
  }
  console.log(JSON.stringify({ devtools, pipeIn: tryOpen('/proc/' + pid + '/fd/3'), pipeOut: tryOpen('/proc/' + pid + '/fd/4'), fds: tryList('/proc/' + pid + '/fd'), profile: tryList(profile) }));
})();
`;

interface Listener {
  port: number;
  pids: number[];
}

/** Every TCP socket listening on this host, with the pids that hold it (ss -ltnp, as root). */
function listeners(): Listener[] {
  return execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const local = line.trim().split(/\s+/)[3] ?? '';
      return { port: Number(local.slice(local.lastIndexOf(':') + 1)), pids: [...line.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1])) };
    });
}

describe('Chromium is reached over a pipe only', () => {
  let service: TestService;
  let fixtures: FixtureServer;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    fixtures.route('/slow', (_req, res) => {
      const timer = setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>slow</p>'), 4_000);
      res.on('close', () => clearTimeout(timer));
    });
    service = await startTestService();
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  it('no Chromium process listens on TCP during a capture, and another local user cannot attach to the browser', async () => {
    fixtures.reset();
    const pending = service.get(
      `/capture?${new URLSearchParams({ url: `${fixtures.url}/slow`, viewportWidth: '200', viewportHeight: '150', apiKey: service.apiKey })}`,
    );
    await fixtures.waitForRequest('/slow');

    const browserPid = service.runtime.browser.pid()!;
    const chromium = new Set([browserPid, ...descendantsOf(browserPid).map((p) => p.pid)]);
    expect(chromium.size).toBeGreaterThan(2);
    const cmdline = readFileSync(`/proc/${browserPid}/cmdline`, 'utf8').split('\0');
    expect(cmdline).toContain('--remote-debugging-pipe');
    expect(cmdline.some((arg) => arg.startsWith('--remote-debugging-port'))).toBe(false);

    const all = listeners();
    expect(all.length).toBeGreaterThan(0);
    expect(all.filter((listener) => listener.pids.some((pid) => chromium.has(pid)))).toEqual([]);
    // The ports this process tree holds (the service runs in it, Chromium below it): a DevTools port
    // the browser opened would be one of them. Never the machine's other ports: another program's
    // Chromium may listen with DevTools open there, and reaching it says nothing of ours.
    const ours = new Set([process.pid, ...descendantsOf(process.pid).map((p) => p.pid)]);
    const ownPorts = [...new Set(all.filter((listener) => listener.pids.some((pid) => ours.has(pid))).map((l) => l.port))];
    expect(ownPorts.length).toBeGreaterThan(0);

    const profile = cmdline.find((arg) => arg.startsWith('--user-data-dir='))!.slice('--user-data-dir='.length);
    // Not spawnSync: the service runs in this process and must keep serving the capture meanwhile.
    const attempt = await promisify(execFile)(
      'setpriv',
      [
        `--reuid=${OTHER_USER}`,
        `--regid=${OTHER_USER}`,
        '--clear-groups',
        process.execPath,
        '-e',
        ATTACKER,
        JSON.stringify(ownPorts),
        String(browserPid),
        profile,
      ],
      { encoding: 'utf8', timeout: 60_000, cwd: '/' },
    );
    expect(attempt.stderr).toBe('');
    const reached = JSON.parse(attempt.stdout) as { devtools: number[]; pipeIn: boolean; pipeOut: boolean; fds: boolean; profile: boolean };
    expect(reached).toEqual({ devtools: [], pipeIn: false, pipeOut: false, fds: false, profile: false });

    expect((await pending).status).toBe(200);
  }, 90_000);
});
