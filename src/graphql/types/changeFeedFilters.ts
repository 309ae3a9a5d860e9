import { createHash } from 'node:crypto';
import {
  type EpochPosition,
  epochPositionText,
  type FeedPosition,
  parseEpochPosition,
} from '../../db/feedPosition.js';
import type { EntityType } from '../../feed/entities.js';
import { badCursor } from '../connection.js';
import { userError } from '../errors.js';
import { checkMbids } from './resolution.js';

/** The filters of a change stream read, checked; they scope its cursors. */
export interface FeedFilters {
  entities?: EntityType[];
  mbids?: string[];
  since?: string;
  until?: string;
}

/**
 * The filter arguments of `changeFeed` and `entityChanged` checked: MBIDs lower-cased (at most
 * 500, never an empty list), `entities: []` as no filter (as in `search`), duplicates removed,
 * `since` not after `until`.
 * @throws GraphQLError TOO_MANY_MBIDS, INVALID_MBID, BAD_USER_INPUT
 */
export function feedFilters(args: {
  entities?: readonly EntityType[] | null;
  mbids?: readonly (string | number)[] | null;
  since?: string | null;
  until?: string | null;
}): FeedFilters {
  const filters: FeedFilters = {};
  if (args.entities && args.entities.length > 0) filters.entities = [...new Set(args.entities)].sort();
  // A client following an empty set of MBIDs must not get every event (as webhooks refuse it).
  if (args.mbids?.length === 0)
    throw userError(
      'BAD_USER_INPUT',
      '"mbids" is an empty list, which would match no event; leave it out to follow every MBID',
    );
  if (args.mbids) filters.mbids = [...new Set(checkMbids(args.mbids))].sort();
  if (args.since) filters.since = args.since;
  if (args.until) filters.until = args.until;
  if (filters.since && filters.until && Date.parse(filters.since) > Date.parse(filters.until)) {
    throw userError('BAD_USER_INPUT', `"since" ${filters.since} is after "until" ${filters.until}`);
  }
  return filters;
}

// The kind of each filter set met, per request: a page of 100 edges makes 100 cursors of one kind,
// and the digest is most of a cursor's cost.
const kinds = new WeakMap<FeedFilters, string>();

/** The cursor kind of a filter set: a cursor is valid only with the filters it was made under. */
function cursorKind(filters: FeedFilters): string {
  let kind = kinds.get(filters);
  if (kind === undefined) {
    const digest = createHash('sha256').update(JSON.stringify(filters)).digest('base64url').slice(0, 16);
    kind = `changeFeed/${digest}`;
    kinds.set(filters, kind);
  }
  return kind;
}

/** Opaque cursor of a stream position under `filters`, made in `epoch` (db/feedRewrites.ts; default 0). */
export function encodeFeedCursor(filters: FeedFilters, position: FeedPosition, epoch = 0): string {
  return Buffer.from(`${cursorKind(filters)}:${epochPositionText({ position, epoch })}`).toString(
    'base64url',
  );
}

/**
 * The position and epoch of a cursor made by {@link encodeFeedCursor} under the same filters;
 * undefined when absent or empty.
 * @throws GraphQLError BAD_CURSOR for a cursor of another connection or other filters, or garbage
 */
export function decodeFeedCursor(
  filters: FeedFilters,
  cursor: string | null | undefined,
): EpochPosition | undefined {
  if (cursor === null || cursor === undefined || cursor === '') return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const prefix = `${cursorKind(filters)}:`;
  const decoded = text.startsWith(prefix) ? parseEpochPosition(text.slice(prefix.length)) : undefined;
  if (!decoded) throw badCursor(cursor);
  return decoded;
}
