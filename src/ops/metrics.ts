/**
 * livefeed's Prometheus metrics (prom-client), all named `livefeed_*`. One {@link Metrics} per
 * process: the sync reports into it through {@link syncMetricsObserver}, the feed client through
 * `onRetry`/`onFetched`, the verifier through {@link instrumentVerifier}, GraphQL through
 * `graphqlMetricsPlugin` (`src/graphql/plugins/metrics.ts`). Position and lag gauges are read
 * from the database at scrape time, so `serve` reports them even when the sync runs in another process.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Reads } from '../db/reads.js';
import { registerChangeStreamMetrics } from './changeStreamMetrics.js';
import { DEFAULT_FRESHNESS, type Freshness, freshness } from './freshness.js';
import { oncePerScrape } from './scrapeRead.js';
import { registerWebhookMetrics } from './webhookMetrics.js';

/** The metrics of one process. */
export interface Metrics {
  readonly registry: Registry;
  readonly filesFetched: Counter<'kind'>;
  readonly bytesFetched: Counter<'kind'>;
  readonly retries: Counter;
  readonly signatureFailures: Counter<'status'>;
  readonly quarantinedLines: Counter;
  readonly packetsSynced: Counter;
  readonly syncPassDuration: Histogram<'outcome'>;
  readonly graphqlRequests: Counter<'method' | 'status'>;
  readonly graphqlDuration: Histogram<'method'>;
  readonly graphqlOperations: Counter<'operation' | 'result'>;
  /**
   * Reads position, lag and file gauges through `reads` at each scrape (the server's connection or
   * pool, SQLite or PostgreSQL).
   */
  useReads(reads: Reads): void;
  /** Sets `livefeed_info` (constant 1 with labels). */
  setInfo(info: { version: string; deployment: string; demo: boolean }): void;
  /** The text exposition. */
  render(): Promise<string>;
}

/** Options of {@link createMetrics}. */
export interface MetricsOptions {
  /** Also collect prom-client's process metrics (`livefeed_process_*`, `livefeed_nodejs_*`). Default true. */
  processMetrics?: boolean;
  /** Clock for the lag gauges. */
  now?: () => Date;
}

/** Creates a registry with every livefeed metric. */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const now = options.now ?? (() => new Date());
  let reads: Reads | undefined;
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'livefeed_' });

  // One freshness read per scrape, shared by the five position gauges.
  const currentFreshness = oncePerScrape(() =>
    reads ? freshness(reads, DEFAULT_FRESHNESS, now()) : undefined,
  );
  // Unknown values (no reads, nothing synced, no upstream record) are NaN, never a reassuring 0.
  const positionGauge = (name: string, help: string, value: (f: Freshness) => number | null | undefined) =>
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        const f = await currentFreshness();
        this.set((f && value(f)) ?? Number.NaN);
      },
    });
  positionGauge(
    'livefeed_upstream_latest_packet',
    'Latest packet upstream, as last read by a sync',
    (f) => f.upstream?.latest,
  );
  positionGauge(
    'livefeed_local_latest_packet',
    'Newest complete local packet with no gap before it',
    (f) => f.localLatest,
  );
  positionGauge('livefeed_lag_packets', 'Upstream latest minus local latest packet', (f) => f.lagPackets);
  positionGauge(
    'livefeed_lag_seconds',
    'Seconds the first packet not held locally has been due upstream',
    (f) => f.lagSeconds,
  );
  positionGauge(
    'livefeed_local_packet_age_seconds',
    'Seconds since the TIMESTAMP of the newest local packet',
    (f) => f.ageSeconds,
  );
  new Gauge({
    name: 'livefeed_db_quarantined_lines',
    help: 'Lines in quarantine in the database',
    registers,
    async collect() {
      const lines = reads ? await reads.quarantineCount({}) : undefined;
      this.reset();
      if (lines !== undefined) this.set(lines);
    },
  });
  new Gauge({
    name: 'livefeed_unfinished_files',
    help: 'JSON dumps and replication packets not yet stored, by status (pending, failed)',
    labelNames: ['status'],
    registers,
    async collect() {
      const counts = reads ? await reads.unfinishedFiles(0) : undefined;
      this.reset();
      if (!counts) return;
      this.set({ status: 'pending' }, counts.pending);
      this.set({ status: 'failed' }, counts.failed);
    },
  });
  registerWebhookMetrics(registry, () => reads?.webhookStates() ?? []);
  registerChangeStreamMetrics(registry, () => reads?.feedHead());
  const info = new Gauge({
    name: 'livefeed_info',
    help: 'This instance',
    labelNames: ['version', 'deployment', 'demo'],
    registers,
  });

  const metrics: Metrics = {
    registry,
    filesFetched: new Counter({
      name: 'livefeed_files_fetched_total',
      help: 'Feed files downloaded, by kind',
      labelNames: ['kind'],
      registers,
    }),
    bytesFetched: new Counter({
      name: 'livefeed_fetched_bytes_total',
      help: 'Bytes of feed files downloaded, by kind',
      labelNames: ['kind'],
      registers,
    }),
    retries: new Counter({
      name: 'livefeed_feed_retries_total',
      help: 'Feed requests retried after a transient failure',
      registers,
    }),
    signatureFailures: new Counter({
      name: 'livefeed_signature_failures_total',
      help: 'Archives whose signature was INVALID or MISSING (with a signing key)',
      labelNames: ['status'],
      registers,
    }),
    quarantinedLines: new Counter({
      name: 'livefeed_quarantined_lines_total',
      help: 'JSON dump lines put in quarantine by this process',
      registers,
    }),
    packetsSynced: new Counter({
      name: 'livefeed_packets_synced_total',
      help: 'Packets completed by this process',
      registers,
    }),
    syncPassDuration: new Histogram({
      name: 'livefeed_sync_pass_duration_seconds',
      help: 'Duration of sync passes, by outcome (ok, problems, error)',
      labelNames: ['outcome'],
      buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 14_400],
      registers,
    }),
    graphqlRequests: new Counter({
      name: 'livefeed_graphql_requests_total',
      help: 'HTTP requests to /graphql, by method and status',
      labelNames: ['method', 'status'],
      registers,
    }),
    graphqlDuration: new Histogram({
      name: 'livefeed_graphql_request_duration_seconds',
      help: 'Time to the response head of /graphql requests',
      labelNames: ['method'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers,
    }),
    graphqlOperations: new Counter({
      name: 'livefeed_graphql_operations_total',
      help: 'GraphQL operations executed, by type (query, mutation, subscription) and result (ok, error)',
      labelNames: ['operation', 'result'],
      registers,
    }),
    useReads: (storeReads) => {
      reads = storeReads;
    },
    setInfo: (values) => {
      info.reset();
      info.set({ version: values.version, deployment: values.deployment, demo: String(values.demo) }, 1);
    },
    render: async () => spellNaN(await registry.metrics()),
  };
  return metrics;
}

/**
 * prom-client writes NaN as `Nan`; the exposition format spells it `NaN`, and parsers stricter
 * than Prometheus' own (OpenMetrics) refuse the other spelling. Values end their line.
 */
export function spellNaN(text: string): string {
  return text.replace(/ Nan$/gm, ' NaN');
}
