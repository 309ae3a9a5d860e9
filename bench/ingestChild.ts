/**
 * One measured ingest, run by bench/run.ts in its own process so that its peak RSS is its own:
 * `tsx bench/ingestChild.ts <archive> <db> <packet> <entity> [decoder] [cpuProfileDir]`.
 * Prints one JSON line: { ms, checkpointMs, lines, changes, quarantined, maxRssMb, cpuMs, decoder }.
 * Checkpoints are deferred as `livefeed sync` defers them (db/checkpoint.ts): `ms` runs from the
 * start of `ingestJsonDump` to its return, at COMMIT (the dump is visible); `checkpointMs` is the
 * checkpoint run right after, which the sync runs at the end of its pass. Opening the database and
 * migrations are not counted.
 */
import { rmSync } from 'node:fs';
import { checkpoint, deferCheckpoints } from '../src/db/checkpoint.js';
import { openStore } from '../src/db/client.js';
import type { EntityType } from '../src/feed/entities.js';
import { resolveXzDecoder, type XzDecoder } from '../src/feed/xz.js';
import { ingestJsonDump } from '../src/sync/ingest.js';

const [archive, db, packet, entity, decoder = 'auto'] = process.argv.slice(2);
if (!archive || !db || !packet || !entity)
  throw new Error('usage: ingestChild.ts ARCHIVE DB PACKET ENTITY [DECODER]');
for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true });
const store = openStore(db);
checkpoint(store.sqlite); // the migrations' pages, not part of the ingest
deferCheckpoints(store.sqlite);
const cpu0 = process.cpuUsage();
const started = performance.now();
const result = await ingestJsonDump(store, {
  packet: Number(packet),
  entity: entity as EntityType,
  archivePath: archive,
  file: null,
  decoder: decoder as XzDecoder,
});
const ms = performance.now() - started;
const checkpointMs = checkpoint(store.sqlite).ms;
const cpu = process.cpuUsage(cpu0);
store.close();
process.stdout.write(
  `${JSON.stringify({
    ms: Math.round(ms),
    checkpointMs: Math.round(checkpointMs),
    lines: result.lineCount,
    bytes: result.bytes,
    changes: result.changeCount,
    quarantined: result.quarantineCount,
    maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    decoder: resolveXzDecoder(decoder as XzDecoder),
  })}\n`,
);
