#!/usr/bin/env node
// The server runs its TypeScript sources through tsx: no build step between a clone and `serve`.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
