export * from './capture.js';
export * from './custom-headers.js';
export * from './devices.js';
export * from './errors.js';
export * from './limits.js';
export * from './openapi-meta.js';
export * from './router.js';
export * from './usage.js';
