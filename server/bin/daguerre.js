#!/usr/bin/env node
// The server runs its TypeScript sources through tsx: no build step between a clone and `serve`.
import { isatty } from 'node:tty';
import { register } from 'tsx/esm/api';

// The AWS SDK warns on every start that its 2027 releases need Node 22; the operator cannot act on it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// puppeteer's protocol logger makes a `debug` logger for every DevTools message, and each one asks
// isatty(stderr) again unless DEBUG_COLORS is set (about 4 % of the service's own CPU per capture,
// profiled): asked once here, with the same answer.
process.env.DEBUG_COLORS ??= String(isatty(2));
register();
await import('../src/cli/main.ts');
