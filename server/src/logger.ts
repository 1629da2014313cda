import pino, { type Logger } from 'pino';

/** Paths whose values never reach a log line (issue: secrets in query strings and headers). */
export const REDACTED_PATHS = [
  'req.query.apiKey',
  'req.query.signature',
  'req.query.openaiApiKey',
  'req.query.proxyPassword',
  'req.query.requestStorageSecretAccessKey',
  'req.query.requestStorageAccessKeyId',
  'req.query.proxyUsername',
  // Custom headers may carry tokens; the spec says they are not stored.
  'req.query.headers',
  'req.headers["x-api-key"]',
  'req.headers["x-openai-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'options.apiKey',
  'options.signature',
  'signingSecret',
  '*.signingSecret',
  'options.openaiApiKey',
  'options.proxyPassword',
  'options.requestStorageSecretAccessKey',
  'options.requestStorageAccessKeyId',
  'options.proxyUsername',
  'options.headers',
];

// Query redaction works on decoded names and masks URL credentials (issue #15).
export { redactUrl } from './http/redact-query.js';

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' }, base: { service: 'rendershot' } }, destination);
}
