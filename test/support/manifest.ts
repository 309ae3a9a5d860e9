import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { EntityType } from '../../src/feed/entities.js';

/** `fixtures/feed/MANIFEST.json`: what the bundled demo feed holds (written by `npm run fixtures`). */
export const BUNDLED_MANIFEST_FILE = fileURLToPath(
  new URL('../../fixtures/feed/MANIFEST.json', import.meta.url),
);

/** One JSON dump of the bundled feed. */
export interface ManifestJsonDump {
  /** Feed-root-relative path, e.g. `json-dumps/json-dump-186100/area.tar.xz`. */
  file: string;
  /** Feed-root-relative path of its detached signature (`file` + `.asc`). */
  signature: string;
  /** Archive size in bytes. */
  bytes: number;
  /** SHA-256 of the archive, lowercase hex. */
  sha256: string;
  /** MBIDs of `mbdump/<entity>`, in file order (position 1 first). */
  mbids: string[];
  /** `name` (or `title`) of each line, parallel to `mbids`. */
  names: string[];
}

/** One packet of the bundled feed. */
export interface ManifestPacket {
  number: number;
  /** `TIMESTAMP` of its archives, PostgreSQL timestamptz text. */
  timestamp: string;
  /** Per entity type, its JSON dump; an absent type has no dump (the feed answers 404). */
  jsonDumps: Partial<Record<EntityType, ManifestJsonDump>>;
  /** Its replication packet; absent when the feed has none (404). */
  replication?: ManifestReplicationPacket;
}

/** One row change as the builder wrote it (v2 JSON types), in upstream's apply order. */
export interface ManifestRowChange {
  seqid: number;
  xid: number;
  /** `schema.table`, unquoted. */
  table: string;
  op: 'i' | 'u' | 'd';
  /** Primary key columns → values, from the old row (update, delete) or the new row (insert). */
  keys: Record<string, unknown>;
  oldData: Record<string, unknown> | null;
  newData: Record<string, unknown> | null;
  /** Commit time of its transaction (`pending_ts`), ISO 8601 UTC with six fraction digits. */
  timestamp: string;
}

/** An entity the replication packet deletes or merges away. */
export interface ManifestRemoval {
  mbid: string;
  entity: EntityType;
  kind: 'DELETED' | 'MERGED';
  mergedInto: string | null;
}

/** The replication packet of one packet (FEED.md, Replication packet archives). */
export interface ManifestReplicationPacket {
  /** Feed-root-relative path, e.g. `replication-186100-v2.tar.bz2`. */
  file: string;
  /** Its detached signature (`file` + `.asc`). */
  signature: string;
  bytes: number;
  /** SHA-256 of the archive, lowercase hex. */
  sha256: string;
  format: 'v1' | 'v2';
  /** `TIMESTAMP`, PostgreSQL timestamptz text (equal to the JSON dumps'). */
  timestamp: string;
  rowCount: number;
  /** Inserts, updates and deletes per table, sorted by table name. */
  tables: { table: string; inserts: number; updates: number; deletes: number }[];
  /** Removals it shows, sorted by MBID. */
  removals: ManifestRemoval[];
  /** Every row change, in apply order. */
  rows: ManifestRowChange[];
}

/** Contents of `MANIFEST.json`. */
export interface FixtureManifest {
  description: string;
  /** Database path segment the feed is served under. */
  database: string;
  firstPacket: number;
  lastPacket: number;
  schemaSequence: number;
  /** Fingerprint of the key that signed every file (fixtures/keys/test-signing-key.asc). */
  signingKeyFingerprint: string;
  /** Every packet from `firstPacket` to `lastPacket`, in order, also those without files. */
  packets: ManifestPacket[];
  /** The full JSON dump served under the sample feed's dumps URL (`<root>/full-json-dumps/`). */
  fullDump?: ManifestFullDump;
}

/** The demo feed's full JSON dump, as scripts/fullDumpFixtures.ts wrote it. */
export interface ManifestFullDump {
  /** Directory name, e.g. `20260510-001`. */
  name: string;
  /** Its REPLICATION_SEQUENCE. */
  packet: number;
  /** Per entity type: the archive path under the dumps URL, and the MBIDs it holds in file order. */
  entities: Partial<Record<EntityType, { file: string; mbids: string[] }>>;
}

/** Reads and parses the bundled feed's manifest. @throws Error when it is missing (run `npm run fixtures`). */
export function readBundledManifest(): FixtureManifest {
  return JSON.parse(readFileSync(BUNDLED_MANIFEST_FILE, 'utf8')) as FixtureManifest;
}
