import type { FiltersEngine } from '@ghostery/adblocker';
import type { Page } from 'puppeteer-core';
import { pageInfo, splitStylesheet } from './cosmetics.js';
import { ignoreBecause } from '../../../ignore-error.js';

/**
 * What one capture installs in the page before its first script runs (scripts evaluated on every
 * new document, page bindings), and the removal of all of it once the capture is done: contexts
 * and pages are reused, and the next capture must not find another capture's scripts in its
 * documents.
 */
export class DocumentStartRegistry {
  private readonly scripts: string[] = [];
  private readonly bindings: string[] = [];

  constructor(private readonly page: Page) {}

  async addScript(source: string): Promise<void> {
    const { identifier } = await this.page.evaluateOnNewDocument(source);
    this.scripts.push(identifier);
  }

  /** A function the page calls (it returns a promise of the handler's JSON-serializable result). */
  async expose(name: string, handler: (...args: never[]) => unknown): Promise<void> {
    // A binding left by a capture that failed half-way would make exposeFunction throw.
    await this.page.removeExposedFunction(name).catch(ignoreBecause('usually there is no binding left to remove'));
    await this.page.exposeFunction(name, handler as (...args: unknown[]) => unknown);
    this.bindings.push(name);
  }

  /** Removes everything; throws when the page would keep some of it (the caller then retires the context). */
  async remove(): Promise<void> {
    const scripts = this.scripts.splice(0);
    const bindings = this.bindings.splice(0);
    if (this.page.isClosed()) return;
    await Promise.all([
      ...scripts.map((identifier) => this.page.removeScriptToEvaluateOnNewDocument(identifier)),
      ...bindings.map((name) => this.page.removeExposedFunction(name)),
    ]);
  }
}

/**
 * Page source that hides the elements an engine's rules name, from the document's start: the
 * rules for the target's host and the generic base rules (the rules that depend on the classes
 * and ids the document will have are added once it has loaded, by applyCosmeticFilters). Rules go
 * into a constructed stylesheet, inserted one by one (see cosmetics.ts for why); empty when the
 * engine has nothing for that address.
 */
export function documentStartStyles(engine: FiltersEngine, targetUrl: string): string {
  const { styles } = engine.getCosmeticsFilters({
    ...pageInfo(targetUrl),
    getBaseRules: true,
    getInjectionRules: false,
    getExtendedRules: false,
    getRulesFromDOM: false,
    getRulesFromHostname: true,
  });
  const rules = styles ? splitStylesheet(styles) : [];
  if (rules.length === 0) return '';
  return `(() => {
  try {
    const sheet = new CSSStyleSheet();
    for (const rule of ${JSON.stringify(rules)}) {
      try { sheet.insertRule(rule, sheet.cssRules.length); } catch (error) { /* a selector this browser does not know */ }
    }
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  } catch (error) { /* no constructed stylesheets here: the rules come after load */ }
})();`;
}
