#!/usr/bin/env node
// The `daguerre` command. An installed package runs its bundle (dist/, built when it is packed); a
// checkout runs the TypeScript sources through tsx, with no build step between a clone and `serve`.
import { existsSync } from 'node:fs';
import module, { register } from 'node:module';
import { isatty } from 'node:tty';

// The AWS SDK warns on every start that its 2027 releases need Node 22; the operator cannot act on it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// puppeteer's protocol logger makes a `debug` logger for every DevTools message, and each one asks
// isatty(stderr) again unless DEBUG_COLORS is set (about 4 % of the service's own CPU per capture,
// profiled): asked once here, with the same answer.
process.env.DEBUG_COLORS ??= String(isatty(2));

// V8's compiled code of the modules, kept on disk between starts (Node 22.1 and later; the image
// ships it made: NODE_COMPILE_CACHE, deploy/Dockerfile): a start compiles only what changed.
module.enableCompileCache?.();

const sources = new URL('../src/cli/main.ts', import.meta.url);
if (existsSync(sources)) {
  // In the checkout, @daguerre/client resolves to its sources through the "daguerre-source" export
  // condition (client/package.json), as it does for tsc and vitest.
  register(
    'data:text/javascript,' +
      encodeURIComponent(
        'export function resolve(s, c, next) { return next(s, { ...c, conditions: [...c.conditions, "daguerre-source"] }); }',
      ),
  );
  const { register: registerTsx } = await import('tsx/esm/api');
  registerTsx();
  await import(sources.href);
} else {
  await import('../dist/cli.js');
}
