import type { MonitorRun } from './monitor-responses.js';

/** The events a monitor's webhook receives. */
export const MONITOR_EVENT_TYPES = ['monitor.changed', 'monitor.failed', 'monitor.paused', 'monitor.resumed'] as const;
export type MonitorEventType = (typeof MONITOR_EVENT_TYPES)[number];

export interface MonitorWebhookEvent {
  type: MonitorEventType;
  timestamp: string;
  data: {
    monitorId: string;
    name: string;
    url: string;
    run?: MonitorRun;
    /** monitor.changed: the new, baseline and diff images. */
    images?: { newUrl: string | null; baselineUrl: string | null; diffUrl: string | null };
    /** monitor.paused / monitor.resumed. */
    reason?: string;
  };
}
