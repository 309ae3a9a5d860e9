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
}

/** Reads and parses the bundled feed's manifest. @throws Error when it is missing (run `npm run fixtures`). */
export function readBundledManifest(): FixtureManifest {
  return JSON.parse(readFileSync(BUNDLED_MANIFEST_FILE, 'utf8')) as FixtureManifest;
}
