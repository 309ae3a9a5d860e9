import { createHash } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { entityOfTable } from '../src/feed/entities.js';
import { parsePgTimestamp } from '../src/feed/timestamp.js';
import { pgTimestampSeconds, signFile, type TestKeyHome } from '../test/support/archives.js';
import type {
  ManifestRemoval,
  ManifestReplicationPacket,
  ManifestRowChange,
} from '../test/support/manifest.js';
import { writeReplicationPacket } from '../test/support/replicationArchives.js';
import {
  type DumpLines,
  type PlannedReplicationPacket,
  type PlannedRow,
  planReplicationPackets,
  TABLE_KEYS,
} from './replicationPlan.js';

/** Replication packets are signed a minute after their TIMESTAMP (JSON dumps come 30 minutes later). */
const SIGNED_AFTER_SECONDS = 60;
const PACKET_FILE = /^replication-\d+(-v2)?\.tar\.bz2(\.asc)?$/;

/** Removes the replication packets (and signatures) at the top of a feed folder. */
export async function removeReplicationFixtures(outDir: string): Promise<void> {
  const names = await readdir(outDir).catch(() => [] as string[]);
  for (const name of names.filter((file) => PACKET_FILE.test(file))) await rm(join(outDir, name));
}

/**
 * Writes and signs the demo feed's replication packets (v2, production naming) into `outDir`, as
 * planned by scripts/replicationPlan.ts from the JSON dump lines, and describes each for the
 * manifest. Reproducible: fixed tar metadata, bzip2, signatures at a fixed time.
 * @throws Error from the plan, the archive builders and gpg.
 */
export async function writeReplicationFixtures(
  outDir: string,
  keyHome: TestKeyHome,
  dumpLines: DumpLines,
): Promise<Map<number, ManifestReplicationPacket>> {
  const described = new Map<number, ManifestReplicationPacket>();
  const rowsById = new Map<string, Record<string, unknown>>();
  for (const plan of planReplicationPackets(dumpLines)) {
    const path = await writeReplicationPacket(outDir, {
      packet: plan.packet,
      format: 'v2',
      deployment: 'production',
      rows: plan.rows,
      timestamp: plan.timestamp,
      xidTimestamps: plan.xidTimestamps,
      keys: TABLE_KEYS,
    });
    const signedAt = pgTimestampSeconds(plan.timestamp)! + SIGNED_AFTER_SECONDS;
    await signFile(path, keyHome, { time: signedAt, fingerprint: keyHome.fingerprint });
    const bytes = await readFile(path);
    const file = path.slice(outDir.length + 1);
    described.set(plan.packet, {
      file,
      signature: `${file}.asc`,
      bytes: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      format: 'v2',
      timestamp: plan.timestamp,
      rowCount: plan.rows.length,
      tables: tableCounts(plan.rows),
      removals: removalsOf(plan.rows, rowsById),
      rows: plan.rows.map((row) => manifestRow(plan, row)),
    });
  }
  return described;
}

function keyColumns(table: string): string[] {
  return TABLE_KEYS[table] ?? (table.endsWith('_gid_redirect') ? ['gid'] : ['id']);
}

function manifestRow(plan: PlannedReplicationPacket, row: PlannedRow): ManifestRowChange {
  const image = (row.op === 'i' ? row.newData : row.oldData) ?? {};
  return {
    seqid: row.seqid,
    xid: row.xid,
    table: row.table,
    op: row.op,
    keys: Object.fromEntries(keyColumns(row.table).map((column) => [column, image[column]])),
    oldData: row.oldData ?? null,
    newData: row.newData ?? null,
    timestamp: parsePgTimestamp(plan.xidTimestamps[row.xid]!),
  };
}

function tableCounts(rows: PlannedRow[]): ManifestReplicationPacket['tables'] {
  const counts = new Map<string, { table: string; inserts: number; updates: number; deletes: number }>();
  for (const row of rows) {
    const entry = counts.get(row.table) ?? { table: row.table, inserts: 0, updates: 0, deletes: 0 };
    entry[row.op === 'i' ? 'inserts' : row.op === 'u' ? 'updates' : 'deletes']++;
    counts.set(row.table, entry);
  }
  return [...counts.values()].sort((a, b) => (a.table < b.table ? -1 : 1));
}

/**
 * The removals the rows show (FEED.md): a redirect insert merges its gid into the row `new_id`
 * (its gid known from `rowsById`, every entity row image seen so far); an entity row delete
 * deletes its gid unless the packet merged it.
 */
function removalsOf(rows: PlannedRow[], rowsById: Map<string, Record<string, unknown>>): ManifestRemoval[] {
  const removals: ManifestRemoval[] = [];
  for (const row of rows) {
    const image = row.newData ?? row.oldData!;
    const table = row.table.slice('musicbrainz.'.length);
    if (entityOfTable(table) && image.gid) rowsById.set(`${table}:${image.id}`, image);
  }
  for (const row of rows) {
    const table = row.table.slice('musicbrainz.'.length);
    const redirect = /^(\w+)_gid_redirect$/.exec(table);
    const redirected = redirect ? entityOfTable(redirect[1]!) : undefined;
    if (row.op === 'i' && redirect && redirected) {
      const target = rowsById.get(`${redirect[1]}:${row.newData!.new_id}`);
      removals.push({
        mbid: row.newData!.gid as string,
        entity: redirected,
        kind: 'MERGED',
        mergedInto: (target?.gid as string | undefined) ?? null,
      });
    }
  }
  for (const row of rows) {
    const entity = entityOfTable(row.table.slice('musicbrainz.'.length));
    const gid = row.oldData?.gid as string | undefined;
    if (row.op === 'd' && entity && gid && !removals.some((r) => r.mbid === gid)) {
      removals.push({ mbid: gid, entity, kind: 'DELETED', mergedInto: null });
    }
  }
  return removals.sort((a, b) => (a.mbid < b.mbid ? -1 : 1));
}
