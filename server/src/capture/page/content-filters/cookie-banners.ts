import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { filterCompactRules, type IndexedCMPRuleset } from '@duckduckgo/autoconsent';
import type { FiltersEngine } from '@ghostery/adblocker';
import type { Frame, Page } from 'puppeteer-core';
import { applyCosmeticFilters, framesOf, pageInfo, type CosmeticResult } from './cosmetics.js';
import { documentStartStyles, type DocumentStartRegistry } from './document-start.js';
import { cleanupOverlays, type OverlayCleanupResult } from './overlay-cleanup.js';

/**
 * How long the consent engine may go on once the page has loaded (it has been running since the
 * document's start, so by then it has looked for a consent manager at least once), and at most
 * actionMs in all, which bounds what the option costs on any page.
 * - detection: no consent manager found by then → none is assumed (the fixed cost of the option
 *   on a page without one; the cookie-notice rules hide one that shows later);
 * - popup: a consent manager is present but its dialog has not shown by then → it is not going to
 *   (consent already stored, or a region without a banner);
 * - action: a dialog is being refused (some need a second layer: settings, toggles, save).
 */
export interface ConsentTimings {
  detectionMs: number;
  popupMs: number;
  actionMs: number;
  /** Left for the dialog to go away after a successful refusal. */
  settleMs: number;
  pollMs: number;
}

/**
 * detectionMs is short because the engine has been in the page since its first script: by the load
 * event it has watched the whole load, and this is only the grace for a consent manager that starts
 * just after it. At 100 ms the option cost +125–151 ms on a page without one (target +150).
 */
export const DEFAULT_CONSENT_TIMINGS: ConsentTimings = { detectionMs: 75, popupMs: 300, actionMs: 800, settleMs: 100, pollMs: 25 };

/** Autoconsent's content script for automation (it talks through window.autoconsentSendMessage / autoconsentReceiveMessage). */
export interface ConsentEngineAssets {
  script: string;
  rules: IndexedCMPRuleset;
}

let assets: Promise<ConsentEngineAssets> | undefined;

/** Read once per process; a failure is forgotten, so that the next call tries again. */
export function loadConsentEngineAssets(): Promise<ConsentEngineAssets> {
  assets ??= readConsentEngineAssets().catch((error: unknown) => {
    assets = undefined;
    throw error;
  });
  return assets;
}

async function readConsentEngineAssets(): Promise<ConsentEngineAssets> {
  const require = createRequire(import.meta.url);
  // The package exports only its bundle and rules; the automation script sits beside the bundle.
  const distDir = dirname(require.resolve('@duckduckgo/autoconsent'));
  const [script, rules] = await Promise.all([
    readFile(join(distDir, 'autoconsent.playwright.js'), 'utf8'),
    readFile(require.resolve('@duckduckgo/autoconsent/rules/compact-rules.json'), 'utf8'),
  ]);
  return { script, rules: JSON.parse(rules) as IndexedCMPRuleset };
}

/**
 * Autoconsent's settings: refuse (optOut) wherever a rule knows how. The heuristic detector may
 * press a "reject" button, or an "OK / got it" one on a notice that offers no choice ('tier1'); it
 * never accepts. The script runs in the page's own world, so rules that call a consent manager's
 * JavaScript API do it directly. Prehiding is on, from the document's start: the dialogs of the
 * consent managers autoconsent knows are transparent until it has refused them (it then lifts the
 * prehide itself; the manager hides its own dialog). A refusal that takes longer than the option
 * may cost (Cookiebot's takes 1.5 s, most of it checking its own work) thus never shows in the
 * capture, nor does the markup of a consent manager whose script never came. prehideTimeout is
 * longer than any capture: lifting it half-way would show a dialog nobody refused.
 */
const AUTOCONSENT_CONFIG = {
  enabled: true,
  autoAction: 'optOut',
  disabledCmps: [],
  enablePrehide: true,
  enableCosmeticRules: true,
  enableGeneratedRules: true,
  enableHeuristicDetection: true,
  heuristicMode: 'tier1',
  enablePopupMutationObserver: false,
  detectRetries: 20,
  isMainWorld: true,
  prehideTimeout: 120_000,
  visualTest: false,
  performanceLoggingEnabled: false,
  logs: { lifecycle: false, rulesteps: false, detectionsteps: false, evals: false, errors: false, messages: false, waits: false },
};

