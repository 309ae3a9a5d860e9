import type { EntityType } from '../src/feed/entities.js';
import { type FixtureRow, gidRedirectRow } from '../test/support/replicationArchives.js';
import { FIRST_PACKET, PACKET_COUNT, packetTimestamp } from './fixturePlan.js';
import { ROW_OF } from './replicationRows.js';

/**
 * What the replication packets of the bundled demo feed (fixtures/feed) hold, derived from the JSON
 * dump plan so that both tell the same story. Read by `scripts/make-fixtures.ts`; tests read the
 * resulting `fixtures/feed/MANIFEST.json`.
 *
 * - Every packet has a v2 replication packet (production naming); packet 186111 (no JSON dump) has
 *   one without rows.
 * - Each line of a JSON dump is one transaction on its entity table (`musicbrainz.<entity>`, the
 *   main columns of MusicBrainz's schema): an insert when the entity is new ({@link NEW_ENTITIES},
 *   first appearance), else an update from the previous row (the entity's earlier version, or the
 *   same row with an edit pending).
 * - 186118 merges recording {@link MERGED_RECORDING} ("Hüseyni Taksim", last seen in 186106) into
 *   {@link MERGE_TARGET} (the same title, in that packet's JSON dump): one transaction updating the
 *   target row, inserting into `musicbrainz.recording_gid_redirect` and deleting the source row.
 * - 186119 adds an alias and an annotation (text with tabs, newlines, backslashes and quotes) to
 *   Ed Sheeran, whose composite-key `musicbrainz.artist_annotation` row is written too.
 * - 186122 deletes label {@link DELETED_LABEL} ("Cats Purring", new in 186116).
 * - seqids and xids run on across packets; xids pass 2^31 (beyond GraphQL's Int).
 */

/** The recording merged away in packet 186118. */
export const MERGED_RECORDING = 'bbb5fb86-29f4-4ffd-94d6-9976ee6621d6';
/** The recording it is merged into. */
export const MERGE_TARGET = 'b83f6a51-5dc5-40ce-95ce-8bf1ec7d0778';
/** The label deleted in packet 186122. */
export const DELETED_LABEL = '0cb5e728-cf4a-4ecd-9a2f-c2775dca1392';
const MERGE_PACKET = 186118;
const ALIAS_PACKET = 186119;
const DELETE_PACKET = 186122;
const ED_SHEERAN = 'b8a7c51f-362c-4dcb-a259-bc6e0095f0a6';

/** Entities inserted at their first appearance; all others already exist and are updated. */
const NEW_ENTITIES: ReadonlySet<string> = new Set([
  DELETED_LABEL,
  '488df726-b10b-458a-a3ba-5bece6ba47ad', // label Continual
  '3af8c2a1-3d4d-4a42-9035-b53a8e36a257', // label Alphabet Zoo
  '48125c56-33d1-4c70-b3ac-d69a5595d645', // recording Acemkürdi Taksim
  'a7605b80-efb2-4a2a-9ec6-a17e7bd38ca1', // recording Kürdilihicazkar Peşrev
  '3ba6f29a-52d4-4f49-9d98-d976e3149d09', // recording Uşşak Taksim
]);

/** Entity types whose JSON dump lines become row changes, in the order they are written. */
export const ROW_ENTITIES: readonly EntityType[] = [
  'area',
  'artist',
  'label',
  'recording',
  'release',
  'series',
  'work',
];

/** Primary key columns of the tables whose key is not `id` (default `id`; redirects `gid`). */
export const TABLE_KEYS: Readonly<Record<string, string[]>> = {
  'musicbrainz.artist_annotation': ['artist', 'annotation'],
  'musicbrainz.recording_gid_redirect': ['gid'],
};

/** One planned row change with its seqid. */
export type PlannedRow = FixtureRow & { seqid: number };

/** One planned replication packet. */
export interface PlannedReplicationPacket {
  packet: number;
  /** `TIMESTAMP`, PostgreSQL text (the same as the packet's JSON dumps). */
  timestamp: string;
  /** Rows in seqid order, which is also upstream's apply order here (transactions do not interleave). */
  rows: PlannedRow[];
  /** Commit time per xid, PostgreSQL text. */
  xidTimestamps: Record<number, string>;
}

/** A JSON dump line as parsed objects, per packet and entity type (absent: no dump). */
export type DumpLines = (packet: number, entity: EntityType) => Record<string, unknown>[];

const FIRST_SEQID = 905_114_001;
const FIRST_XID = 2_147_483_390;
const XID_STEP = 37;
const ID_BASE: Record<string, number> = {
  area: 15_000,
  artist: 1_044_000,
  label: 201_500,
  recording: 30_771_000,
  release: 3_902_000,
  series: 9_100,
  work: 12_480_000,
};

/** Commit time of the `index`-th transaction of the hour before `packet`'s TIMESTAMP: PostgreSQL text and ISO. */
function commitTime(packet: number, index: number): { pg: string; iso: string } {
  const end = Date.parse(packetTimestamp(packet).replace(' ', 'T').replace(/\+00$/, 'Z'));
  const at = new Date(Math.floor(end / 1000) * 1000 - 55 * 60_000 + index * 241_000);
  const micros = String(120_034 + index * 11_111).padStart(6, '0');
  const seconds = at.toISOString().slice(0, 19);
  return { pg: `${seconds.replace('T', ' ')}.${micros}+00`, iso: `${seconds}.${micros}+00:00` };
}

