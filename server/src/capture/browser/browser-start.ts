import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { egressPolicy, type AddressPolicy } from '../../security/address-policy.js';
import { EgressProxy } from '../../security/egress-proxy.js';
import { systemResolver, type Resolver } from '../../security/resolver.js';
import { BrowserManager } from './browser-manager.js';
import { ensureChromiumBinary, ensureChromiumUser } from './chromium-prerequisites.js';
import { checkSandbox, sandboxFlags, type SandboxStatus } from './sandbox-check.js';
import { ignoreBecause } from '../../ignore-error.js';

/** Chromium's side of a service, started before the rest: its network policy, that policy's proxy, the browser. */
export interface BrowserSide {
  policy: AddressPolicy;
  resolve: Resolver;
  egress: EgressProxy;
  browser: BrowserManager;
  sandbox: SandboxStatus;
  /** Stops the browser and the proxy: a start that fails after this leaves no process behind. */
  close(): Promise<void>;
}

/**
 * Checks what Chromium needs, starts the egress proxy every request of Chromium goes through, and
 * launches Chromium without waiting for it. `serve` and `worker` call this before they load the
 * rest of the service (runtime.ts): Chromium's launch, about half a second of another process's
 * work, then overlaps the seconds of module loading, database migrations and the queue's
 * connection instead of following them (docs/scaling.md, "Cold start"). A launch that fails is
 * reported by the first capture, or by the pool's warm-up, as it always was.
 */
export async function startBrowserSide(config: Config, logger: Logger, resolve: Resolver = systemResolver): Promise<BrowserSide> {
  // A start that cannot run Chromium fails before it opens anything: the browser and the user it runs
  // as exist, and it refuses to run unsandboxed unless the operator said so.
  ensureChromiumBinary(config.CHROME_PATH);
  ensureChromiumUser(logger);
  const sandbox = checkSandbox({ allowUnsandboxed: config.ALLOW_UNSANDBOXED_CHROMIUM });
  if (sandbox.mode === 'off') logger.warn({ sandbox }, 'Chromium runs WITHOUT its sandbox (ALLOW_UNSANDBOXED_CHROMIUM=true)');
  else if (config.ALLOW_UNSANDBOXED_CHROMIUM)
    logger.info({ sandbox: sandbox.mode }, 'ALLOW_UNSANDBOXED_CHROMIUM is set, but user namespaces work here: Chromium runs sandboxed');
  else logger.info({ sandbox: sandbox.mode }, "Chromium's sandbox is on (unprivileged user namespaces work here)");

  const policy = egressPolicy(config);
  // Every request Chromium makes goes through this proxy, which enforces the network policy.
  const egress = new EgressProxy(policy, resolve, logger);
  await egress.start();
  const browser = new BrowserManager({
    executablePath: config.CHROME_PATH,
    recycleAfter: config.BROWSER_RECYCLE_AFTER,
    protocolTimeoutMs: Math.max(1_000, config.CAPTURE_TIMEOUT_MS - 500),
    // `<-loopback>` removes Chromium's implicit bypass: loopback goes through the policy too.
    // The V8 heap cap of every renderer: a page that allocates without end crashes its own renderer
    // (noticed at once, answered 500, nothing charged) instead of growing to the host's memory.
    extraArgs: [
      ...sandboxFlags(sandbox),
      `--proxy-server=${egress.url}`,
      '--proxy-bypass-list=<-loopback>',
      `--js-flags=--max-old-space-size=${config.RENDERER_MAX_HEAP_MB}`,
    ],
    logger,
  });
  browser.get().catch(ignoreBecause('an early start only: a failed launch fails the first capture that asks for the browser'));
  return {
    policy,
    resolve,
    egress,
    browser,
    sandbox,
    close: async () => {
      await browser.close();
      await egress.stop();
    },
  };
}
