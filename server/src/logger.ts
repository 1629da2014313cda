import pino, { type Logger } from 'pino';

/** Paths whose values never reach a log line (issue: secrets in query strings and headers). */
export const REDACTED_PATHS = [
  'req.query.apiKey',
  'req.query.signature',
  'req.query.openaiApiKey',
  'req.query.proxyPassword',
  'req.query.requestStorageSecretAccessKey',
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
  'options.headers',
];

const SECRET_QUERY = /([?&](?:apiKey|signature|openaiApiKey|proxyPassword|requestStorageSecretAccessKey|headers)=)[^&#\s]*/gi;

/** Removes secret query values from a URL or message before it is logged. */
export function redactUrl(text: string): string {
  return text.replace(SECRET_QUERY, '$1[REDACTED]');
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' }, base: { service: 'rendershot' } }, destination);
}
