/**
 * Quick in-process comparison of the JSON dump ingest of this checkout against other checkouts
 * (issue 14: what keeping the current state adds): the same real-shaped lines (the sample lines
 * with fresh MBIDs) into fresh databases, alternating runs. Usage: `npx tsx bench/currentStateCost.ts
 * --baseline name=/path/to/checkout [--baseline ...] [--lines 5000] [--runs 3]` (a checkout from
 * before the current state, one with an earlier design). Prints wall and CPU milliseconds per run;
 * the results are in bench/RESULTS.md.
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
    baseline: { type: 'string', multiple: true },
    lines: { type: 'string', default: '5000' },
    runs: { type: 'string', default: '3' },
    samples: { type: 'string', default: '/work/shared/samples' },
  },
});
if (!values.baseline?.length) throw new Error('--baseline name=<checkout> is required (one or more)');

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
  ...values.baseline.map((given, i) => {
    const [name, root] = given.includes('=') ? given.split('=', 2) : [`baseline${i + 1}`, given];
    return { name: name!, root: root! };
  }),
  { name: 'this checkout', root: join(import.meta.dirname, '..') },
];
// Wall time and this process's CPU time (xz may run in a child process): CPU time varies less
// when another job shares the machine.
const times: Record<string, number[]> = Object.fromEntries(variants.map((v) => [v.name, []]));
const cpu: Record<string, number[]> = Object.fromEntries(variants.map((v) => [v.name, []]));
for (let run = 0; run < Number(values.runs); run++) {
  for (const variant of variants) {
    const { openStore } = await import(join(variant.root, 'src/db/client.ts'));
    const { ingestJsonDump } = await import(join(variant.root, 'src/sync/ingest.ts'));
    const store = openStore(join(dir, `${variants.indexOf(variant)}-${run}.db`));
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
