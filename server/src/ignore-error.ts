/**
 * A rejection handler that drops the error and says why that is safe: closing a page that may
 * already be gone, a best-effort read whose absence the caller copes with, a cleanup whose failure
 * changes nothing. The reason is read by people, not by the program; a failure that matters is
 * logged or acted on instead. eslint.config.js asks every promise to be awaited or handled
 * (docs/development.md, "Commands"); at the root so that every layer may use it.
 *
 *     await page.close().catch(ignoreBecause('the browser may have ended the page already'));
 */
export function ignoreBecause(_reason: string): (error: unknown) => undefined {
  return () => undefined;
}
