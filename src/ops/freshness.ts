import type { Reads } from '../db/reads.js';
import { PACKET_INTERVAL_MS, type UpstreamRecord, type WaitingForDumps } from '../db/status.js';

/** The reads {@link freshness} needs (db/reads.ts: SQLite or PostgreSQL). */
export type FreshnessReads = Pick<Reads, 'latestPacket' | 'upstream' | 'waitingForDumps' | 'packetTime'>;

/**
 * How long after its TIMESTAMP a packet normally becomes complete: its missing JSON dumps settle
 * when the next packet's dumps appear, about 90 minutes after it (the dump job runs at :30 and only
 * a later packet's dump is evidence: FEED.md, Errors).
 */
export const SETTLE_DELAY_MS = 90 * 60_000;

/** Lag thresholds of `/freshness`, in milliseconds. */
export interface FreshnessThresholds {
  warningMs: number;
  criticalMs: number;
}

/** Defaults: WARNING from 2 hours of lag, CRITICAL from 6 hours. */
export const DEFAULT_FRESHNESS: FreshnessThresholds = { warningMs: 2 * 3_600_000, criticalMs: 6 * 3_600_000 };

/** Nagios-style level, as upstream's replication check prints it. */
export type FreshnessLevel = 'OK' | 'WARNING' | 'CRITICAL';

/** How fresh the local copy is. Seconds are whole seconds; null when unknown. */
export interface Freshness {
  level: FreshnessLevel;
  /** Newest complete packet without gaps, null when none. */
  localLatest: number | null;
  /** Its TIMESTAMP (or an hourly estimate from an earlier packet's, see packetTime). */
  localTime: Date | null;
  /** now − localTime. */
  ageSeconds: number | null;
  /**
   * How long the first packet not held locally has been overdue: now − (localTime + 1 h + 90 min),
   * at least 0, since a packet normally completes about 90 minutes after its TIMESTAMP (see
   * {@link SETTLE_DELAY_MS}). A healthy instance stays near 0 (plus the poll interval).
   */
  lagSeconds: number | null;
  /** Packets waiting for JSON dumps, and why when livefeed knows, if any (see waitingForDumps). */
  waiting: WaitingForDumps | undefined;
  /** The upstream position a sync last recorded in this database, if any. */
  upstream: UpstreamRecord | undefined;
  /** upstream.latest − localLatest (at least 0), null when either is unknown. */
  lagPackets: number | null;
  /** One line: `OK: ...`, `WARNING: ...` or `CRITICAL: ...`. */
  message: string;
}

/** Formats seconds like a PostgreSQL interval: `[N days ]HH:MM:SS`. */
export function formatInterval(totalSeconds: number): string {
  const s = Math.max(0, Math.floor(totalSeconds));
  const days = Math.floor(s / 86_400);
  const pad = (n: number) => String(n).padStart(2, '0');
  const clock = `${pad(Math.floor((s % 86_400) / 3600))}:${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}`;
  return days > 0 ? `${days} day${days === 1 ? '' : 's'} ${clock}` : clock;
}

/**
 * Evaluates freshness from the database alone (works in `serve` without a sync in the process, on
 * SQLite or PostgreSQL). Staleness is reported here and in metrics, never through readiness.
 * @param upstream a fresher upstream position than the one the sync recorded (livefeed status);
 *   default the recorded one
 * @throws (rejects with) the store's error
 */
export async function freshness(
  reads: FreshnessReads,
  thresholds: FreshnessThresholds,
  now: Date = new Date(),
  fresher?: UpstreamRecord,
): Promise<Freshness> {
  const upstream = fresher ?? (await reads.upstream());
  const latest = await reads.latestPacket();
  const localLatest = latest?.number ?? null;
  const lagPackets =
    localLatest !== null && upstream?.latest != null ? Math.max(0, upstream.latest - localLatest) : null;
  const waiting = await reads.waitingForDumps();
  const behind =
    (lagPackets === null
      ? ''
      : `; upstream latest ${upstream?.latest}, ${lagPackets} ${lagPackets === 1 ? 'packet' : 'packets'} behind`) +
    describeOverdueWait(waiting, now);
  // Without a packet time there is no age or lag to report, only the level and why.
  const timeless = { localTime: null, ageSeconds: null, lagSeconds: null, upstream, lagPackets, waiting };
  if (localLatest === null) {
    const message = `CRITICAL: no packet synced yet${upstream?.latest != null ? `; upstream latest ${upstream.latest}` : ''}${describeOverdueWait(waiting, now)}`;
    return { level: 'CRITICAL', localLatest, ...timeless, message };
  }
  const localTime = await reads.packetTime(localLatest);
  if (!localTime) {
    const message = `WARNING: newest local packet is ${localLatest} but its time is unknown${behind}`;
    return { level: 'WARNING', localLatest, ...timeless, message };
  }
  const ageMs = now.getTime() - localTime.getTime();
  const lagMs = Math.max(0, ageMs - PACKET_INTERVAL_MS - SETTLE_DELAY_MS);
  const level: FreshnessLevel =
    lagMs >= thresholds.criticalMs ? 'CRITICAL' : lagMs >= thresholds.warningMs ? 'WARNING' : 'OK';
  const ageSeconds = Math.floor(ageMs / 1000);
  const lagSeconds = Math.floor(lagMs / 1000);
  const message =
    `${level}: newest local packet is ${localLatest} of ${localTime.toISOString()} ` +
    `(age = ${formatInterval(ageSeconds)}, lag = ${formatInterval(lagSeconds)})${behind}`;
  return { level, localLatest, localTime, ageSeconds, lagSeconds, upstream, lagPackets, waiting, message };
}

/**
 * `N packets wait for JSON dumps the feed did not have when last asked, since packet P (of T)`: how
 * many and since when, so an operator sees a halted upstream dump job (or a sync that stopped asking:
 * `--to`, a killed one). When livefeed knows another
 * reason (an hour upstream may no longer hold), the line gives it instead.
 */
export function describeWait(waiting: WaitingForDumps): string {
  const since = waiting.oldestTimestamp ? ` of ${waiting.oldestTimestamp}` : '';
  const plural = waiting.packets === 1 ? 'packet waits' : 'packets wait';
  return waiting.reason === null
    ? `${waiting.packets} ${plural} for JSON dumps the feed did not have when last asked, since packet ${waiting.oldest}${since}`
    : `${waiting.packets} ${plural} for JSON dumps, since packet ${waiting.oldest}${since}: ${waiting.reason}`;
}

/**
 * The wait, as a message suffix, once the oldest waiting packet is past the normal delay, or at
 * once when livefeed knows why it waits (a gone hour has no TIMESTAMP to be late by); else ''.
 */
function describeOverdueWait(waiting: WaitingForDumps | undefined, now: Date): string {
  if (waiting?.reason) return `; ${describeWait(waiting)}`;
  if (!waiting?.oldestTimestamp) return '';
  const due = Date.parse(waiting.oldestTimestamp) + PACKET_INTERVAL_MS + SETTLE_DELAY_MS;
  return now.getTime() > due
    ? `; ${describeWait(waiting)} (upstream's JSON dump job may be halted, or no sync has asked since)`
    : '';
}
