import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { type Deployment, replicationPacketName } from '../../src/feed/protocol/urls.js';
import { escapeCopy } from '../../src/feed/replication/copyText.js';
import { packData } from '../../src/feed/replication/packedData.js';
import { pgTimestampSeconds } from './archives.js';

const run = promisify(execFile);

/** One row change to write; seqids default to 1001, 1002, ... in list order. */
export interface FixtureRow {
  xid: number;
  /** `schema.table`, e.g. `musicbrainz.artist`. */
  table: string;
  op: 'i' | 'u' | 'd';
  oldData?: Record<string, unknown> | null;
  newData?: Record<string, unknown> | null;
  seqid?: number;
  /** v2: write the table name quoted (`"musicbrainz"."artist"`), as v1 always does. */
  quoteTable?: boolean;
  /** v2: pretty-print the JSON (raw tabs and newlines between tokens, escaped by COPY). */
  prettyJson?: boolean;
}

/** A replication packet to build (FEED.md, Replication packet archives). */
export interface ReplicationPacketFixture {
  packet: number;
  format: 'v1' | 'v2';
  rows: FixtureRow[];
  /** File naming: production `replication-N-v2.tar.bz2`, test `replication-N.tar.bz2`. Default: production for v2, test for v1. */
  deployment?: Deployment;
  /** PostgreSQL timestamptz text. Default `2026-05-11 21:14:26.878674+00`. */
  timestamp?: string;
  schemaSequence?: number;
  /** Written to REPLICATION_SEQUENCE; default `packet`. */
  replicationSequence?: number;
  /** v2: content of DBMIRROR_VERSION (default 2); null leaves the member out. */
  dbmirrorVersion?: number | null;
  /** v2: leave out `mbdump/pending_keys`. */
  omitKeys?: boolean;
  /** Primary key columns per table; default `['id']` (redirect tables: `['gid']`). */
  keys?: Record<string, string[]>;
  /** v2: commit time per xid (PostgreSQL text); default the packet timestamp. */
  xidTimestamps?: Record<number, string>;
  /** v1: use the very old member names `mbdump/Pending` / `mbdump/PendingData`. */
  oldV1Names?: boolean;
  /** Regular members to leave out (e.g. `mbdump/pending_ts`). */
  omitMembers?: string[];
  /** Members appended after the regular ones, under any name (e.g. `../evil`). */
  extraMembers?: { name: string; content: string }[];
  /** Member mtime in epoch seconds; default the instant of `timestamp` (reproducible bytes). */
  mtime?: number;
}

export const DEFAULT_TIMESTAMP = '2026-05-11 21:14:26.878674+00';

/**
 * Writes the replication packet `fixture` into `root` the way upstream builds it: COPY text data
 * members (escapes, `\N`), members in upstream order, packed with the real `tar` and compressed with
 * the real `bzip2`. Returns the archive's path.
 */
