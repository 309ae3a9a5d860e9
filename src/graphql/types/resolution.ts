import type { CurrentRow } from '../../db/currentQueries.js';
import { type Awaitable, type SnapshotReads, thenAwaitable } from '../../db/reads.js';
import type { EntityType } from '../../feed/entities.js';
import { isLowerCaseMbid } from '../../feed/mbid.js';
import { builder } from '../builder.js';
import { userError } from '../errors.js';
import { checkMbid } from '../validate.js';
import { EntityRef, type EntityShape, entityOfCurrent } from './entity.js';

/** Most MBIDs one `entities` or `resolve` query takes. */
export const MAX_MBIDS = 500;
/** Most merge hops `resolve` follows; a longer chain is answered as a cycle would be. */
const MAX_HOPS = 64;

/**
 * `mbids` checked and lower-cased.
 * @throws GraphQLError TOO_MANY_MBIDS (over {@link MAX_MBIDS}), INVALID_MBID (naming the first bad one and its index)
 */
export function checkMbids(mbids: readonly (string | number)[]): readonly string[] {
  if (mbids.length > MAX_MBIDS) {
    throw userError('TOO_MANY_MBIDS', `${mbids.length} MBIDs given; one query takes at most ${MAX_MBIDS}`, {
      maxMbids: MAX_MBIDS,
    });
  }
  // Nearly every list is of MBIDs in lower case already: taken as they are after one test each.
  if (mbids.every(isLowerCaseMbid)) return mbids as readonly string[];
  return mbids.map((mbid, index) => {
    try {
      return checkMbid(String(mbid));
    } catch (error) {
      (error as Error).message = `mbids[${index}]: ${(error as Error).message}`;
      throw error;
    }
  });
}

/** CURRENT | MERGED | DELETED | UNKNOWN, see {@link ResolutionStatusEnum}. */
export type ResolutionStatus = 'CURRENT' | 'MERGED' | 'DELETED' | 'UNKNOWN';

/** What an MBID stands for now. */
export interface MbidResolution {
  mbid: string;
  status: ResolutionStatus;
  /** Itself when CURRENT, the end of the merge chain when MERGED; null when DELETED or UNKNOWN. */
  target: EntityShape | null;
  /** The MBIDs each merge led to, in order (empty unless a merge was followed). */
  path: string[];
}

/** One merged MBID's walk along its merge chain, waiting for the row of `next`. */
interface Walk {
  /** Where its resolution goes in the answer. */
  index: number;
  mbid: string;
  path: string[];
  seen: Set<string>;
  /** The entity type of the last merged row (a merge target no JSON dump held is of that type). */
  type: EntityType;
  /** The MBID whose row is read next; undefined once the walk is done. */
  next?: string;
}

/** The resolution of `mbid` whose chain (`path`, empty without a merge) ends at `row`, not a merge. */
function ended(mbid: string, row: CurrentRow | undefined, path: string[], type: EntityType): MbidResolution {
  if (row?.status === 'DELETED') return { mbid, status: 'DELETED', target: null, path };
  // A held entity, or a merge target no JSON dump held here.
  const target = row ? entityOfCurrent(row) : { mbid: path.at(-1)!, type, latest: null };
  return { mbid, status: path.length === 0 ? 'CURRENT' : 'MERGED', target, path };
}

/** Takes `row`, the row of the walk's newest MBID: ends the walk into `answer` or names the next hop. */
function step(walk: Walk, row: CurrentRow | undefined, answer: MbidResolution[]): void {
  walk.next = undefined;
  const { mbid, path } = walk;
  if (row?.status !== 'MERGED') {
    answer[walk.index] = ended(mbid, row, path, walk.type);
    return;
  }
  const next = row.mergedInto;
  if (next === null || walk.seen.has(next) || path.length >= MAX_HOPS) {
    if (next !== null) path.push(next);
    answer[walk.index] = { mbid, status: 'MERGED', target: null, path };
    return;
  }
  path.push(next);
  walk.seen.add(next);
  walk.type = row.entity;
  walk.next = next;
}

/** Reads the next hop of every walk not done, in one statement per hop level, until all are done. */
function follow(reads: SnapshotReads, walks: Walk[], answer: MbidResolution[]): Awaitable<MbidResolution[]> {
  const hopping = walks.filter((walk) => walk.next !== undefined);
  if (hopping.length === 0) return answer;
  const next = hopping.map((walk) => walk.next!);
  return thenAwaitable(reads.currentOfMbids(next, { data: false }), (rows) => {
    for (const [i, walk] of hopping.entries()) step(walk, rows[i], answer);
    return follow(reads, hopping, answer);
  });
}

