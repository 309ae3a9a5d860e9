#!/usr/bin/env -S node --max-semi-space-size=8
// V8's young generation capped at 8 MB semi-spaces (16 by default): a sync's short-lived buffers are
// collected sooner, which took the peak RSS of a day's catch-up from 204–210 to 183–184 MB at the
// same CPU time (bench/RESULTS.md, issue 16). Node reads the flag only at start, hence the shebang;
// the benchmarks start the command with the same flags (bench/cli.ts).
// graphql-js checks every `instanceof` against copies of itself unless NODE_ENV is production, a
// cost per field of every GraphQL answer (bench/RESULTS.md, GraphQL). Set before graphql loads.
process.env.NODE_ENV ??= 'production';
await import('../dist/cli/main.js');
