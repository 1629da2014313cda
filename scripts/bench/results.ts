/** What the benchmark measures and reports: its result types. */
import type { PAGE_SET_SETTINGS, PAGE_SET_TARGETS, SETTINGS, TARGETS } from './settings.js';
import type { FullBrowserFloor } from './full-browser-floor.js';
import type { LatencySummary } from './stats.js';

export interface ResourceCheck {
  captures: number;
  /** Resources of realistic.html fetched at least once per capture / all of them. */
  fetchedEveryCapture: number;
  resources: number;
  missing: string[];
}

export interface LazyRun extends LatencySummary {
  /** Per capture: how many of the 40 lazy images the fixture server saw requested. */
  requestedPerCapture: number[];
  /** Per capture: how many of the 40 lazy colours appear in the PNG. */
  paintedPerCapture: number[];
  pngHeights: number[];
  allLoaded: boolean;
}

/** What a capture costs besides time: the file's size and the CPU of the whole process tree. */
export interface OutputCost {
  /** Median PNG size. */
  pngBytesP50: number;
  /** CPU-seconds ÷ captures: the service's Node process and its Chromium, or the raw floor's Chromium. */
  cpuSecondsPerCapture: number;
}

export interface ThroughputRun {
  cpuSecondsPerCapture?: number;
  concurrency: number;
  requests: number;
  ok: number;
  errors: number;
  statuses: Record<string, number>;
  wallMs: number;
  throughputPerS: number;
  p50Ms: number;
  p95Ms: number;
}

/** One contender (the service or the floor) on one page of the page set, captures one at a time. */
export interface SetSequential {
  ok: number;
  errors: number;
  p50Ms: number;
  p95Ms: number;
  /** null: a child of the tree's root exited during the run, and its helpers' CPU left the count (page-set-phases.ts Tally). */
  cpuSecondsPerCapture: number | null;
  /** The whole machine's busy CPU-seconds during this contender's own turns ÷ its captures. */
  machineCpuSecondsPerCapture?: number;
  peakPssKb: number;
  pngBytesP50: number;
}

/** One contender on one page of the page set, 4 clients at once. */
export interface SetConcurrent {
  ok: number;
  errors: number;
  perSecond: number;
  cpuSecondsPerCapture: number | null;
  /** The whole machine's busy CPU-seconds during this contender's rounds ÷ its captures (proc-cpu.ts machineBusySeconds). */
  machineCpuSecondsPerCapture?: number;
  peakPssKb: number;
}

export interface SetBytes {
  service: number;
  floor: number;
  /** service ÷ floor */
  ratio: number;
}

export interface PageSetPage {
  page: string;
  path: string;
  fullPage: boolean;
  /** browserless: the third contender (browserless.ts), when it ran. */
  sequential?: { service: SetSequential; floor: SetSequential; browserless?: SetSequential; p50Ratio: number };
  concurrent?: { service: SetConcurrent; floor: SetConcurrent; browserless?: SetConcurrent; ratio: number };
  bytes?: Record<'png' | 'jpeg' | 'webp', SetBytes>;
  /** Median of each Server-Timing stage of the service's sequential captures, ms. */
  serverTimingP50?: Record<string, number>;
  /** Oddities seen on the way (e.g. the two contenders fetched different resources). */
  notes: string[];
  error?: string;
}

/** The page set (docs/performance.md): the service against a kept page on the binary it runs, page by page (page-set.ts). */
export interface PageSetResults {
  settings: typeof PAGE_SET_SETTINGS;
  targets: typeof PAGE_SET_TARGETS;
  floorBrowser: string;
  /** The third contender (browserless.ts): what ran, or why it did not. */
  browserless?: { version: string } | { error: string };
  pages: PageSetPage[];
  memoryPerOrganization?:
    { oneKb: number; fourKb: number; perOrganizationMiB: number; processesOne: number; processesFour: number } | { error: string };
  checks: Row[];
}

export interface Results {
  meta: {
    date: string;
    node: string;
    chromium?: string;
    cpus: number;
    totalMemMiB: number;
    /** 1-minute load average at the start and the end: other work on the machine skews every figure. */
    loadAvgStart: number;
    loadAvgEnd?: number;
    settings: typeof SETTINGS;
    targets: typeof TARGETS;
    fixtureOrigin?: string;
    notes: string[];
  };
  fixtures?: { realisticTransferBytes: number; files: { path: string; bytes: number }[] };
  rawFloor?: {
    realistic?: LatencySummary & { resources: ResourceCheck; peakPssKb: number } & OutputCost;
    lazy?: LazyRun;
    /** Reference: the same loop on the full browser (full-browser-floor.ts). */
    fullBrowser?: FullBrowserFloor | { error: string };
    error?: string;
  };
  captureWebsite?: (LatencySummary & { resources: ResourceCheck }) | { error: string };
  service?: {
    keySource?: string;
    idlePssKb?: number;
    latency?: LatencySummary & { errors: number; statuses: Record<string, number>; resources: ResourceCheck } & OutputCost;
    throughput: ThroughputRun[];
    peakPssC4Kb?: number;
    peakPssC4Processes?: number;
    pssSamplesC4?: number;
    lazy?: LazyRun & { errors: number; statuses: Record<string, number> };
    memory?: {
      concurrency: number;
      after50Kb?: number;
      after50Processes?: number;
      afterLongKb?: number;
      afterLongProcesses?: number;
      longCaptures: number;
      errors: number;
      totalServedAtFirst?: number;
      totalServedAtLong?: number;
    };
    stop?: { exitedGracefully: boolean; leftoverProcesses: number };
    error?: string;
    firstErrorBody?: string;
  };
  pageSet?: PageSetResults | { error: string };
  rows: Row[];
}

export interface Row {
  metric: string;
  measured: string;
  target: string;
  status: 'PASS' | 'FAIL' | 'n/a' | 'info';
}
