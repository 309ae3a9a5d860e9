import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Store } from '../../src/db/client.js';
import type { EntityType } from '../../src/feed/entities.js';
import { ingestJsonDump } from '../../src/sync/ingest.js';
import type { DumpWriter } from '../../src/sync/syncStore.js';
import { writeJsonDump } from './archives.js';

const SAMPLE = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../fixtures/samples/recording.jsonl', import.meta.url)), 'utf8')
    .split('\n')
    .find((line) => line.trim() !== '')!,
) as Record<string, unknown>;

/**
 * A real recording line (fixtures/samples) with MBID `mbid`, grown to exactly `bytes` UTF-8 bytes by
 * its `annotation` (`bytes` must exceed the sample line's size).
 */
export function recordingLineOf(mbid: string, bytes: number): string {
  const line = JSON.stringify({ ...SAMPLE, id: mbid, annotation: '' });
  const pad = bytes - Buffer.byteLength(line);
  if (pad < 0) throw new Error(`a recording line needs at least ${Buffer.byteLength(line)} bytes`);
  return JSON.stringify({ ...SAMPLE, id: mbid, annotation: 'x'.repeat(pad) });
}

/** The MBID numbered `n` (`00000000-0000-4000-8000-<n>`). */
export const mbidOf = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/**
 * Stores `lines` as the JSON dump of (`packet`, `entity`) through the real archive (tar, xz) and
 * the ingest of either store, and completes the packet as far as the API cares (its other dumps are not tracked).
 */
export async function storeDump(
  store: Store | DumpWriter,
  feedRoot: string,
  packet: number,
  entity: EntityType,
  lines: string[],
): Promise<void> {
  const built = await writeJsonDump(feedRoot, { packet, entity, lines });
  const options = { packet, entity, archivePath: built.path, file: null };
  // A sync writer of either store (test/support/stores.ts), or a SQLite store.
  if ('ingestDump' in store) await store.ingestDump(options);
  else await ingestJsonDump(store, options);
}
