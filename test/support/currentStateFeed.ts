import { join } from 'node:path';
import type { Store } from '../../src/db/client.js';
import type { EntityType } from '../../src/feed/entities.js';
import { ingestJsonDump } from '../../src/sync/ingest.js';
import { storeReplicationPacket } from '../../src/sync/replication.js';
import type { SyncStore } from '../../src/sync/syncStore.js';
import { writeJsonDump } from './archives.js';
import { artistRow, type FixtureRow, gidRedirectRow, writeReplicationPacket } from './replicationArchives.js';

/** Artist MBIDs of the {@link buildCurrentStateHistory} story, by role. */
export const MBID = {
  /** In JSON dumps 10 and 11: replaced by the newer line. */
  replaced: 'a0000000-0000-4000-8000-000000000001',
  /** Dump 10, deleted in packet 12, in dump 14 again: CURRENT. */
  reappeared: 'a0000000-0000-4000-8000-000000000002',
  /** Dump 10, merged into `middle` in packet 12. */
  chainStart: 'a0000000-0000-4000-8000-000000000003',
  /** Dump 10, merged into `chainEnd` in packet 13. */
  middle: 'a0000000-0000-4000-8000-000000000004',
  /** Dump 10, never removed. */
  chainEnd: 'a0000000-0000-4000-8000-000000000005',
  /** Dump 10, merged into `deletedTarget` in packet 12. */
  mergedThenDeleted: 'a0000000-0000-4000-8000-000000000006',
  /** Dump 10, deleted in packet 13. */
  deletedTarget: 'a0000000-0000-4000-8000-000000000007',
  /** Dump 10, deleted in packet 12; dump 11, stored after packet 12, still holds it. */
  deletedDespiteOlderDump: 'a0000000-0000-4000-8000-000000000008',
  /** Dump 10, merged in packet 13 into `notInDumps`, which no JSON dump holds. */
  mergedIntoUnheld: 'a0000000-0000-4000-8000-000000000009',
  notInDumps: 'a0000000-0000-4000-8000-000000000011',
  unknown: 'a0000000-0000-4000-8000-0000000000ff',
} as const;

