/**
 * `livefeed status`: the local and upstream position, unfinished files and freshness, on one
 * screen (stdout). Reads the database without writing to it.
 */
import type { FeedHead } from '../db/feedWindow.js';
import type { LockHolder } from '../db/lock.js';
import type { Reads } from '../db/reads.js';
import type { LocalPosition, UnfinishedFile } from '../db/status.js';
import type { WebhookState } from '../db/webhookQueries.js';
import {
  describeWait,
  type Freshness,
  type FreshnessThresholds,
  formatInterval,
  freshness,
} from './freshness.js';
import { webhookLines } from './webhookStatus.js';

/** The upstream position as `livefeed status` found it. */
export type UpstreamAnswer =
  | { kind: 'asked'; latest: number | null; where: string }
  | { kind: 'failed'; reason: string; where: string }
  | { kind: 'not-asked'; reason: string };

/** Everything `livefeed status` prints. */
export interface StatusFacts {
  dbPath: string;
  demo: boolean;
  upstream: UpstreamAnswer;
  local: LocalPosition;
  freshness: Freshness;
  files: { pending: number; failed: number; files: UnfinishedFile[] };
  quarantined: number;
  lock: LockHolder | undefined;
  /** Every webhook's delivery state (README, Webhooks). */
  webhooks: WebhookState[];
  /** The change stream's head (db/feedWindow.ts). */
  stream: FeedHead;
}

/**
 * Reads the facts through `reads` (SQLite or PostgreSQL); `display` names the database (a path, or
 * a URL without its password); `listLimit` caps the unfinished files listed.
 * @throws (rejects with) the store's error
 */
export async function collectStatus(
  reads: Reads,
  options: {
    display: string;
    demo: boolean;
    upstream: UpstreamAnswer;
    thresholds: FreshnessThresholds;
    now?: Date;
    listLimit?: number;
  },
): Promise<StatusFacts> {
  const now = options.now ?? new Date();
  return {
    dbPath: options.display,
    demo: options.demo,
    upstream: options.upstream,
    local: { latest: await reads.latestPacket(), ...(await reads.packetPosition()) },
    // A fresh answer from upstream beats the position the sync recorded.
    freshness: await freshness(
      reads,
      options.thresholds,
      now,
      options.upstream.kind === 'asked'
        ? { latest: options.upstream.latest, checkedAt: now.toISOString() }
        : undefined,
    ),
    files: await reads.unfinishedFiles(options.listLimit ?? 8),
    quarantined: await reads.quarantineCount({}),
    lock: await reads.lockHolder(),
    webhooks: await reads.webhookStates(),
    stream: await reads.feedHead(),
  };
}

function clip(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

function upstreamLine(facts: StatusFacts): string {
  const u = facts.upstream;
  const local = facts.local.latest?.number;
  if (u.kind === 'asked') {
    const ahead = u.latest !== null && local !== undefined ? Math.max(0, u.latest - local) : undefined;
    const behind =
      ahead === undefined ? '' : `, ${ahead} ${ahead === 1 ? 'packet' : 'packets'} ahead of local`;
    return `latest packet ${u.latest ?? '(none)'} (asked ${u.where} now${behind})`;
  }
  const seen = facts.freshness.upstream;
  const recorded = seen ? `; last seen by the sync: ${seen.latest ?? '(none)'} at ${seen.checkedAt}` : '';
  if (u.kind === 'failed') return `could not ask ${u.where}: ${u.reason}${recorded}`;
  return `not asked (${u.reason})${recorded || '; never recorded by a sync'}`;
}

function streamLines({ frontier, epoch, lastRewritten }: FeedHead, width: number): string[] {
  const served = frontier === undefined ? 'nothing served yet' : `served up to packet ${frontier}`;
  if (epoch === 0) return [`  stream     ${served}`];
  return [
    clip(
      `  stream     ${served}, epoch ${epoch}; newest packet stored behind readers: ${lastRewritten}`,
      width,
    ),
    // Not clipped: the README section is what the line is for.
    '             cursors of an earlier epoch at or after such a packet get HISTORY_REWRITTEN (README, "Older packets stored later")',
  ];
}

/**
 * How far the sync got with an unfinished file: not published upstream yet (a 404; missing, for
 * a replication packet past its hour), its failed attempts, or not asked yet.
 */
function progressOf(f: UnfinishedFile): string {
  // A replication packet counts its 404s as attempts too: while it is not there, say so.
  if (f.asked && f.status !== 'FAILED')
    return f.status === 'MISSING' ? 'missing upstream' : 'not published upstream yet';
  if (f.attempts > 0) return `attempts ${f.attempts}`;
  return f.status === 'PENDING' ? 'not asked yet' : 'not published upstream';
}

/** The status screen as text lines (no trailing newline); `width` caps long lines. */
export function renderStatus(facts: StatusFacts, width = 100): string {
  const { local, files } = facts;
  const lines = [`livefeed status: ${facts.dbPath}${facts.demo ? ' (demo: the bundled sample feed)' : ''}`];
  lines.push(`  upstream   ${upstreamLine(facts)}`);
  if (local.latest) {
    const age =
      facts.freshness.ageSeconds === null ? '' : `, age ${formatInterval(facts.freshness.ageSeconds)}`;
    lines.push(
      `  local      latest complete packet ${local.latest.number} (TIMESTAMP ${local.latest.timestamp ?? 'unknown'}${age})`,
    );
  } else lines.push('  local      no complete packet yet');
  lines.push(
    `             ${local.packets} packets known, ${local.completed} complete; highest ${local.highest ?? '-'}; first incomplete ${local.firstIncomplete ?? '-'}`,
  );
  lines.push(`  freshness  ${facts.freshness.message}`);
  // The sample feed is a fixed snapshot: without this line its age and its waiting head look like an outage.
  if (facts.demo) {
    lines.push(
      "  demo       the sample feed is a fixed snapshot: its age only grows, and its newest packet waits for the next hour's JSON dumps, which never come (README, Quick start)",
    );
  }
  const waiting = facts.freshness.waiting;
  if (waiting) {
    const since = waiting.since ? `; first asked ${waiting.since}` : '';
    lines.push(`  waiting    ${describeWait(waiting)}${since}`);
  }
  lines.push(
    `  files      ${files.pending} pending, ${files.failed} failed; ${facts.quarantined} lines in quarantine`,
  );
  for (const f of files.files) {
    const error = f.error ? `  ${f.error.replace(/\s+/g, ' ')}` : '';
    lines.push(
      clip(`    ${f.status.padEnd(7)} ${f.packet}  ${f.file.padEnd(27)} ${progressOf(f)}${error}`, width),
    );
  }
  const more = files.pending + files.failed - files.files.length;
  if (more > 0) lines.push(`    … and ${more} more`);
  lines.push(...streamLines(facts.stream, width));
  lines.push(...webhookLines(facts.webhooks, width));
  if (facts.lock) {
    lines.push(
      `  sync       pid ${facts.lock.pid} on ${facts.lock.host} since ${facts.lock.acquiredAt} (heartbeat ${facts.lock.heartbeatAt})`,
    );
  }
  return lines.join('\n');
}
