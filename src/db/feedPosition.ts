import { ENTITY_TYPES } from '../feed/entities.js';
import { changeId, changeKey, entitySlot } from './keys.js';

/**
 * Places in the change stream (issue 15, `changeFeed`). The stream is one total order over every
 * JSON dump change and every removal held: by packet; within a packet the JSON dump changes first,
 * by entity type (the order of ENTITY_TYPES: area, artist, ..., work) then line position, then the
 * packet's removals (deletions and merges from its replication packet) by MBID, then kind. Removals
 * come after the changes because a removal wins over a JSON dump line of the same packet (as in the
 * current state, db/currentQueries.ts): a client applying events in stream order ends with the
 * current state. Every event has a unique key: a change its change id, a removal (packet, MBID, kind).
 */

/** A removal's kind (`removals.kind`). */
export type RemovalKind = 'DELETED' | 'MERGED';

/**
 * A position: "after this event" (`change`: the change id, db/keys.ts; `removal`: its key) or
 * "after every event of `packet`" (`packetEnd`, where a page that reached the newest packet served ends).
 */
export type FeedPosition =
  | { at: 'change'; id: number }
  | { at: 'removal'; packet: number; mbid: string; kind: RemovalKind }
  | { at: 'packetEnd'; packet: number };

// Slots after the eleven entity types' (0..10): removals, then the end of the packet.
const REMOVAL_SLOT = ENTITY_TYPES.length;
const END_SLOT = REMOVAL_SLOT + 1;

type OrderKey = [packet: number, slot: number, position: number, removal: string];

function orderKey(position: FeedPosition): OrderKey {
  if (position.at === 'change') {
    const { packet, entity, position: line } = changeKey(position.id);
    return [packet, entitySlot(entity), line, ''];
  }
  if (position.at === 'removal')
    return [position.packet, REMOVAL_SLOT, 0, `${position.mbid}/${position.kind}`];
  return [position.packet, END_SLOT, 0, ''];
}

/** Negative when `a` comes before `b` in the stream, 0 when equal, positive after. */
export function compareFeedPositions(a: FeedPosition, b: FeedPosition): number {
  const x = orderKey(a);
  const y = orderKey(b);
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return x[3] < y[3] ? -1 : x[3] > y[3] ? 1 : 0;
}

/** The packet of the first event that may follow `position`. */
export function nextPacketOf(position: FeedPosition): number {
  if (position.at === 'packetEnd') return position.packet + 1;
  return position.at === 'change' ? changeKey(position.id).packet : position.packet;
}

/** The largest change id before every change of `packet` (ids pack the packet first, db/keys.ts). */
export function changeIdBeforePacket(packet: number): number {
  return changeId(packet, ENTITY_TYPES[0], 0) - 1;
}

/**
 * The largest change id at or before `position` in the stream: the change's own id; after a
 * removal or the end of a packet, every change of that packet too (a packet's changes come before
 * its removals), so the next change is one of a later packet.
 */
export function changeIdAtOrBefore(position: FeedPosition): number {
  return position.at === 'change' ? position.id : changeIdBeforePacket(position.packet + 1);
}

/**
 * The position as plain text (`c<change id>`, `r<packet>/<mbid>/<kind>`, `p<packet>`), for storing
 * it (webhook delivery state) or wrapping it in a cursor; {@link parseFeedPosition} reads it back.
 */
export function feedPositionText(position: FeedPosition): string {
  if (position.at === 'change') return `c${position.id}`;
  if (position.at === 'removal') return `r${position.packet}/${position.mbid}/${position.kind}`;
  return `p${position.packet}`;
}

const POSITION_TEXT = /^(?:c(\d{1,16})|r(\d{1,9})\/([0-9a-f-]{36})\/(DELETED|MERGED)|p(\d{1,9}))$/;

/**
 * The position `text` ({@link feedPositionText}) names, or undefined when it is not one (a
 * malformed or foreign text, a change id that names no entity type).
 */
export function parseFeedPosition(text: string): FeedPosition | undefined {
  const match = POSITION_TEXT.exec(text);
  if (!match) return undefined;
  const [, change, packet, mbid, kind, end] = match;
  if (change !== undefined) {
    const id = Number(change);
    if (!Number.isSafeInteger(id)) return undefined;
    try {
      changeKey(id);
    } catch {
      return undefined;
    }
    return { at: 'change', id };
  }
  if (packet !== undefined)
    return { at: 'removal', packet: Number(packet), mbid: mbid!, kind: kind as RemovalKind };
  return { at: 'packetEnd', packet: Number(end) };
}

/** A position with the epoch it was made in (db/feedRewrites.ts): what a cursor or a webhook stores. */
export interface EpochPosition {
  position: FeedPosition;
  epoch: number;
}

/**
 * `position` as text with its epoch: {@link feedPositionText}, then `@<epoch>` when the epoch is
 * not 0 (so that texts made before any rewrite, and before epochs existed, read the same).
 */
export function epochPositionText({ position, epoch }: EpochPosition): string {
  const text = feedPositionText(position);
  return epoch === 0 ? text : `${text}@${epoch}`;
}

/** The position and epoch `text` ({@link epochPositionText}) names, or undefined when it is not one. */
export function parseEpochPosition(text: string): EpochPosition | undefined {
  const match = /^(.*?)(?:@(\d{1,9}))?$/.exec(text)!;
  const position = parseFeedPosition(match[1]!);
  return position && { position, epoch: match[2] === undefined ? 0 : Number(match[2]) };
}
