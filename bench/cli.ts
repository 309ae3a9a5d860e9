/**
 * How a user's `npx livefeed` (or `./bin/livefeed.js`) starts, for the benchmarks that time the
 * command as a process: the variables and node's flags of bin/livefeed.js' `#!/usr/bin/env -S ...`
 * line, then the script. Spawn `process.execPath` with {@link LIVEFEED_CLI} and the command's
 * arguments, its environment with {@link LIVEFEED_ENV}.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/livefeed.js', import.meta.url));
const SHEBANG = readFileSync(BIN, 'utf8').split('\n', 1)[0]!.split(/\s+/);

/** Node's flags from the shebang (`--max-semi-space-size=8`). */
export const NODE_FLAGS: readonly string[] = SHEBANG.filter((word) => word.startsWith('--'));

/** The variables the shebang sets (`MALLOC_TRIM_THRESHOLD_` and others), by name. */
export const LIVEFEED_ENV: Readonly<Record<string, string>> = Object.fromEntries(
  SHEBANG.filter((word) => /^[A-Z_][A-Z0-9_]*=/.test(word)).map((word) => {
    const at = word.indexOf('=');
    return [word.slice(0, at), word.slice(at + 1)];
  }),
);

/** Node's flags from the shebang, then bin/livefeed.js. */
export const LIVEFEED_CLI: readonly string[] = [...NODE_FLAGS, BIN];