/**
 * Plans the replication packets of every demo packet from its JSON dump lines (see the module
 * comment). Deterministic: equal inputs give equal plans.
 * @throws Error when the merge or deletion names an entity that no earlier packet showed.
 */
export function planReplicationPackets(dumpLines: DumpLines): PlannedReplicationPacket[] {
  const rows = new Map<string, Record<string, unknown>>();
  const ids = new Map<string, number>();
  let seqid = FIRST_SEQID;
  let xid = FIRST_XID;
  const idOf = (entity: string, mbid: string) => {
    if (!ids.has(mbid)) ids.set(mbid, ID_BASE[entity]! + ids.size + 1);
    return ids.get(mbid)!;
  };
  const plans: PlannedReplicationPacket[] = [];
  for (let packet = FIRST_PACKET; packet < FIRST_PACKET + PACKET_COUNT; packet++) {
    const plan: PlannedReplicationPacket = {
      packet,
      timestamp: packetTimestamp(packet),
      rows: [],
      xidTimestamps: {},
    };
    let transactions = 0;
    const transaction = (changes: FixtureRow[] | ((at: string) => FixtureRow[])) => {
      const time = commitTime(packet, transactions++);
      xid += XID_STEP;
      plan.xidTimestamps[xid] = time.pg;
      for (const change of typeof changes === 'function' ? changes(time.iso) : changes) {
        plan.rows.push({ ...change, xid, seqid: seqid++ });
      }
    };
    for (const entity of ROW_ENTITIES) {
      for (const line of dumpLines(packet, entity)) {
        const mbid = line.id as string;
        transaction((at) => {
          const before = rows.get(mbid);
          const after = ROW_OF[entity]!(line, idOf(entity, mbid), at);
          rows.set(mbid, after);
          const table = `musicbrainz.${entity}`;
          const changes: FixtureRow[] = [];
          if (!before && NEW_ENTITIES.has(mbid)) changes.push({ xid, table, op: 'i', newData: after });
          else
            changes.push({
              xid,
              table,
              op: 'u',
              oldData: before ?? { ...after, edits_pending: 1, last_updated: null },
              newData: after,
            });
          if (packet === MERGE_PACKET && mbid === MERGE_TARGET) changes.push(...mergeRows(rows, after));
          return changes;
        });
      }
    }
    if (packet === ALIAS_PACKET) transaction((at) => aliasRows(rows, at));
    if (packet === DELETE_PACKET) transaction(() => [deleteRow(rows, 'musicbrainz.label', DELETED_LABEL)]);
    plans.push(plan);
  }
  return plans;
}

function known(rows: Map<string, Record<string, unknown>>, mbid: string): Record<string, unknown> {
  const row = rows.get(mbid);
  if (!row) throw new Error(`replicationPlan: ${mbid} has no earlier row to merge or delete`);
  return row;
}

function mergeRows(
  rows: Map<string, Record<string, unknown>>,
  target: Record<string, unknown>,
): FixtureRow[] {
  const source = known(rows, MERGED_RECORDING);
  rows.delete(MERGED_RECORDING);
  return [
    {
      xid: 0,
      table: 'musicbrainz.recording_gid_redirect',
      op: 'i',
      newData: gidRedirectRow(MERGED_RECORDING, target.id as number, target.last_updated as string),
      quoteTable: true,
    },
    { xid: 0, table: 'musicbrainz.recording', op: 'd', oldData: source },
  ];
}

function deleteRow(rows: Map<string, Record<string, unknown>>, table: string, mbid: string): FixtureRow {
  const row = known(rows, mbid);
  rows.delete(mbid);
  return { xid: 0, table, op: 'd', oldData: row };
}

function aliasRows(rows: Map<string, Record<string, unknown>>, at: string): FixtureRow[] {
  const artist = known(rows, ED_SHEERAN).id as number;
  const annotation = 1_772_001;
  return [
    {
      xid: 0,
      table: 'musicbrainz.artist_alias',
      op: 'i',
      newData: {
        id: 990_301,
        artist,
        name: 'エド・シーラン',
        locale: 'ja',
        edits_pending: 0,
        last_updated: at,
        type: 1,
        sort_name: 'シーラン, エド',
        begin_date_year: null,
        begin_date_month: null,
        begin_date_day: null,
        end_date_year: null,
        end_date_month: null,
        end_date_day: null,
        primary_for_locale: true,
        ended: false,
      },
    },
    {
      xid: 0,
      table: 'musicbrainz.annotation',
      op: 'i',
      newData: {
        id: annotation,
        editor: 1_234_567,
        text: 'Official site:\thttps://www.edsheeran.com/\nSee also "Ed Sheeran (disambiguation)" \\ C:\\dir\r\nend',
        changelog: 'tabs\tand\nnewlines',
        created: at,
      },
      prettyJson: true,
    },
    { xid: 0, table: 'musicbrainz.artist_annotation', op: 'i', newData: { artist, annotation } },
  ];
}
