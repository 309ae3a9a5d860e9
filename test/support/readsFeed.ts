import { join } from 'node:path';
import { openStore, type Store } from '../../src/db/client.js';
import { postgresSyncStore } from '../../src/sync/postgres/syncStore.js';
import { writeJsonDump } from './archives.js';
import {
  artistLine,
  type CurrentStateStep,
  currentStateArchives,
  MBID,
  storeStep,
  storeStepOn,
} from './currentStateFeed.js';
import type { StoreUnderTest } from './readStores.js';

/**
 * The story of the reads tests (test/db/reads.test.ts): the current state story of
 * currentStateFeed.ts and two more JSON dumps: artist dump 13, stored after packet 13 deleted
 * `deletedTarget`, holds it again (a removal and a line of the same packet: the removal wins);
 * label dump 15, with its own TIMESTAMP, holds 120 lines with characters of two, three and four
 * UTF-8 bytes (byte lengths differ from character counts). And, as rows of `removals` on both
 * stores (no packet fixture removes one MBID twice in one packet): filler 0 deleted in packet 15,
 * then deleted and merged into `chainEnd` in packet 16 (the merge wins: it names the target).
 */

/** Filler 0 of artist dump 10: deleted in packet 15, then deleted and merged in packet 16. */
export const FILLER_0 = 'f0000000-0000-4000-8000-000000000000';
const TWO_REMOVALS = [
  [FILLER_0, 'artist', 15, 'DELETED', null],
  [FILLER_0, 'artist', 16, 'DELETED', null],
  [FILLER_0, 'artist', 16, 'MERGED', MBID.chainEnd],
];
/** The line of `deletedTarget` in artist dump 13. */
export const SAME_PACKET_LINE = artistLine(MBID.deletedTarget, 'same packet — ✓');
/** The MBID of label `n` of label dump 15 (1-based). */
export const label = (n: number) => `b0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
/** The lines of label dump 15. */
export const LABEL_LINES = Array.from({ length: 120 }, (_, i) =>
  JSON.stringify({ id: label(i + 1), name: `Étiquette ${i + 1} — 𝄞`, 'label-code': i }),
);
/** The TIMESTAMP of label dump 15. */
export const LABEL_TIMESTAMP = '2026-05-12 08:30:00.250001+00';

async function extraArchives(dir: string): Promise<CurrentStateStep[]> {
  const same = await writeJsonDump(join(dir, 'dump-13'), {
    packet: 13,
    entity: 'artist',
    lines: [SAME_PACKET_LINE],
  });
  const labels = await writeJsonDump(join(dir, 'dump-15'), {
    packet: 15,
    entity: 'label',
    lines: LABEL_LINES,
    timestamp: LABEL_TIMESTAMP,
  });
  return [
    { kind: 'dump', packet: 13, entity: 'artist', path: same.path },
    { kind: 'dump', packet: 15, entity: 'label', path: labels.path },
  ];
}

/**
 * Fills `target` from the story's real archives and returns the SQLite store that holds them:
 * `target` itself, or for PostgreSQL a SQLite twin filled the same way. Each store stores every
 * archive through its own sync writer (`SyncStore`), in the story's order; the two removals of
 * filler 0 that no packet fixture makes are inserted as rows on both.
 */
export async function fillReadsStory(target: StoreUnderTest): Promise<Store> {
  const steps = [...(await currentStateArchives(target.dir)), ...(await extraArchives(target.dir))];
  const sqlite = target.sqlite ?? openStore(join(target.dir, 'twin.sqlite'));
  for (const step of steps) await storeStep(sqlite, step);
  const insertRemoval = sqlite.sqlite.prepare(
    'INSERT INTO removals (mbid, entity, packet, kind, merged_into) VALUES (?, ?, ?, ?, ?)',
  );
  for (const row of TWO_REMOVALS) insertRemoval.run(...row);
  const pg = target.postgres;
  if (!pg) return sqlite;
  const writer = postgresSyncStore(pg);
  for (const step of steps) await storeStepOn(writer, step);
  for (const row of TWO_REMOVALS) {
    await pg.pool.query(
      'INSERT INTO removals (mbid, entity, packet, kind, merged_into) VALUES ($1, $2, $3, $4, $5)',
      row,
    );
  }
  return sqlite;
}
