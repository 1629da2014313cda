export * from './capture.js';
export * from './capture-formats.js';
export * from './capture-result.js';
export * from './signed-link-fields.js';
export { PDF_PAGE_LAYOUTS } from './capture-output-fields.js';
export { THEMES } from './capture-viewport-fields.js';
export { WAIT_UNTIL } from './capture-wait-fields.js';
export { BLOCKABLE_RESOURCES } from './content-filter-fields.js';
export { MEDIA_TYPES } from './page-control-fields.js';
export * from './custom-headers.js';
export * from './devices.js';
export * from './errors.js';
export * from './jobs.js';
export * from './limits.js';
export * from './openapi-meta.js';
export * from './router.js';
export * from './route-policy.js';
export * from './usage.js';
export * from './capture-budget.js';
export * from './pdf-options.js';
export * from './page-actions.js';
export * from './error-catalog.js';
export * from './openapi-examples.js';
export * from './openapi-security.js';
export { QUERY_BOOLEAN_WORDS, fromDecimalText } from './params.js';
export * from './page-insight.js';
export * from './video-options.js';
export * from './bulk.js';
export * from './webhook-events.js';
export * from './request-log.js';
export * from './webhooks.js';
export {
  MONITOR_CAPTURE_FIELDS,
  MONITOR_LIMITS,
  CreateMonitorBodySchema,
  UpdateMonitorBodySchema,
  MonitorRunsQuerySchema,
  type MonitorCaptureField,
  type CreateMonitorBody,
  type CreateMonitorInput,
  type UpdateMonitorBody,
} from './monitors.js';
export {
  MONITOR_RUN_STATUSES,
  ChangedRegionSchema,
  CaptureDiffSchema,
  MonitorRunSchema,
  MonitorSchema,
  MonitorResponseSchema,
  MonitorListSchema,
  MonitorRunListSchema,
  MonitorRunResponseSchema,
  type MonitorRunStatus,
  type ChangedRegion,
  type CaptureDiff,
  type MonitorRun,
  type Monitor,
} from './monitor-responses.js';
export * from './diff.js';
export * from './monitor-webhook-events.js';
export * from './monitor-routes.js';
