#!/usr/bin/env node
// The server runs its TypeScript sources through tsx: no build step between a clone and `serve`.
import { register } from 'tsx/esm/api';

// The AWS SDK warns on every start that its 2027 releases need Node 22; the operator cannot act on it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
register();
await import('../src/cli/main.ts');
