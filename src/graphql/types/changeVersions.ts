import { createPatch, type Operation } from 'rfc6902';
import type { ChangeRow } from '../../db/queries.js';
import { type Awaitable, type Reads, thenAwaitable } from '../../db/reads.js';
import { builder } from '../builder.js';
import { LINE_COST } from '../plugins/cost.js';
import { EntityChangeRef } from './entityChange.js';

/**
 * Fields of `EntityChange` that relate a change to the other versions of its MBID (issue 15):
 * `timestamp`, `previous` and `diff` (RFC 6902, computed with the rfc6902 library).
 */

/** GraphQL `JsonPatchOperation`: one RFC 6902 operation. */
export const JsonPatchOperationRef = builder.objectRef<Operation>('JsonPatchOperation').implement({
  description:
    'One JSON Patch operation (RFC 6902): applied in order to the previous version, the operations give this one.',
  fields: (t) => ({
    op: t.string({
      description: '`add`, `remove`, `replace`, `move`, `copy` or `test`.',
      resolve: (o) => o.op,
    }),
    path: t.exposeString('path', { description: 'JSON Pointer (RFC 6901) of the value changed.' }),
    from: t.string({
      nullable: true,
      description: 'For `move` and `copy`: the JSON Pointer the value comes from.',
      resolve: (o) => ('from' in o ? o.from : null),
    }),
    value: t.field({
      type: 'JSON',
      nullable: true,
      description: 'For `add`, `replace` and `test`: the new value (null for `remove`, `move`, `copy`).',
      resolve: (o) => ('value' in o ? o.value : null),
    }),
  }),
});

const parsedLines = new WeakMap<ChangeRow, unknown>();
const previousOf = new WeakMap<ChangeRow, Awaitable<ChangeRow | null>>();

function parsed(change: ChangeRow): unknown {
  let value = parsedLines.get(change);
  if (value === undefined) {
    value = JSON.parse(change.data.toString('utf8'));
    parsedLines.set(change, value);
  }
  return value;
}

/**
 * The held version before `change`, read once per change object (`previous` and `diff` share it,
 * also the promise of a read still under way on PostgreSQL).
 */
function previousVersion(reads: Reads, change: ChangeRow): Awaitable<ChangeRow | null> {
  let previous = previousOf.get(change);
  if (previous === undefined) {
    previous = thenAwaitable(reads.previousChange(change), (row) => row ?? null);
    previousOf.set(change, previous);
  }
  return previous;
}

/**
 * RFC 6902 operations that turn the version before `change` into `change`; null when no earlier
 * version is held. Computed by rfc6902's createPatch (arrays diffed element-wise, minimal edits).
 */
export function diffOfChange(reads: Reads, change: ChangeRow): Awaitable<Operation[] | null> {
  return thenAwaitable(previousVersion(reads, change), (previous) =>
    previous ? createPatch(parsed(previous), parsed(change)) : null,
  );
}

builder.objectFields(EntityChangeRef, (t) => ({
  timestamp: t.field({
    type: 'DateTime',
    nullable: true,
    description: "The packet's TIMESTAMP (when upstream made its JSON dumps' data); null when unknown.",
    resolve: (c, _a, ctx) =>
      'timestamp' in c ? (c.timestamp as string | null) : ctx.reads.packetTimestamp(c.packet),
  }),
  previous: t.field({
    type: EntityChangeRef,
    nullable: true,
    description:
      'The version of the same MBID held just before this one (an earlier packet, or an earlier line of the same ' +
      'JSON dump); null for the first held (older versions may have been pruned: Entity.historyFrom).',
    resolve: (c, _a, ctx) => previousVersion(ctx.reads, c),
  }),
  diff: t.field({
    type: [JsonPatchOperationRef],
    nullable: true,
    description:
      'RFC 6902 JSON Patch from `previous` to this version (empty when the line did not change); null when ' +
      'there is no previous version.',
    // Its bytes are bounded by the two lines it compares, not by a count of operations.
    extensions: { totalCost: LINE_COST },
    resolve: (c, _a, ctx) => diffOfChange(ctx.reads, c),
  }),
}));
