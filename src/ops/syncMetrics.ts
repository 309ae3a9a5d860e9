import type { SyncObserver } from '../sync/observer.js';
import type { Verifier } from '../sync/verifier.js';
import type { Metrics } from './metrics.js';

/**
 * What the sync records in the process's metrics (ops/metrics.ts), apart from the registry that
 * makes them: a `sync` alone serves no /metrics and never loads prom-client (its module took 18 ms
 * to load, and its default collectors watch the event loop and the collector for the whole run);
 * `start`, which serves them, passes its metrics here.
 */

/** Kind of a fetched feed file, from its path (FEED.md, Deployments and URLs). */
export type FetchedKind = 'json-dump' | 'replication-packet' | 'signature' | 'other';

/** The kind of the feed path `path` (relative to the feed root, no query). */
export function fetchedKind(path: string): FetchedKind {
  if (path.endsWith('.asc')) return 'signature';
  if (path.startsWith('json-dumps/')) return 'json-dump';
  if (/^replication-\d+/.test(path)) return 'replication-packet';
  return 'other';
}

/** A sync observer that feeds the sync metrics (quarantined lines, pass durations). */
export function syncMetricsObserver(metrics: Metrics): SyncObserver {
  return {
    dumpStored: (info) => {
      if (info.quarantined > 0) metrics.quarantinedLines.inc(info.quarantined);
    },
    passFinished: (info) => metrics.syncPassDuration.observe({ outcome: info.outcome }, info.seconds),
  };
}

/** Records a downloaded feed file (FeedClient `onFetched`). */
export function recordFetched(metrics: Metrics, info: { path: string; bytes: number }): void {
  const kind = fetchedKind(info.path);
  metrics.filesFetched.inc({ kind });
  metrics.bytesFetched.inc({ kind }, info.bytes);
}

/** Wraps a verifier so that INVALID and MISSING verdicts (warned or thrown) are counted. */
export function instrumentVerifier(verifier: Verifier, metrics: Metrics): Verifier {
  if (!verifier.enabled) return verifier;
  return {
    mode: verifier.mode,
    enabled: verifier.enabled,
    check: async (file, name, signature, signal) => {
      try {
        const verdict = await verifier.check(file, name, signature, signal);
        if (verdict.status === 'INVALID' || verdict.status === 'MISSING')
          metrics.signatureFailures.inc({ status: verdict.status });
        return verdict;
      } catch (error) {
        if ((error as Error).name === 'SignatureError') {
          metrics.signatureFailures.inc({ status: signature === null ? 'MISSING' : 'INVALID' });
        }
        throw error;
      }
    },
  };
}
