import { ENTITY_TYPES, type EntityType } from '../feed/entities.js';

// A change's rowid packs (packet, entity, position) so that one dump is one contiguous, ordered
// rowid range: reading a page is a range scan of the table itself and the only secondary index is
// the MBID. The id must stay a safe JS integer (53 bits): 2^28 positions per dump (a full recording
// dump has ~35M lines) and 16 entity slots leave packet numbers below 2^21 (about 200 years hourly).
const POSITION_BITS = 2 ** 28;
const ENTITY_SLOTS = 16;

/** Largest 1-based position a change can have. */
export const MAX_POSITION = POSITION_BITS - 1;

/** Largest packet number a change id can hold. */
export const MAX_PACKET = 2 ** 21 - 1;

/** Slot of an entity type in change ids (its index in ENTITY_TYPES). */
export function entitySlot(entity: EntityType): number {
  return ENTITY_TYPES.indexOf(entity);
}

/**
 * Rowid of change `position` (1-based line number) of the JSON dump (packet, entity).
 * @throws RangeError when position or packet is out of range.
 */
export function changeId(packet: number, entity: EntityType, position: number): number {
  if (position < 0 || position > MAX_POSITION) throw new RangeError(`position ${position} out of range`);
  if (packet < 0 || packet > MAX_PACKET) throw new RangeError(`packet ${packet} out of range`);
  return (packet * ENTITY_SLOTS + entitySlot(entity)) * POSITION_BITS + position;
}

/** The rowid range [first, last] that holds the changes of one JSON dump. */
export function dumpIdRange(packet: number, entity: EntityType): [number, number] {
  return [changeId(packet, entity, 0), changeId(packet, entity, MAX_POSITION)];
}

/**
 * SQL expression of the entity type slot ({@link entitySlot}) packed in change id `column`, for
 * filtering ids by entity type in SQL. `column` is written into the SQL as is: a column name only.
 */
export function idSlotSql(column: string): string {
  return `((${column} / ${POSITION_BITS}) % ${ENTITY_SLOTS})`;
}

/**
 * SQL expression of the packet packed in change id `column` (an SQL expression written into the SQL
 * as is), for comparing a change's packet with others without reading its row.
 */
export function idPacketSql(column: string): string {
  return `(${column} / ${POSITION_BITS * ENTITY_SLOTS})`;
}

/** SQL expression of the position packed in change id `column` (an SQL expression written as is). */
export function idPositionSql(column: string): string {
  return `(${column} % ${POSITION_BITS})`;
}

/**
 * The (packet, entity, position) a change id packs; the inverse of {@link changeId}.
 * @throws RangeError when the id names no entity type slot.
 */
export function changeKey(id: number): { packet: number; entity: EntityType; position: number } {
  const position = id % POSITION_BITS;
  const rest = (id - position) / POSITION_BITS;
  const slot = rest % ENTITY_SLOTS;
  const entity = ENTITY_TYPES[slot];
  if (entity === undefined) throw new RangeError(`change id ${id} has no entity type in slot ${slot}`);
  return { packet: (rest - slot) / ENTITY_SLOTS, entity, position };
}