/** The page binding that answers the content script's init message at once, with the rules for its frame. */
const INIT_BINDING = '__daguerreConsentInit';

/**
 * A message queue the content script writes to and the capture reads by polling. The init message
 * is answered through the binding while the capture installed it (from the document's start on),
 * so that detection starts before the page's own scripts run; without it, by the polling capture.
 * Returns false when the document has it already (installed at its start).
 */
const BRIDGE = `(() => {
  if (window.__daguerreConsent) return false;
  const queue = [];
  Object.defineProperty(window, '__daguerreConsent', { value: { take: () => queue.splice(0, queue.length) }, configurable: true });
  window.autoconsentSendMessage = (message) => {
    const init = window.${INIT_BINDING};
    if (message && message.type === 'init' && typeof init === 'function') {
      init(String(location.href), window === window.top).then((reply) => window.autoconsentReceiveMessage(reply), () => undefined);
      return Promise.resolve();
    }
    try { queue.push(JSON.parse(JSON.stringify(message))); } catch (error) { /* not serializable: not needed */ }
    return Promise.resolve();
  };
  return true;
})()`;
const TAKE = `window.__daguerreConsent ? window.__daguerreConsent.take() : null`;

type Lifecycle =
  | 'loading'
  | 'waitingForInitResponse'
  | 'initialized'
  | 'started'
  | 'nothingDetected'
  | 'cmpDetected'
  | 'openPopupDetected'
  | 'runningOptOut'
  | 'runningOptIn'
  | 'optOutSucceeded'
  | 'optOutFailed'
  | 'optInSucceeded'
  | 'optInFailed'
  | 'done';

interface ContentMessage {
  type: string;
  cmp?: string;
  result?: boolean;
  state?: { lifecycle?: Lifecycle };
}

const TERMINAL = new Set<Lifecycle>(['nothingDetected', 'optOutSucceeded', 'optOutFailed', 'optInSucceeded', 'optInFailed', 'done']);
const ACTING = new Set<Lifecycle>(['openPopupDetected', 'runningOptOut']);

interface FrameRun {
  frame: Frame;
  lifecycle: Lifecycle;
  gone: boolean;
}

export interface ConsentReport {
  /** Consent managers autoconsent recognised. */
  detected: string[];
  /** Those whose dialog it refused (or dismissed, for a notice without choice). */
  refused: string[];
  /** Those where the refusal failed (the cosmetic filters and the overlay cleanup still apply). */
  failed: string[];
  consentMs: number;
  cosmetic: CosmeticResult;
  overlays: OverlayCleanupResult;
}

/**
 * One capture's cookie-banner removal, on the loaded page: autoconsent refuses consent where it
 * recognises the consent manager, then the cookie-notice list hides the notices it knows, then
 * the overlay cleanup removes what is left in the way (a full-screen backdrop, the page's scroll
 * lock). The engine and the rules are in the capture's documents from their start
 * (beforeNavigate); what was registered on the page for that is removed after the capture.
 */
export class CookieBannerSession {
  private readonly runs = new Map<Frame, FrameRun>();
  private readonly report: ConsentReport = {
    detected: [],
    refused: [],
    failed: [],
    consentMs: 0,
    cosmetic: { frames: 0, rules: 0 },
    overlays: { removed: 0, unlocked: 0 },
  };

  constructor(
    private readonly assets: ConsentEngineAssets,
    private readonly engine: FiltersEngine,
    private readonly timings: ConsentTimings = DEFAULT_CONSENT_TIMINGS,
  ) {}

  private baseRulesApplied = false;

  /**
   * Before navigation: autoconsent and the cookie-notice rules go into every document of the
   * capture from its start (before the page's first script), so a banner is refused or hidden
   * while the page loads. The registry removes them after the capture.
   */
  async beforeNavigate(registry: DocumentStartRegistry, targetUrl: string): Promise<void> {
    await registry.expose(INIT_BINDING, (url: string, mainFrame: boolean) => this.initReply(url, mainFrame));
    const styles = documentStartStyles(this.engine, targetUrl);
    await registry.addScript(`${styles}\n${BRIDGE};\n${this.assets.script}`);
    this.baseRulesApplied = styles !== '';
  }