/** Filler artists of dump 10, so that its lines span several batch INSERTs. */
export const FILLER = 150;
const filler = (n: number) => `f0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

const ROW_ID: Record<string, number> = Object.fromEntries(Object.values(MBID).map((gid, i) => [gid, i + 1]));
const row = (gid: string) => artistRow({ id: ROW_ID[gid]!, gid, name: `Artist ${ROW_ID[gid]}` });
/** The artist JSON dump line of the story for `mbid` with `name`. */
export const artistLine = (mbid: string, name: string) => JSON.stringify({ id: mbid, name, type: 'Person' });
const touch = (gid: string, xid: number): FixtureRow => ({
  xid,
  table: 'musicbrainz.artist',
  op: 'u',
  oldData: row(gid),
  newData: { ...row(gid), comment: 'touched' },
});
const merge = (from: string, into: string, xid: number): FixtureRow[] => [
  touch(into, xid),
  { xid, table: 'musicbrainz.artist_gid_redirect', op: 'i', newData: gidRedirectRow(from, ROW_ID[into]!) },
  { xid, table: 'musicbrainz.artist', op: 'd', oldData: row(from) },
];
const remove = (gid: string, xid: number): FixtureRow => ({
  xid,
  table: 'musicbrainz.artist',
  op: 'd',
  oldData: row(gid),
});

/** One archive of the {@link currentStateArchives} story: a JSON dump or a replication packet. */
export type CurrentStateStep =
  | { kind: 'dump'; packet: number; entity: EntityType; path: string }
  | { kind: 'packet'; packet: number; path: string };

/**
 * Writes the archives of the current state story (real xz and bzip2 archives), in the order they
 * are stored: artist JSON dump 10 (the first nine MBIDs and {@link FILLER} more), replication packet
 * 12 (deletes `reappeared` and `deletedDespiteOlderDump`, merges `chainStart` → `middle` and
 * `mergedThenDeleted` → `deletedTarget`), JSON dump 11 (`replaced` and `deletedDespiteOlderDump`
 * again), packet 13 (merges `middle` → `chainEnd` and `mergedIntoUnheld` → `notInDumps`, deletes
 * `deletedTarget`), JSON dump 14 (`reappeared`).
 */
export async function currentStateArchives(dir: string): Promise<CurrentStateStep[]> {
  const dump = async (packet: number, lines: string[]): Promise<CurrentStateStep> => {
    const built = await writeJsonDump(join(dir, `dump-${packet}`), { packet, entity: 'artist', lines });
    return { kind: 'dump', packet, entity: 'artist', path: built.path };
  };
  const packet = async (number: number, rows: FixtureRow[]): Promise<CurrentStateStep> => {
    const path = await writeReplicationPacket(join(dir, `packet-${number}`), {
      packet: number,
      format: 'v2',
      rows,
    });
    return { kind: 'packet', packet: number, path };
  };
  const firstNine = Object.values(MBID).slice(0, 9);
  const fillers = Array.from({ length: FILLER }, (_, i) => artistLine(filler(i), `Filler ${i}`));
  return [
    await dump(10, [...firstNine.map((mbid) => artistLine(mbid, 'first')), ...fillers]),
    await packet(12, [
      remove(MBID.reappeared, 1),
      remove(MBID.deletedDespiteOlderDump, 2),
      ...merge(MBID.chainStart, MBID.middle, 3),
      ...merge(MBID.mergedThenDeleted, MBID.deletedTarget, 4),
    ]),
    await dump(11, [artistLine(MBID.replaced, 'second'), artistLine(MBID.deletedDespiteOlderDump, 'second')]),
    await packet(13, [
      ...merge(MBID.middle, MBID.chainEnd, 5),
      ...merge(MBID.mergedIntoUnheld, MBID.notInDumps, 6),
      remove(MBID.deletedTarget, 7),
    ]),
    await dump(14, [artistLine(MBID.reappeared, 'back')]),
  ];
}

/** Stores one step in a SQLite store through the real writers (sync/ingest.ts, sync/replication.ts). */
export async function storeStep(store: Store, step: CurrentStateStep): Promise<void> {
  if (step.kind === 'dump') {
    await ingestJsonDump(store, {
      packet: step.packet,
      entity: step.entity,
      archivePath: step.path,
      file: null,
    });
  } else {
    await storeReplicationPacket(store, step.packet, step.path);
  }
}

/** Stores one step through either store's sync writer (test/support/stores.ts). */
export async function storeStepOn(writer: SyncStore, step: CurrentStateStep): Promise<void> {
  if (step.kind === 'dump') {
    await writer.ingestDump({ packet: step.packet, entity: step.entity, archivePath: step.path, file: null });
  } else {
    await writer.replication.storeReplicationPacket(step.packet, step.path, {});
  }
}

/** Stores the whole {@link currentStateArchives} story through either store's sync writer, in order. */
export async function buildCurrentStateOn(writer: SyncStore, dir: string): Promise<void> {
  for (const step of await currentStateArchives(dir)) await storeStepOn(writer, step);
}

/** Stores the whole {@link currentStateArchives} story in a SQLite store, in order. */
export async function buildCurrentStateHistory(store: Store, dir: string): Promise<void> {
  for (const step of await currentStateArchives(dir)) await storeStep(store, step);
}

/** Stores the whole {@link currentStateArchives} story in either store through its sync writer, in order. */
export async function buildCurrentStateHistoryOn(store: SyncStore, dir: string): Promise<void> {
  for (const step of await currentStateArchives(dir)) {
    if (step.kind === 'dump') {
      await store.ingestDump({
        packet: step.packet,
        entity: step.entity,
        archivePath: step.path,
        file: null,
      });
    } else {
      await store.replication.storeReplicationPacket(step.packet, step.path, {});
    }
  }
}
