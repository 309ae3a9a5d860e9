import { execute, parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteReads } from '../../../src/db/reads.js';
import { schema } from '../../../src/graphql/schema.js';
import { createPacketEvents } from '../../../src/ops/events.js';
import { gql, testApp, testService } from '../../support/harness.js';
import { type SyncedDatabase, syncedDatabase } from '../../support/synced.js';

// Everything a client sees of changes: connection fields, cursors, raw JSON, typed entities and their links.
const RICH_QUERY = `query Rich($after: String) {
  latestPacket { number timestamp dumps { entity status changeCount file { name url size } } }
  packets(first: 3) { totalCount pageInfo { hasNextPage endCursor } nodes { number syncedAt } }
  changes(packet: 186112, entity: RECORDING, first: 1, after: $after) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { mbid type packet position name data } }
    nodes { mbid entity { __typename name aliases { name } ... on Recording { length artistCredit { name artistMbid artist { mbid } } } } }
  }
  service { demo deployment feedRoot version }
}`;

describe('graphql-jit execution (the server default)', () => {
  let synced: SyncedDatabase;
  let app: ReturnType<typeof testApp>;

  beforeAll(async () => {
    synced = await syncedDatabase();
    app = testApp(synced.dbPath, synced.dir);
  });
  afterAll(async () => {
    app.store.close();
    await synced.cleanup();
  });

  it('answers as graphql-js does, on the same schema and database', async () => {
    const first = await gql(app, RICH_QUERY);
    expect(first.errors).toBeUndefined();
    const after = first.data!.changes.pageInfo.endCursor as string;
    for (const variables of [{}, { after }]) {
      const jit = await gql(app, RICH_QUERY, variables);
      const reference = await execute({
        schema,
        document: parse(RICH_QUERY),
        variableValues: variables,
        contextValue: {
          reads: sqliteReads(app.store),
          store: app.store,
          service: testService(),
          origin: 'http://livefeed.test',
          events: createPacketEvents(),
        },
      });
      expect(reference.errors).toBeUndefined();
      expect(jit.data!.changes.edges).toHaveLength(1);
      expect(jit.data!.changes.totalCount).toBe(2);
      // JSON text both ways: RawJson values become the stored JSON.
      expect(jit).toEqual(JSON.parse(JSON.stringify(reference)));
    }
  });

  it('keeps the locations of resolver errors, over \\r\\n and \\n line ends', async () => {
    const query =
      '{\r\n  service { demo }\n  changes(packet: 186101, entity: ARTIST, first: 501) { nodes { mbid } }\n}';
    const result = (await gql(app, query)) as { errors?: { locations?: unknown; extensions?: unknown }[] };
    expect(result.errors).toHaveLength(1);
    expect(result.errors![0]!.locations).toEqual([{ line: 3, column: 3 }]);
    expect(result.errors![0]!.extensions).toEqual({
      code: 'PAGE_SIZE_EXCEEDED',
      max: 500,
      argument: 'first',
    });
  });

  it("keeps a scalar's reason for refusing a variable, with its code and location", async () => {
    const query =
      'query($since: DateTime, $first: Int) {\n  changeFeed(since: $since, first: $first) { totalCount }\n}';
    const dated = (await gql(app, query, { since: '2026-05-11', first: 1 })) as {
      data?: unknown;
      errors?: { message: string; locations?: unknown; extensions?: unknown }[];
    };
    expect(dated.data).toBeUndefined();
    expect(dated.errors).toHaveLength(1);
    expect(dated.errors![0]!.message).toBe(
      'Variable "$since" got invalid value "2026-05-11"; DateTime must be ISO 8601 UTC, e.g. 2026-05-11T21:14:26Z',
    );
    expect(dated.errors![0]!.extensions).toEqual({ code: 'BAD_USER_INPUT' });
    expect(dated.errors![0]!.locations).toEqual([{ line: 1, column: 7 }]);
    // graphql-js' wording for built-in scalars too; a valid value is still accepted.
    const worded = await gql(app, query, { since: '2026-05-11T00:00:00Z', first: 'ten' });
    expect(worded.errors![0]!.message).toBe(
      'Variable "$first" got invalid value "ten"; Int cannot represent non-integer value: "ten"',
    );
    expect(worded.errors![0]!.extensions).toEqual({ code: 'BAD_USER_INPUT' });
    const accepted = await gql(app, query, { since: '2026-05-11T00:00:00Z', first: 1 });
    expect(accepted.errors).toBeUndefined();
    expect(accepted.data!.changeFeed.totalCount).toBeGreaterThanOrEqual(0);
  });
});
