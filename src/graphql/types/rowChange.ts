import type { FeedReads } from '../../db/feedReads.js';
import { type Awaitable, type Reads, thenAwaitable } from '../../db/reads.js';
import type { RowChangeFilter, RowChangeRow } from '../../db/replicationQueries.js';
import type { RowOp } from '../../feed/replication/types.js';
import { builder } from '../builder.js';
import {
  connectionType,
  decodeCursor,
  encodeCursor,
  type Page,
  pageArgs,
  resolvePage,
} from '../connection.js';
import { userError } from '../errors.js';
import { unlessPruned } from '../prunedHistory.js';
import { checkPacketNumber } from '../validate.js';

/** GraphQL `RowOperation`; internal values are upstream's `i`, `u`, `d` (FEED.md, Replication packet archives). */
export const RowOperationEnum = builder.enumType('RowOperation', {
  description: 'The operation of a row change.',
  values: {
    INSERT: { value: 'i', description: 'A row was inserted (`op = i`).' },
    UPDATE: { value: 'u', description: 'A row was updated (`op = u`).' },
    DELETE: { value: 'd', description: 'A row was deleted (`op = d`).' },
  } as const,
});

const parsed = new WeakMap<RowChangeRow, Record<'keys' | 'oldData' | 'newData', unknown>>();

/** The JSON column `column` of a stored row change as an object (parsed once per row), or null. */
function json(row: RowChangeRow, column: 'keys' | 'oldData' | 'newData'): unknown {
  let values = parsed.get(row);
  if (!values) {
    const parse = (text: string | null) => (text === null ? null : (JSON.parse(text) as unknown));
    values = { keys: parse(row.keys), oldData: parse(row.oldData), newData: parse(row.newData) };
    parsed.set(row, values);
  }
  return values[column];
}

/** GraphQL `RowChange`: one row change of a replication packet. */
export const RowChangeRef = builder.objectRef<RowChangeRow>('RowChange').implement({
  description:
    'One row change of a replication packet, as upstream applies it. v2 packets keep JSON types; in v1 ' +
    'packets every value is text, updates carry no old row and deletes only the key columns.',
  fields: (t) => ({
    packet: t.exposeInt('packet', { description: 'The packet (replication sequence) it belongs to.' }),
    seqid: t.field({
      type: 'SafeInt',
      description: "Upstream's sequence number of the change.",
      resolve: (r) => r.seqid,
    }),
    xid: t.field({
      type: 'SafeInt',
      description: 'PostgreSQL transaction id; rows of one transaction are applied together.',
      resolve: (r) => r.xid,
    }),
    table: t.exposeString('table', { description: '`schema.table`, unquoted, e.g. musicbrainz.artist.' }),
    op: t.expose('op', { type: RowOperationEnum, description: 'Insert, update or delete.' }),
    keys: t.field({
      type: 'JSON',
      nullable: true,
      description:
        'Primary key column → value. Null when the packet names no key (v2 without pending_keys; v1 inserts).',
      resolve: (r) => json(r, 'keys'),
    }),
    oldData: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The row before the change, as a JSON object; null for inserts (and v1 updates).',
      resolve: (r) => json(r, 'oldData'),
    }),
    newData: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The row after the change, as a JSON object; null for deletes.',
      resolve: (r) => json(r, 'newData'),
    }),
    timestamp: t.field({
      type: 'DateTime',
      nullable: true,
      description: "Commit time of the change's transaction (v2 pending_ts); null in v1 packets.",
      resolve: (r) => r.timestamp,
    }),
  }),
});

/** GraphQL `RowChangeConnection`. */
export const RowChangeConnection = connectionType('RowChange', RowChangeRef);

const QUOTED_TABLE = /^"([^"]+)"\."([^"]+)"$/;
const TABLE = /^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$/;

/**
 * `table` as stored (`schema.table`, unquoted); `"schema"."table"` is accepted too.
 * @throws GraphQLError INVALID_TABLE
 */
export function checkTableName(table: string): string {
  const quoted = QUOTED_TABLE.exec(table);
  const name = quoted ? `${quoted[1]}.${quoted[2]}` : table;
  if (!TABLE.test(name)) {
    throw userError(
      'INVALID_TABLE',
      `table must be schema.table in lower case, e.g. musicbrainz.artist, got ${JSON.stringify(table)}`,
    );
  }
  return name;
}

/** Arguments of a row change page. */
export interface RowChangeArgs {
  table?: string | null;
  op?: RowOp | null;
  first?: number | null;
  after?: string | null;
}

/**
 * One page of the row changes of a stored replication packet, in apply order; the cursor is the
 * apply position (`ord`), valid only with the same packet, table and op (else BAD_CURSOR). At once
 * over SQLite, a promise over PostgreSQL.
 * @throws GraphQLError INVALID_TABLE, PAGE_SIZE_EXCEEDED, BAD_USER_INPUT, BAD_CURSOR; HISTORY_PRUNED
 *   for a packet `--keep-history` pruned (prunedHistory.ts)
 */
export function resolveRowChanges(
  reads: FeedReads & Pick<Reads, 'prunedBefore'>,
  packet: number,
  args: RowChangeArgs,
): Awaitable<Page<RowChangeRow>> {
  const filter: RowChangeFilter = {
    table: args.table === null || args.table === undefined ? undefined : checkTableName(args.table),
    op: args.op ?? undefined,
  };
  // The apply position alone would pick a page of any filter: the kind binds it to the packet,
  // table and operation it was made under (the checked table, so a quoted name is the same filter).
  const kind = `row-change/${packet}/${filter.table ?? '*'}/${filter.op ?? '*'}`;
  return unlessPruned(reads, packet, 'row changes', () =>
    resolvePage({
      args,
      decodeAfter: (cursor) => decodeCursor(kind, cursor),
      fetch: (after, limit) => reads.rowChangesPage(packet, filter, after ?? -1, limit),
      totalCount: () => reads.rowChangeCount(packet, filter),
      cursorOf: (r) => encodeCursor(kind, r.ord),
    }),
  );
}

/**
 * `packet` when its replication packet is stored.
 * @throws GraphQLError INVALID_PACKET, or NOT_FOUND naming the replication packet's status
 */
function checkStoredPacket(reads: FeedReads, packet: number): Awaitable<number> {
  checkPacketNumber(packet);
  return thenAwaitable(reads.replicationPacketRow(packet), (row) => {
    if (row?.status === 'SYNCED') return packet;
    const why = row
      ? `its status is ${row.status}${row.error ? `: ${row.error}` : ''}`
      : 'it was never fetched (replication packets off, packet skipped, or not synced yet)';
    throw userError('NOT_FOUND', `the replication packet of packet ${packet} is not stored: ${why}`, {
      packet,
      status: row?.status ?? null,
    });
  });
}

builder.queryField('rowChanges', (t) =>
  t.field({
    type: RowChangeConnection,
    description:
      'The row changes of one replication packet in the order upstream applies them (transactions by ' +
      'highest seqid, rows by seqid), optionally of one table and operation.',
    args: {
      packet: t.arg.int({ required: true, description: 'The packet whose replication packet is read.' }),
      table: t.arg.string({ required: false, description: 'schema.table, e.g. musicbrainz.artist.' }),
      op: t.arg({ type: RowOperationEnum, required: false, description: 'Only changes of this operation.' }),
      ...pageArgs(t.arg),
    },
    resolve: (_root, args, ctx) =>
      thenAwaitable(checkStoredPacket(ctx.reads, args.packet), (packet) =>
        resolveRowChanges(ctx.reads, packet, args),
      ),
  }),
);
