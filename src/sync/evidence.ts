import type { EntityType } from '../feed/entities.js';
import { safeMessage } from '../feed/errors.js';
import { jsonDumpPath, signaturePath } from '../feed/protocol/urls.js';
import type { SyncContext } from './context.js';
import type { PendingDump } from './state.js';

/**
 * Untracked entity types in the order a probe asks for them: those that change most hours first,
 * so that one request usually finds a dump (upstream publishes recordings and releases nearly
 * every hour; instruments and series seldom).
 */
const PROBE_ORDER: readonly EntityType[] = [
  'recording',
  'release',
  'artist',
  'release-group',
  'work',
  'label',
  'place',
  'event',
  'area',
  'series',
  'instrument',
];

/**
 * Later packets a probe looks at for one waiting packet (the next first, where a dump is likeliest),
 * and the untracked types it asks for in each: those that change nearly every hour. While upstream's
 * dump job is halted a probe finds nothing, at most 3 × 4 small requests a pass.
 */
const PROBE_PACKETS = 3;
const PROBE_TYPES = 4;

/**
 * Looks upstream for the evidence that settles PENDING dumps when the sync tracks only some entity
 * types (`--entities`): a JSON dump of a later packet, of any entity type (FEED.md, Errors: the only
 * sound evidence that "(N, entity) has no dump"; README, How a sync works). The sync fetches only
 * the tracked types, so with `--entities instrument` the next instrument dump, days away, would be
 * the first evidence and every packet would wait for it. For each waiting packet without evidence,
 * asks for the signatures of the untracked types' dumps of the next packets (small files; a 404
 * says nothing, only a signature found counts) and records the packet whose dump exists
 * (`SyncStore.markDumpsSeen`), which `pendingDumps` then counts as a later dump seen. A network
 * failure ends the probing for this pass, logged: the dumps wait, as without it.
 * @param pending the PENDING dumps of the pass, ascending by packet.
 * @param latest the latest packet `replication-info` named.
 * @returns true when a probe recorded evidence (the pending dumps must be read again).
 */
export async function probeLaterDumps(
  ctx: SyncContext,
  pending: readonly PendingDump[],
  latest: number,
  now: () => Date,
): Promise<boolean> {
  const untracked = PROBE_ORDER.filter((entity) => !ctx.policy.entities.includes(entity)).slice(
    0,
    PROBE_TYPES,
  );
  let seen: number | undefined;
  if (untracked.length === 0) return false;
  for (const dump of pending) {
    if (dump.laterDumpSeenAt !== null || dump.packet >= latest) continue;
    // A later packet found in this pass is evidence for every earlier one.
    if (seen !== undefined && seen > dump.packet) continue;
    ctx.signal?.throwIfAborted();
    let found: { packet: number; entity: EntityType } | undefined;
    try {
      found = await firstDumpAfter(
        ctx,
        dump.packet,
        Math.min(latest, dump.packet + PROBE_PACKETS),
        untracked,
      );
    } catch (error) {
      if (ctx.signal?.aborted) throw error;
      ctx.observe.logger.warn(
        { event: 'dump-evidence-failed', packet: dump.packet, err: safeMessage(error) },
        `cannot look for a JSON dump of a packet after ${dump.packet}: ${safeMessage(error)}; its dumps wait`,
      );
      break;
    }
    // Upstream publishes dumps in packet order: none after this one, none after the later ones.
    if (found === undefined) break;
    await ctx.store.markDumpsSeen(found.packet, now().toISOString());
    seen = found.packet;
    ctx.observe.logger.info(
      { event: 'dump-evidence', packet: found.packet, entity: found.entity },
      `packet ${found.packet} has a JSON dump (${found.entity}, not tracked): the 404s of earlier packets can settle`,
    );
  }
  return seen !== undefined;
}

/** The first of packets `after`+1..`to` with a signed dump of one of `entities`, asked in that order. */
async function firstDumpAfter(
  ctx: SyncContext,
  after: number,
  to: number,
  entities: readonly EntityType[],
): Promise<{ packet: number; entity: EntityType } | undefined> {
  for (let packet = after + 1; packet <= to; packet++) {
    for (const entity of entities) {
      const signature = await ctx.feed.client.text(signaturePath(jsonDumpPath(packet, entity)), ctx.signal);
      if (signature !== null) return { packet, entity };
    }
  }
  return undefined;
}