export async function writeReplicationPacket(
  root: string,
  fixture: ReplicationPacketFixture,
): Promise<string> {
  const deployment = fixture.deployment ?? (fixture.format === 'v2' ? 'production' : 'test');
  const target = join(root, replicationPacketName(fixture.packet, deployment));
  const stage = await mkdtemp(join(tmpdir(), 'livefeed-rp-'));
  try {
    const members = memberFiles(fixture);
    for (const name of fixture.omitMembers ?? []) members.delete(name);
    for (const [name, content] of members) await writeMember(stage, name, content);
    const extras = fixture.extraMembers ?? [];
    for (const [i, extra] of extras.entries()) await writeFile(join(stage, `extra-${i}`), extra.content);
    // -P keeps names like `../evil` as given; --transform renames each extra file to its member name.
    const transforms = extras.map(
      (extra, i) => `--transform=s|^extra-${i}$|${extra.name.replace(/[|&\\]/g, '\\$&')}|`,
    );
    const names = withDir([...members.keys()]);
    const tarPath = join(stage, 'packet.tar');
    const mtime = fixture.mtime ?? pgTimestampSeconds(fixture.timestamp ?? DEFAULT_TIMESTAMP) ?? 0;
    await run('tar', [
      '-C',
      stage,
      '-P',
      // Fixed owner, modes and times: equal fixtures give equal bytes (the demo feed is committed).
      '--format=gnu',
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      `--mtime=@${Math.floor(mtime)}`,
      '--mode=u=rwX,go=rX',
      '--no-recursion',
      ...transforms,
      '-cf',
      tarPath,
      ...names,
      ...extras.map((_, i) => `extra-${i}`),
    ]);
    await run('bzip2', ['-9', tarPath]);
    await mkdir(root, { recursive: true });
    await rename(`${tarPath}.bz2`, target);
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
  return target;
}

/** Inserts the `mbdump` directory entry before the first data member, as `tar ... mbdump` would. */
function withDir(names: string[]): string[] {
  const first = names.findIndex((name) => name.startsWith('mbdump/'));
  return first < 0 ? names : [...names.slice(0, first), 'mbdump', ...names.slice(first)];
}

async function writeMember(stage: string, name: string, content: string): Promise<void> {
  await mkdir(dirname(join(stage, name)), { recursive: true });
  await writeFile(join(stage, name), content);
}

/** Member name → content, in upstream order. */
function memberFiles(fixture: ReplicationPacketFixture): Map<string, string> {
  const files = new Map<string, string>([
    ['TIMESTAMP', `${fixture.timestamp ?? DEFAULT_TIMESTAMP}\n`],
    ['COPYING', 'The data in this packet is CC0 (test fixture).\n'],
    ['README', 'Replication packet test fixture for livefeed.\n'],
    ['REPLICATION_SEQUENCE', `${fixture.replicationSequence ?? fixture.packet}\n`],
    ['SCHEMA_SEQUENCE', `${fixture.schemaSequence ?? 31}\n`],
  ]);
  const rows = fixture.rows.map((row, i) => ({ ...row, seqid: row.seqid ?? 1001 + i }));
  if (fixture.format === 'v2') {
    if (fixture.dbmirrorVersion !== null) files.set('DBMIRROR_VERSION', `${fixture.dbmirrorVersion ?? 2}\n`);
    files.set('mbdump/pending_data', copyLines(rows.map(pendingDataColumns)));
    if (!fixture.omitKeys)
      files.set(
        'mbdump/pending_keys',
        copyLines(tablesOf(rows).map((t) => [t, pgArray(keysOf(fixture, t))])),
      );
    const xids = [...new Set(rows.map((row) => row.xid))];
    const stamp = (xid: number) => fixture.xidTimestamps?.[xid] ?? fixture.timestamp ?? DEFAULT_TIMESTAMP;
    files.set('mbdump/pending_ts', copyLines(xids.map((xid) => [String(xid), stamp(xid)])));
  } else {
    const [pending, pendingData] = fixture.oldV1Names
      ? ['Pending', 'PendingData']
      : ['dbmirror_pending', 'dbmirror_pendingdata'];
    files.set(
      `mbdump/${pending}`,
      copyLines(rows.map((row) => [String(row.seqid), quoted(row.table), row.op, String(row.xid)])),
    );
    files.set(`mbdump/${pendingData}`, copyLines(rows.flatMap((row) => v1DataLines(fixture, row))));
  }
  return files;
}

function pendingDataColumns(row: FixtureRow & { seqid: number }): (string | null)[] {
  const json = (data: Record<string, unknown> | null | undefined) =>
    data ? JSON.stringify(data, null, row.prettyJson ? '\t' : undefined) : null;
  const table = row.quoteTable ? quoted(row.table) : row.table;
  return [
    String(row.seqid),
    table,
    row.op,
    String(row.xid),
    json(row.oldData),
    json(row.newData),
    null,
    null,
  ];
}

/** dbmirror's data rows: `t` = key columns of the old row (update, delete), `f` = the whole new row (insert, update). */
function v1DataLines(
  fixture: ReplicationPacketFixture,
  row: FixtureRow & { seqid: number },
): (string | null)[][] {
  const lines: (string | null)[][] = [];
  if (row.op !== 'i') {
    const old = row.oldData ?? {};
    const keys = Object.fromEntries(keysOf(fixture, row.table).map((col) => [col, pgText(old[col])]));
    lines.push([String(row.seqid), 't', packData(keys)]);
  }
  if (row.op !== 'd') {
    const values = Object.fromEntries(
      Object.entries(row.newData ?? {}).map(([col, value]) => [col, pgText(value)]),
    );
    lines.push([String(row.seqid), 'f', packData(values)]);
  }
  return lines;
}

/** A value as PostgreSQL prints it as text (booleans `t`/`f`, JSON columns as JSON). */
export function pgText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function keysOf(fixture: ReplicationPacketFixture, table: string): string[] {
  return fixture.keys?.[table] ?? (table.endsWith('_gid_redirect') ? ['gid'] : ['id']);
}

function tablesOf(rows: FixtureRow[]): string[] {
  return [...new Set(rows.map((row) => row.table))];
}

function quoted(table: string): string {
  return table
    .split('.')
    .map((part) => `"${part.replace(/"/g, '""')}"`)
    .join('.');
}

function pgArray(items: string[]): string {
  return `{${items.map((item) => (/^[a-z_][a-z0-9_]*$/.test(item) ? item : `"${item.replace(/["\\]/g, '\\$&')}"`)).join(',')}}`;
}

