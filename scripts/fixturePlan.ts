import type { EntityType } from '../src/feed/entities.js';

/**
 * Which sample lines the bundled demo feed (fixtures/feed) holds in which packet. Read by
 * `scripts/make-fixtures.ts`; tests read the resulting `fixtures/feed/MANIFEST.json`, not this file.
 *
 * Shape of the feed it describes:
 * - 24 hourly packets, {@link FIRST_PACKET} to {@link FIRST_PACKET} + 23, one hour apart in May 2026;
 * - every entity type with sample lines appears in three or more packets, each packet holds only a
 *   few types (a missing dump is the normal "no changes of that type this hour", FEED.md, Errors);
 * - packet {@link EMPTY_PACKET} has no JSON dump at all;
 * - a few entities appear in two or three packets with a changed `name`/`title`/`disambiguation`, the
 *   last time as the real sample line, so entity history is visible.
 */

/** First packet of the demo feed. */
export const FIRST_PACKET = 186100;
/** Number of hourly packets. */
export const PACKET_COUNT = 24;
/** The packet without any JSON dump. */
export const EMPTY_PACKET = 186111;

/**
 * One line placed in a packet: line `index` (0-based) of `fixtures/samples/<entity>.jsonl`, with
 * `patch` shallow-merged into the parsed object when given (an earlier version of the entity).
 * Unpatched lines are written byte for byte as in the sample file.
 */
export interface PlannedLine {
  index: number;
  patch?: Record<string, unknown>;
}

const line = (index: number, patch?: Record<string, unknown>): PlannedLine =>
  patch ? { index, patch } : { index };

// Earlier versions of a few entities (the sample line itself is the newest version).
const edSheeran1 = line(0, { disambiguation: 'UK singer-songwriter' }); // artist 0: Ed Sheeran
const edSheeran2 = line(0, { disambiguation: 'English singer-songwriter' });
const djFood1 = line(0, { title: 'You Blow My Mind (DJ Food remix)' }); // recording 0
const kissaMeBaby1 = line(1, { disambiguation: '' }); // work 1: Kissa Me Baby
const series1 = line(0, { disambiguation: 'compilation series' }); // series 0: Самый звездатый хит
const series2 = line(0, { disambiguation: 'Russian compilation series' });
const wishYouWereHere1 = line(0, { disambiguation: 'box set' }); // release 0: Wish You Were Here
const wishYouWereHere2 = line(0, { disambiguation: 'Immersion Box Set' });
const birthRecords1 = line(2, { disambiguation: '' }); // label 2: Birth Records

/** Lines of each packet's JSON dumps, per entity type, in file order. Absent type: no dump. */
export const FIXTURE_PLAN: Readonly<Record<number, Partial<Record<EntityType, PlannedLine[]>>>> = {
  186100: { area: [line(0), line(1)], label: [line(0), line(1)] },
  186101: { artist: [edSheeran1], recording: [djFood1] },
  186102: { recording: [line(1), line(2)], work: [kissaMeBaby1, line(0)] },
  186103: { series: [series1] },
  186104: { release: [wishYouWereHere1] },
  186105: { label: [birthRecords1, line(3)] },
  186106: { recording: [line(3)] },
  186107: { area: [line(2)] },
  186108: { artist: [line(1), edSheeran2] },
  186109: { label: [line(4)], work: [line(2)] },
  186110: { series: [series2] },
  186111: {},
  186112: { recording: [line(4), line(5)] },
  186113: { release: [wishYouWereHere2] },
  186114: { area: [line(3)] },
  186115: { work: [line(1), line(3)] },
  186116: { label: [line(2), line(5)] },
  186117: { series: [line(0)] },
  186118: { recording: [line(6)] },
  186119: { artist: [line(0)] },
  186120: { work: [line(4)] },
  186121: { recording: [line(0)] },
  186122: { release: [line(0)] },
  186123: { label: [line(6), line(7)], recording: [line(7)] },
};

/**
 * `TIMESTAMP` of packet `packet` as PostgreSQL timestamptz text: packet {@link FIRST_PACKET} at
 * 2026-05-11 00:14:26.878674+00, each next packet one hour later.
 */
export function packetTimestamp(packet: number): string {
  const at = new Date(Date.UTC(2026, 4, 11, 0, 14, 26) + (packet - FIRST_PACKET) * 3_600_000);
  return `${at.toISOString().slice(0, 19).replace('T', ' ')}.878674+00`;
}
