/**
 * Quick in-process comparison of the JSON dump ingest with and without the current-state upsert
 * (issue 14): the same real-shaped lines (the sample lines with fresh MBIDs) into fresh databases,
 * this checkout's ingest against the one of `--baseline <checkout>` (a checkout from before
 * current_state), alternating runs. Usage: `nice -n 19 npx tsx bench/currentStateCost.ts
 * --baseline /path/to/old/checkout [--lines 5000] [--runs 3]`. Prints milliseconds per run.
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
    lines: { type: 'string', default: '5000' },
    runs: { type: 'string', default: '3' },
    samples: { type: 'string', default: '/work/shared/samples' },
  },
});
if (!values.baseline) throw new Error('--baseline <checkout from before current_state> is required');

const samples = readdirSync(values.samples)
  .filter((name) => name.endsWith('.jsonl'))
  .flatMap((name) => readFileSync(join(values.samples, name), 'utf8').split('\n').filter(Boolean));
const lineCount = Number(values.lines);
const lines = Array.from({ length: lineCount }, (_, i) =>
  samples[i % samples.length]!.replace(/"id":\s*"[0-9a-f-]{36}"/, `"id":"${randomUUID()}"`),
);
const dir = await mkdtemp(join(tmpdir(), 'lf-current-cost-'));
const built = await writeJsonDump(dir, { packet: 7, entity: 'recording', lines });
const bytes = lines.reduce((sum, line) => sum + line.length + 1, 0);
console.log(
  `${lineCount} lines, ${(bytes / 1e6).toFixed(1)} MB uncompressed, ${(built.bytes / 1e6).toFixed(2)} MB xz`,
);

type Variant = { name: string; root: string };
const variants: Variant[] = [
  { name: 'baseline', root: values.baseline },
  { name: 'current_state', root: join(import.meta.dirname, '..') },
];
// Wall time and this process's CPU time (xz may run in a child process): CPU time varies less
// when another job shares the machine.
const times: Record<string, number[]> = { baseline: [], current_state: [] };
const cpu: Record<string, number[]> = { baseline: [], current_state: [] };
for (let run = 0; run < Number(values.runs); run++) {
  for (const variant of variants) {
    const { openStore } = await import(join(variant.root, 'src/db/client.ts'));
    const { ingestJsonDump } = await import(join(variant.root, 'src/sync/ingest.ts'));
    const store = openStore(join(dir, `${variant.name}-${run}.db`));
    const started = performance.now();
    const cpuStart = process.cpuUsage();
    await ingestJsonDump(store, { packet: 7, entity: 'recording', archivePath: built.path, file: null });
    const used = process.cpuUsage(cpuStart);
    times[variant.name]!.push(performance.now() - started);
    cpu[variant.name]!.push((used.user + used.system) / 1000);
    store.close();
  }
}
const summary = (list: number[]) => {
  const sorted = [...list].sort((a, b) => a - b);
  const all = list.map((t) => t.toFixed(0)).join(', ');
  return `min ${sorted[0]!.toFixed(0)}, median ${sorted[sorted.length >> 1]!.toFixed(0)} (${all})`;
};
for (const name of Object.keys(times)) {
  console.log(`${name}: wall ms ${summary(times[name]!)}; cpu ms ${summary(cpu[name]!)}`);
}
await rm(dir, { recursive: true, force: true });