function copyLines(rows: (string | null)[][]): string {
  return rows.map((columns) => `${columns.map(escapeCopy).join('\t')}\n`).join('');
}

/** A `musicbrainz.artist` row with MusicBrainz's columns, in table order. */
export function artistRow(
  row: { id: number; gid: string; name: string; sortName?: string } & Record<string, unknown>,
) {
  const { id, gid, name, sortName, ...rest } = row;
  return {
    id,
    gid,
    name,
    sort_name: sortName ?? name,
    begin_date_year: null,
    begin_date_month: null,
    begin_date_day: null,
    end_date_year: null,
    end_date_month: null,
    end_date_day: null,
    type: 1,
    area: null,
    gender: null,
    comment: '',
    edits_pending: 0,
    last_updated: '2026-05-11T21:10:02.123456+00:00',
    ended: false,
    begin_area: null,
    end_area: null,
    ...rest,
  };
}

/** A `musicbrainz.release_group` row with MusicBrainz's columns, in table order. */
export function releaseGroupRow(row: { id: number; gid: string; name: string } & Record<string, unknown>) {
  const { id, gid, name, ...rest } = row;
  return {
    id,
    gid,
    name,
    artist_credit: 1,
    type: 1,
    comment: '',
    edits_pending: 0,
    last_updated: null,
    ...rest,
  };
}

/** A `musicbrainz.<entity>_gid_redirect` row: `gid` merged away into the row with id `newId`. */
export function gidRedirectRow(gid: string, newId: number, created = '2026-05-11T21:12:00.5+00:00') {
  return { gid, new_id: newId, created };
}

/** Ed Sheeran's `musicbrainz.artist` row (MBID and names from fixtures/samples/artist.jsonl). */
export const ED_SHEERAN_ROW = artistRow({
  id: 11,
  gid: 'b8a7c51f-362c-4dcb-a259-bc6e0095f0a6',
  name: 'Ed Sheeran',
  sortName: 'Sheeran, Ed',
});

/** Mohamed Mounir's `musicbrainz.artist` row (a non-Latin name, fixtures/samples/artist.jsonl). */
export const MOHAMED_MOUNIR_ROW = artistRow({
  id: 12,
  gid: '5235052b-7fa0-498b-accf-26b9e7767da7',
  name: 'محمد منير',
  sortName: 'Mounir, Mohamed',
});
