/**
 * `livefeed status`: the local and upstream position, unfinished files and freshness, on one
 * screen (stdout). Reads the database without writing to it.
 */
import type { Store } from '../db/client.js';
import { type LockHolder, lockHolder } from '../db/lock.js';
import {
  localPosition,
  quarantinedLineCount,
  tableExists,
  type UnfinishedFile,
  unfinishedFiles,
} from '../db/status.js';
import { type WebhookState, webhookStates } from '../db/webhookQueries.js';
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
  local: ReturnType<typeof localPosition>;
  freshness: Freshness;
  files: { pending: number; failed: number; files: UnfinishedFile[] };
  quarantined: number;
  lock: LockHolder | undefined;
  /** Every webhook's delivery state (README, Webhooks). */
  webhooks: WebhookState[];
}

/** Reads the facts from `store`; `listLimit` caps the unfinished files listed. */
export function collectStatus(
  store: Store,
  options: {
    demo: boolean;
    upstream: UpstreamAnswer;
    thresholds: FreshnessThresholds;
    now?: Date;
    listLimit?: number;
  },
): StatusFacts {
  const now = options.now ?? new Date();
  return {
    dbPath: store.path,
    demo: options.demo,
    upstream: options.upstream,
    local: localPosition(store),
    // A fresh answer from upstream beats the position the sync recorded.
    freshness: freshness(
      store,
      options.thresholds,
      now,
      options.upstream.kind === 'asked'
        ? { latest: options.upstream.latest, checkedAt: now.toISOString() }
        : undefined,
    ),
    files: unfinishedFiles(store, options.listLimit ?? 8),
    quarantined: quarantinedLineCount(store),
    lock: tableExists(store, 'sync_lock') ? lockHolder(store) : undefined,
    webhooks: webhookStates(store),
  };
}

function clip(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

function upstreamLine(facts: StatusFacts): string {
  const u = facts.upstream;
  const local = facts.local.latest?.number;
  if (u.kind === 'asked') {
    const behind =
      u.latest !== null && local !== undefined
        ? `, ${Math.max(0, u.latest - local)} packets ahead of local`
        : '';
    return `latest packet ${u.latest ?? '(none)'} (asked ${u.where} now${behind})`;
  }
  const seen = facts.freshness.upstream;
  const recorded = seen ? `; last seen by the sync: ${seen.latest ?? '(none)'} at ${seen.checkedAt}` : '';
  if (u.kind === 'failed') return `could not ask ${u.where}: ${u.reason}${recorded}`;
  return `not asked (${u.reason})${recorded || '; never recorded by a sync'}`;
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
      clip(
        `    ${f.status.padEnd(7)} ${f.packet}  ${f.file.padEnd(27)} attempts ${f.attempts}${error}`,
        width,
      ),
    );
  }
  const more = files.pending + files.failed - files.files.length;
  if (more > 0) lines.push(`    … and ${more} more`);
  lines.push(...webhookLines(facts.webhooks, width));
  if (facts.lock) {
    lines.push(
      `  sync       pid ${facts.lock.pid} on ${facts.lock.host} since ${facts.lock.acquiredAt} (heartbeat ${facts.lock.heartbeatAt})`,
    );
  }
  return lines.join('\n');
}
