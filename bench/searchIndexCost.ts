/**
 * In-process measure of what the search index (issue 15) adds to the JSON dump ingest: the same
 * real-shaped lines (the sample lines with fresh MBIDs) through this checkout's ingest and through
 * the one of `--baseline <checkout>` (a checkout from before the search index), alternating runs.
 * Two cases per run: `fresh`, a dump into an empty database (every line new: bootstrap, or a new
 * entity); `replace`, a second dump of the next packet with a new version of every MBID (every
 * entry replaced: the hourly feed's case). Usage: `nice -n 19 npx tsx bench/searchIndexCost.ts
 * --baseline /path/to/old/checkout [--lines 20000] [--runs 3]`. Prints milliseconds per case.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { writeJsonDump } from '../test/support/archives.js';

const { values } = parseArgs({
  options: {
    baseline: { type: 'string' },
    lines: { type: 'string', default: '20000' },
    runs: { type: 'string', default: '3' },
    samples: { type: 'string', default: '/work/shared/samples' },
  },
});
if (!values.baseline) throw new Error('--baseline <checkout from before the search index> is required');

const samples = readdirSync(values.samples)
  .filter((name) => name.endsWith('.jsonl'))
  .flatMap((name) => readFileSync(join(values.samples, name), 'utf8').split('\n').filter(Boolean));
const ID = /"id":\s*"[0-9a-f-]{36}"/;
const mbids = Array.from({ length: Number(values.lines) }, () => randomUUID());
// Version 2 of each line is another sample line under the same MBID: new names to index.
const version = (shift: number) =>
  mbids.map((mbid, i) => samples[(i + shift) % samples.length]!.replace(ID, `"id":"${mbid}"`));
const dir = await mkdtemp(join(tmpdir(), 'lf-search-cost-'));
const first = await writeJsonDump(join(dir, 'v1'), { packet: 7, entity: 'recording', lines: version(0) });
const second = await writeJsonDump(join(dir, 'v2'), { packet: 8, entity: 'recording', lines: version(1) });
console.log(`${mbids.length} lines per dump, ${(first.bytes / 1e6).toFixed(2)} MB xz`);

const variants = [
  { name: 'baseline', root: values.baseline },
  { name: 'search', root: join(import.meta.dirname, '..') },
];
// This process's CPU time (xz may run in a child process) varies less than wall time when
// another job shares the machine; both are printed.
const figures: Record<string, { wall: number[]; cpu: number[] }> = {};
for (let run = 0; run < Number(values.runs); run++) {
  for (const variant of variants) {
    const { openStore } = await import(join(variant.root, 'src/db/client.ts'));
    const { ingestJsonDump } = await import(join(variant.root, 'src/sync/ingest.ts'));
    const store = openStore(join(dir, `${variant.name}-${run}.db`));
    for (const [label, packet, archive] of [
      ['fresh', 7, first.path],
      ['replace', 8, second.path],
    ] as const) {
      const started = performance.now();
      const cpuStart = process.cpuUsage();
      await ingestJsonDump(store, { packet, entity: 'recording', archivePath: archive, file: null });
      const used = process.cpuUsage(cpuStart);
      const key = `${label} ${variant.name}`;
      figures[key] ??= { wall: [], cpu: [] };
      figures[key].wall.push(performance.now() - started);
      figures[key].cpu.push((used.user + used.system) / 1000);
    }
    store.close();
  }
}
const median = (list: number[]) => [...list].sort((a, b) => a - b)[list.length >> 1]!;
for (const [key, { wall, cpu }] of Object.entries(figures)) {
  const all = wall.map((t) => t.toFixed(0)).join(', ');
  console.log(
    `${key}: wall ms median ${median(wall).toFixed(0)} (${all}); cpu ms median ${median(cpu).toFixed(0)}`,
  );
}
for (const label of ['fresh', 'replace']) {
  const ratio = (k: 'wall' | 'cpu') =>
    (median(figures[`${label} search`]![k]) / median(figures[`${label} baseline`]![k])).toFixed(2);
  console.log(`${label}: search / baseline = wall ${ratio('wall')} x, cpu ${ratio('cpu')} x`);
}
await rm(dir, { recursive: true, force: true });
