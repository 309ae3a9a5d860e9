// The JSON dump ingest runs of `npm run bench` (bench/run.ts), each in processes of its own: the
// floor (xz | tar | sqlite3 .import), the plain Python script, and livefeed's ingest
// (bench/ingestChild.ts), with the helpers that start them.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { entitySlot } from '../src/db/keys.js';
import type { EntityType } from '../src/feed/entities.js';
import type { DumpInput } from './inputs.js';
import { type Timed, timed } from './timed.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A TypeScript bench script in its own Node process (tsx loader). */
export function node(script: string, args: string[]): Promise<Timed> {
  return timed(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', script), ...args]);
}

export function lastJson<T>(out: Timed): T {
  const line = out.stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line) as T;
}

export function removeDb(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(path + suffix, { force: true });
}

export interface IngestRun {
  /** To COMMIT, the dump visible (checkpoint deferred as in `livefeed sync`). */
  ms: number;
  /** The deferred checkpoint, run right after. */
  checkpointMs: number;
  lines: number;
  bytes: number;
  changes: number;
  quarantined: number;
  maxRssMb: number;
  cpuMs: number;
  decoder: string;
  treeRssMb?: number;
}

/** Peak RSS of an ingest, both its processes: livefeed and xz (sum of their peaks). */
export const ingestRss = (run: IngestRun, xzMb: number) => run.maxRssMb + (run.decoder === 'xz' ? xzMb : 0);

export async function floor(dump: DumpInput, db: string): Promise<number> {
  removeDb(db);
  // Raw lines into a one-column table: ASCII mode with a unit separator that JSON text never holds
  // raw, and `\n` as the row separator, so every line is one row, byte for byte, nothing parsed.
  const script =
    'xz -dc "$1" | tar -xO "$2" | sqlite3 "$3" "CREATE TABLE t(line TEXT)" ".mode ascii" "$4" ".import /dev/stdin t"';
  const run = await timed('sh', [
    '-c',
    script,
    'sh',
    dump.path,
    `mbdump/${dump.entity}`,
    db,
    '.separator "\x1f" "\\n"',
  ]);
  const rows = (
    new Database(db, { readonly: true }).prepare('SELECT count(*) AS n FROM t').get() as { n: number }
  ).n;
  if (rows !== dump.lines) throw new Error(`floor stored ${rows} rows, expected ${dump.lines}`);
  return run.ms;
}

export async function plainScript(dump: DumpInput, db: string): Promise<number> {
  removeDb(db);
  const run = await timed('python3', [
    join(ROOT, 'bench', 'plain.py'),
    dump.path,
    db,
    String(dump.packet),
    dump.entity,
    String(entitySlot(dump.entity as EntityType)),
  ]);
  if (Number(run.stdout.trim()) !== dump.lines)
    throw new Error(`plain script stored ${run.stdout.trim()} rows`);
  return run.ms;
}

export async function ours(dump: DumpInput, db: string, decoder = 'auto'): Promise<IngestRun> {
  const run = await node('ingestChild.ts', [dump.path, db, String(dump.packet), dump.entity, decoder]);
  const result = { ...lastJson<IngestRun>(run), treeRssMb: run.treeRssMb };
  if (result.changes !== dump.lines)
    throw new Error(`livefeed stored ${result.changes} changes of ${dump.lines} lines`);
  return result;
}
