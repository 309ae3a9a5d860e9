import { getArgumentValues } from 'graphql';
import {
  type FeedEvent,
  type FeedPage,
  type FeedQuery,
  isRemovalEvent,
  positionOfEvent,
} from '../../db/changeFeedQueries.js';
import type { EpochPosition } from '../../db/feedPosition.js';
import type { FeedReads } from '../../db/feedReads.js';
import { currentEpoch, HistoryRewrittenError } from '../../db/feedRewrites.js';
import { HistoryPrunedError } from '../../db/feedWindow.js';
import { type Awaitable, thenAwaitable } from '../../db/reads.js';
import { followChangeStream } from '../../ops/changeStream.js';
import { builder } from '../builder.js';
import { CONNECTION_FIELDS, PageInfo, pageSize } from '../connection.js';
import { userError } from '../errors.js';
import { decodeFeedCursor, encodeFeedCursor, type FeedFilters, feedFilters } from './changeFeedFilters.js';
import { selectsChangeLines } from './changeFeedLines.js';
import { EntityChangeRef } from './entityChange.js';
import { EntityTypeEnum } from './entityType.js';
import { EntityRemovalRef } from './removal.js';

/** GraphQL `FeedEvent`: one event of the change stream. */
export const FeedEventUnion = builder.unionType('FeedEvent', {
  description: 'One event of the change stream: a JSON dump change, or a removal (deletion or merge).',
  types: [EntityChangeRef, EntityRemovalRef],
  resolveType: (event) => (isRemovalEvent(event as FeedEvent) ? EntityRemovalRef : EntityChangeRef),
});

export { decodeFeedCursor, encodeFeedCursor, type FeedFilters, feedFilters } from './changeFeedFilters.js';

/**
 * A HistoryPrunedError as the GraphQL error HISTORY_PRUNED (`extensions.historyFrom`), a
 * HistoryRewrittenError as HISTORY_REWRITTEN (`extensions.rewrittenFrom`, and `extensions.cursor`
 * to read again from under `filters`); other errors as they are.
 */
function historyAsGraphQL(error: unknown, filters: FeedFilters): unknown {
  if (error instanceof HistoryRewrittenError) {
    const restart = encodeFeedCursor(filters, error.restart, error.epoch);
    return userError('HISTORY_REWRITTEN', `${error.message}. See "Change stream" in the README.`, {
      rewrittenFrom: error.from,
      cursor: restart,
    });
  }
  if (!(error instanceof HistoryPrunedError)) return error;
  return userError('HISTORY_PRUNED', `${error.message}. See "Change stream" in the README.`, {
    historyFrom: error.historyFrom,
  });
}

/** `read()`, with the history errors it throws or rejects with as GraphQL errors (historyAsGraphQL). */
function historyAsGraphQLOf<T>(filters: FeedFilters, read: () => Awaitable<T>): Awaitable<T> {
  try {
    const value = read();
    return value instanceof Promise
      ? value.catch((error: unknown) => {
          throw historyAsGraphQL(error, filters);
        })
      : value;
  } catch (error) {
    throw historyAsGraphQL(error, filters);
  }
}

/**
 * `reads.readFeedEvents` under `filters`, with HistoryPrunedError as HISTORY_PRUNED and
 * HistoryRewrittenError as HISTORY_REWRITTEN; at once over SQLite.
 */
export function readFeed(reads: FeedReads, filters: FeedFilters, query: FeedQuery): Awaitable<FeedPage> {
  return historyAsGraphQLOf(filters, () => reads.readFeedEvents(query));
}

/**
 * {@link followChangeStream} under `filters`, with its HistoryPrunedError as HISTORY_PRUNED (it
 * reads a rewritten history again itself).
 */
async function* followFeed(
  reads: Parameters<typeof followChangeStream>[0],
  events: Parameters<typeof followChangeStream>[1],
  filters: FeedFilters,
  arrival: Parameters<typeof followChangeStream>[3],
): AsyncGenerator<FeedEvent> {
  try {
    yield* followChangeStream(reads, events, filters, arrival);
  } catch (error) {
    throw historyAsGraphQL(error, filters);
  }
}

interface FeedConnectionShape {
  page: FeedPage;
  filters: FeedFilters;
  after: EpochPosition | undefined;
}

const ChangeFeedEdge = builder.objectRef<{ cursor: string; node: FeedEvent }>('ChangeFeedEdge').implement({
  description: 'One event of the change stream and its cursor.',
  fields: (t) => ({
    cursor: t.exposeString('cursor', {
      description: `${CONNECTION_FIELDS.cursor} It stays valid across syncs.`,
    }),
    node: t.expose('node', { type: FeedEventUnion, description: 'The event: a change or a removal.' }),
  }),
});

