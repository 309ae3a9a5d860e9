/**
 * How a user's `npx livefeed` (or `./bin/livefeed.js`) starts, for the benchmarks that time the
 * command as a process: node with the flags of bin/livefeed.js' `#!/usr/bin/env -S node ...` line,
 * then the script. Spawn `process.execPath` with {@link LIVEFEED_CLI} and the command's arguments.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/livefeed.js', import.meta.url));
const SHEBANG = readFileSync(BIN, 'utf8').split('\n', 1)[0]!;
const NODE_FLAGS = SHEBANG.split(/\s+/).filter((word) => word.startsWith('--'));

/** Node's flags from the shebang, then bin/livefeed.js. */
export const LIVEFEED_CLI: readonly string[] = [...NODE_FLAGS, BIN];
