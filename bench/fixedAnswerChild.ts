/**
 * The ceiling a GraphQL load can reach for one answer, in its own process: `tsx
 * bench/fixedAnswerChild.ts <file>` answers every request on 127.0.0.1 (port 0) with the bytes of
 * `file`, read once, as one Buffer: no GraphQL, no database, nothing per request but HTTP. Loaded
 * like the server (bench/load.ts), it shows what the transport and the load generator allow for an
 * answer of that size (bench/RESULTS.md: autocannon caps a page of 283 KB at about 0.28 ×
 * `{ __typename }` even here). Prints `{"port": N}` once listening; stops on SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const file = process.argv[2];
if (!file) throw new Error('usage: fixedAnswerChild.ts FILE');
const answer = readFileSync(file);
const server = createServer((req, res) => {
  // The request body is read to its end, as a real server must before answering.
  req.resume();
  req.once('end', () => {
    res.writeHead(200, {
      'content-type': 'application/graphql-response+json; charset=utf-8',
      'content-length': answer.length,
    });
    res.end(answer);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