const ChangeFeedConnection = builder.objectRef<FeedConnectionShape>('ChangeFeedConnection').implement({
  description:
    'A page of the change stream. Store `pageInfo.endCursor` and pass it as `after` next time (with the same ' +
    'filters) to get exactly what is new: on the last page it points past the newest packet served, so it ' +
    'moves on even when no event matched.',
  fields: (t) => ({
    edges: t.field({
      type: [ChangeFeedEdge],
      description: CONNECTION_FIELDS.edges,
      resolve: (c) => {
        const epoch = currentEpoch(c.page.rewrites);
        return c.page.events.map((node) => ({
          cursor: encodeFeedCursor(c.filters, positionOfEvent(node), epoch),
          node,
        }));
      },
    }),
    nodes: t.field({
      type: [FeedEventUnion],
      description: CONNECTION_FIELDS.nodes,
      resolve: (c) => c.page.events,
    }),
    totalCount: t.int({
      description:
        'Events from `after` on (the page included) up to the newest packet served: what is waiting now.',
      resolve: ({ filters, after }, _a, ctx) =>
        historyAsGraphQLOf(filters, () =>
          ctx.reads.countFeedEvents({ ...filters, after: after?.position, epoch: after?.epoch }),
        ),
    }),
    pageInfo: t.field({
      type: PageInfo,
      description: CONNECTION_FIELDS.pageInfo,
      resolve: ({ page, filters, after }) => {
        const epoch = currentEpoch(page.rewrites);
        return {
          hasNextPage: page.hasMore,
          hasPreviousPage: after !== undefined,
          startCursor: page.events[0]
            ? encodeFeedCursor(filters, positionOfEvent(page.events[0]), epoch)
            : null,
          endCursor: page.next ? encodeFeedCursor(filters, page.next, epoch) : null,
        };
      },
    }),
  }),
});

builder.queryField('changeFeed', (t) =>
  t.field({
    type: ChangeFeedConnection,
    description:
      'The change stream: every JSON dump change and removal (deletion, merge) of every packet held, ordered by ' +
      'packet; within a packet the changes by entity type and line position, then the removals by MBID. Served ' +
      'up to the newest packet that is complete and can no longer change, so a stored endCursor stays valid ' +
      'across syncs: nothing twice, nothing skipped. HISTORY_PRUNED when the cursor (or since) lies before the ' +
      'pruned history (--keep-history); HISTORY_REWRITTEN when an operator stored older packets again after ' +
      'the cursor was made (its extensions.cursor reads again from there). Filters combine with AND and are ' +
      'bound to the cursor.',
    args: {
      after: t.arg.string({ required: false, description: 'endCursor of the previous page (same filters).' }),
      first: t.arg.int({ required: false, description: 'Page size, default 20, at most 500.' }),
      entities: t.arg({ type: [EntityTypeEnum], required: false, description: 'Only these entity types.' }),
      mbids: t.arg.idList({
        required: false,
        description: 'Only these MBIDs (1 to 500; an empty list is refused, as it would match nothing).',
      }),
      since: t.arg({
        type: 'DateTime',
        required: false,
        description: 'Only packets whose TIMESTAMP is at or after this instant.',
      }),
      until: t.arg({
        type: 'DateTime',
        required: false,
        description: 'Only packets whose TIMESTAMP is at or before this instant.',
      }),
    },
    resolve: (_root, args, ctx, info) => {
      const first = pageSize(args.first);
      const filters = feedFilters(args);
      const after = decodeFeedCursor(filters, args.after);
      const lines = selectsChangeLines(info.fieldNodes, info.fragments);
      const query = { ...filters, after: after?.position, epoch: after?.epoch, first, lines };
      return thenAwaitable(readFeed(ctx.reads, filters, query), (page) => ({
        page,
        filters,
        after,
      }));
    },
  }),
);

builder.subscriptionField('entityChanged', (t) =>
  t.field({
    type: FeedEventUnion,
    description:
      'The change stream live: each event of `changeFeed` (same order, same filters) once its packet reaches the ' +
      'stream, from the subscription on. Server-sent events: request /graphql with `Accept: text/event-stream`.',
    args: {
      entities: t.arg({ type: [EntityTypeEnum], required: false, description: 'Only these entity types.' }),
      mbids: t.arg.idList({
        required: false,
        description: 'Only these MBIDs (1 to 500; an empty list is refused, as it would match nothing).',
      }),
    },
    // graphql-jit hands `subscribe` the operation's variables as its arguments (graphql-jit
    // compileSubscriptionOperation); the field's own arguments are read from the AST instead.
    subscribe: (_root, _args, ctx, info) => {
      const field = info.parentType.getFields()[info.fieldName]!;
      const args = getArgumentValues(field, info.fieldNodes[0]!, info.variableValues) as Parameters<
        typeof feedFilters
      >[0];
      // Woken by `packetSynced`: the sync in the process, SQLite's watch or PostgreSQL's LISTEN.
      return followFeed(ctx.reads, ctx.events, feedFilters(args), { waitMs: ctx.arrivalWaitMs });
    },
    resolve: (event: FeedEvent) => event,
  }),
);
