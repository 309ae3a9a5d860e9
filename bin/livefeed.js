#!/usr/bin/env node
// graphql-js checks every `instanceof` against copies of itself unless NODE_ENV is production, a
// cost per field of every GraphQL answer (bench/RESULTS.md, GraphQL). Set before graphql loads.
process.env.NODE_ENV ??= 'production';
await import('../dist/cli/main.js');
