#!/usr/bin/env -S MALLOC_MMAP_THRESHOLD_=1048576 MALLOC_TRIM_THRESHOLD_=33554432 node --max-semi-space-size=8
// V8's young generation capped at 8 MB semi-spaces (16 by default): a sync's short-lived buffers are
// collected sooner, which took the peak RSS of a day's catch-up from 204–210 to 183–184 MB at the
// same CPU time (bench/RESULTS.md, issue 16). Node reads the flag only at start, hence the shebang;
// the benchmarks start the command with the same flags and variables (bench/cli.ts).
// glibc's malloc keeps up to 32 MB of freed memory and serves blocks up to 1 MB from it. By default
// it gives the 280 KB buffers of each page of real-sized lines (SQLite's group_concat, the row's
// Buffer, the answer), ten requests at a time, back to the kernel, and the next requests pay 70-85
// page faults each to have them again: about a third of the page's CPU time (bench/RESULTS.md).
// With 8 MB kept, one request at a time stopped faulting but ten did not. glibc reads these only at
// start; other C libraries ignore them.
// graphql-js checks every `instanceof` against copies of itself unless NODE_ENV is production, a
// cost per field of every GraphQL answer (bench/RESULTS.md, GraphQL). Set before graphql loads.
import { existsSync } from 'node:fs';

process.env.NODE_ENV ??= 'production';
// The bundle of `npm run build` (scripts/bundle.ts) starts in half the time of dist/'s ~340 modules;
// dist/ serves when only `tsc` was run.
const bundle = new URL('../dist/bundle/livefeed.mjs', import.meta.url);
await import(existsSync(bundle) ? bundle.href : '../dist/cli/main.js');
