import { expect } from 'vitest';
import type { GraphqlApp } from './appStores.js';
import { type GqlResult, gql } from './harness.js';

/**
 * The change stream as a GraphQL client reads it (`changeFeed`), for the suites of
 * test/graphql/types/changeFeed*.test.ts: the query with every filter, the nodes it answers, and a
 * client following the stream with a stored cursor.
 */

/** `changeFeed` with every filter as a variable: cursors, nodes and page info. */
export const FEED = `query($after: String, $first: Int, $entities: [EntityType!], $mbids: [ID!], $since: DateTime, $until: DateTime) {
  changeFeed(after: $after, first: $first, entities: $entities, mbids: $mbids, since: $since, until: $until) {
    edges { cursor }
    nodes {
      __typename
      ... on EntityChange { mbid type packet position timestamp }
      ... on EntityRemoval { mbid type packet kind mergedInto timestamp }
    }
    pageInfo { hasNextPage hasPreviousPage endCursor }
  }
}`;

/** One node of {@link FEED}. */
export interface FeedNode {
  __typename: 'EntityChange' | 'EntityRemoval';
  mbid: string;
  packet: number;
  kind?: string;
  timestamp: string | null;
}

/** A node as test/support/growingFeed.ts `expectedEvents` names it: `<packet> change|<kind> <mbid>`. */
export const label = (n: FeedNode) =>
  `${n.packet} ${n.__typename === 'EntityChange' ? 'change' : n.kind} ${n.mbid}`;

/**
 * A client following the stream from `stored` (null: from the start), a page of `first` at a time,
 * until `hasNextPage` is false; every page must answer without errors.
 * @returns every node seen, in order, and the cursor to store (`stored` when no page moved it)
 */
export async function follow(
  app: GraphqlApp,
  stored: string | null,
  variables: Record<string, unknown> = {},
  first = 4,
): Promise<{ seen: FeedNode[]; cursor: string | null }> {
  let cursor = stored;
  const seen: FeedNode[] = [];
  for (;;) {
    const answer: GqlResult = await gql(app, FEED, { ...variables, first, after: cursor });
    expect(answer.errors).toBeUndefined();
    const page = answer.data!.changeFeed;
    seen.push(...page.nodes);
    expect(page.edges).toHaveLength(page.nodes.length);
    cursor = page.pageInfo.endCursor ?? cursor;
    if (!page.pageInfo.hasNextPage) return { seen, cursor };
  }
}
