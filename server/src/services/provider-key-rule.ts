import type { CaptureOptions } from '@daguerre/contract';
import { validationError } from '../errors.js';

/**
 * The analysis needs a prompt and a provider key together, whichever way the key travels (header
 * X-OpenAI-Api-Key or parameter openaiApiKey): one rule, one message per side.
 */
export function checkProviderKeyRule(options: CaptureOptions, providerKeyHeader: string | undefined): string | undefined {
  const providerKey = providerKeyHeader ?? options.openaiApiKey;
  if (options.openaiPrompt !== undefined && !providerKey) {
    throw validationError([
      { field: 'openaiApiKey', message: 'openaiApiKey (or header X-OpenAI-Api-Key) is required when openaiPrompt is given', value: null },
    ]);
  }
  if (providerKey && options.openaiPrompt === undefined) {
    throw validationError([
      {
        field: 'openaiPrompt',
        message: 'openaiPrompt is required when a provider key is given (header X-OpenAI-Api-Key or openaiApiKey)',
        value: null,
      },
    ]);
  }
  return providerKey;
}