  async afterLoad(page: Page, deadline: number): Promise<ConsentReport> {
    const started = Date.now();
    await this.refuseConsent(page, Math.min(deadline, started + this.timings.actionMs));
    this.report.consentMs = Date.now() - started;
    this.report.cosmetic = await applyCosmeticFilters(page, this.engine, { baseRulesApplied: this.baseRulesApplied });
    this.report.overlays = await cleanupOverlays(page);
    return this.report;
  }

  private async refuseConsent(page: Page, hardStop: number): Promise<void> {
    const started = Date.now();
    for (;;) {
      await this.injectNewFrames(page);
      await Promise.all([...this.runs.values()].map((run) => this.poll(run)));
      const live = [...this.runs.values()].filter((run) => !run.gone);
      const elapsed = Date.now() - started;
      if (live.every((run) => TERMINAL.has(run.lifecycle))) break;
      const acting = live.some((run) => ACTING.has(run.lifecycle));
      const present = live.some((run) => run.lifecycle === 'cmpDetected');
      const limit = acting ? this.timings.actionMs : present ? this.timings.popupMs : this.timings.detectionMs;
      if (elapsed >= limit || Date.now() >= hardStop) break;
      await new Promise((resolve) => setTimeout(resolve, this.timings.pollMs));
    }
    if (this.report.refused.length > 0) await new Promise((resolve) => setTimeout(resolve, this.timings.settleMs));
  }

  /** Starts autoconsent in every frame that does not run it yet (a consent dialog may live in an iframe that appeared late). */
  private async injectNewFrames(page: Page): Promise<void> {
    const fresh = framesOf(page).filter((frame) => !this.runs.has(frame));
    await Promise.all(
      fresh.map(async (frame) => {
        const run: FrameRun = { frame, lifecycle: 'loading', gone: false };
        this.runs.set(frame, run);
        try {
          // A document that has had the engine since its start keeps it: only the polling starts here.
          if (await frame.evaluate(BRIDGE)) await frame.evaluate(this.assets.script);
        } catch {
          run.gone = true;
        }
      }),
    );
  }

  /** Autoconsent's settings and the rules that can apply to a document at this address. */
  private initReply(url: string, mainFrame: boolean): { type: 'initResp'; config: typeof AUTOCONSENT_CONFIG; rules: object } {
    // Inline html is a (long) data: URL: no site-specific rule can match it.
    const compact = filterCompactRules(this.assets.rules, { url: pageInfo(String(url)).url, mainFrame: mainFrame === true });
    return { type: 'initResp', config: AUTOCONSENT_CONFIG, rules: { autoconsent: [], compact } };
  }

  private async poll(run: FrameRun): Promise<void> {
    if (run.gone) return;
    let messages: ContentMessage[] | null;
    try {
      messages = (await run.frame.evaluate(TAKE)) as ContentMessage[] | null;
    } catch {
      messages = null;
    }
    // The document was replaced (navigation, a consent manager reloading the page): nothing more to learn from it.
    if (messages === null) {
      run.gone = true;
      return;
    }
    for (const message of messages) await this.handle(run, message);
  }

  private async handle(run: FrameRun, message: ContentMessage): Promise<void> {
    switch (message.type) {
      case 'init': {
        const frame = run.frame;
        const reply = JSON.stringify(this.initReply(frame.url(), frame.parentFrame() === null));
        // Not awaited in the page: the reply starts detection, which runs on by itself.
        await frame.evaluate(`void window.autoconsentReceiveMessage(${reply})`).catch(() => (run.gone = true));
        break;
      }
      case 'report':
        if (message.state?.lifecycle) run.lifecycle = message.state.lifecycle;
        break;
      case 'cmpDetected':
        if (message.cmp && !this.report.detected.includes(message.cmp)) this.report.detected.push(message.cmp);
        break;
      case 'optOutResult':
        if (message.cmp) (message.result ? this.report.refused : this.report.failed).push(message.cmp);
        break;
      case 'eval':
        // Only sent when the script runs in an isolated world; this one runs in the page's.
        break;
    }
  }
}