/**
 * What each of `mbids` (lower case) stands for now, in order: its merges followed through the
 * current state to the end of the chain, every MBID's hop of one level read in one statement
 * (on SQLite at once, without a promise). A chain ending in a deletion is DELETED. A merge whose
 * target row no stored packet shows ends as MERGED with a null target; so does a cycle (an MBID
 * met twice) or a chain over {@link MAX_HOPS} hops, which the feed never produces: the path then
 * shows where it turned. Run it in `Reads.snapshot`, so every hop sees the same state. Only a
 * merged MBID gets a walk: the others (nearly all) are answered from their row at once.
 */
export function resolveMbids(reads: SnapshotReads, mbids: readonly string[]): Awaitable<MbidResolution[]> {
  return thenAwaitable(reads.currentOfMbids(mbids, { data: false }), (rows) => {
    const answer = new Array<MbidResolution>(mbids.length);
    const walks: Walk[] = [];
    for (let index = 0; index < mbids.length; index++) {
      const mbid = mbids[index]!;
      const row = rows[index];
      if (row === undefined) answer[index] = { mbid, status: 'UNKNOWN', target: null, path: [] };
      else if (row.status !== 'MERGED') answer[index] = ended(mbid, row, [], row.entity);
      else {
        const walk: Walk = { index, mbid, path: [], seen: new Set([mbid]), type: row.entity };
        step(walk, row, answer);
        walks.push(walk);
      }
    }
    return follow(reads, walks, answer);
  });
}

/** GraphQL `ResolutionStatus`. */
export const ResolutionStatusEnum = builder.enumType('ResolutionStatus', {
  description: 'What an MBID asked for in `resolve` is now.',
  values: {
    CURRENT: { description: 'The MBID is an entity of the current state; `target` is itself.' },
    MERGED: {
      description:
        'The MBID was merged away; `target` is the end of the merge chain (null when no stored replication ' +
        'packet shows the merge target).',
    },
    DELETED: { description: 'The MBID, or the end of its merge chain, was deleted; `target` is null.' },
    UNKNOWN: {
      description: 'This instance holds nothing of the MBID (not of a tracked entity type, or never seen).',
    },
  } as const,
});

/** GraphQL `MbidResolution`. */
export const MbidResolutionRef = builder.objectRef<MbidResolution>('MbidResolution').implement({
  description: 'What a stored MBID stands for now: itself, the entity it was merged into, or nothing.',
  fields: (t) => ({
    mbid: t.exposeID('mbid', { description: 'The MBID asked for, in lower case.' }),
    status: t.expose('status', { type: ResolutionStatusEnum, description: 'What the MBID is now.' }),
    target: t.expose('target', {
      type: EntityRef,
      nullable: true,
      description:
        'Itself when CURRENT, the end of the merge chain when MERGED, null when DELETED or UNKNOWN.',
    }),
    path: t.exposeIDList('path', {
      description:
        'Each merge hop in order: the MBID the asked one was merged into, then the one that was merged into, ' +
        'and so on to the end of the chain; empty when no merge was followed.',
      // For the cost limit (graphql/plugins/cost.ts): the walk stops after MAX_HOPS hops.
      extensions: { maxItems: MAX_HOPS + 1 },
    }),
  }),
});

builder.queryFields((t) => ({
  entities: t.field({
    type: [EntityRef],
    nullable: { list: false, items: true },
    description: `Up to ${MAX_MBIDS} entities by MBID from the current state, in the order asked, null where unknown.`,
    args: {
      mbids: t.arg.idList({
        required: true,
        description: `MBIDs (UUIDs, either case), at most ${MAX_MBIDS}.`,
      }),
    },
    resolve: (_r, args, ctx) =>
      thenAwaitable(ctx.reads.currentOfMbids(checkMbids(args.mbids)), (rows) =>
        rows.map((row) => (row ? entityOfCurrent(row) : null)),
      ),
  }),
  resolve: t.field({
    type: [MbidResolutionRef],
    description:
      `Up to ${MAX_MBIDS} MBIDs, in the order asked: what each stands for now, following merges to the end of ` +
      'the chain (apps that store MBIDs use it to follow merges and drop deleted entities).',
    args: {
      mbids: t.arg.idList({
        required: true,
        description: `MBIDs (UUIDs, either case), at most ${MAX_MBIDS}.`,
      }),
    },
    resolve: (_r, args, ctx) => {
      const mbids = checkMbids(args.mbids);
      // One snapshot for the list and every merge hop: a packet committed meanwhile is seen whole or not at all.
      return ctx.reads.snapshot((reads) => resolveMbids(reads, mbids));
    },
  }),
}));
