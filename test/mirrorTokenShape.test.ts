import { join } from 'node:path';
import { expect, it } from 'vitest';
import { openStore } from '../src/db/client.js';
import { startCli } from './support/cli.js';
import { tempDir } from './support/harness.js';

/**
 * `serve` warns at start-up when a mirror token has not upstream's shape (40 × [A-Za-z0-9]): the
 * mirror accepts it, but a livefeed syncing from the mirror refuses it as its LIVEFEED_TOKEN (exit
 * 2), which the operator would otherwise learn only on the other machine. Never shows a token.
 */
it('serve names the mirror tokens another livefeed could not use, without showing them', async () => {
  const data = await tempDir();
  const db = join(data.dir, 'livefeed.db');
  openStore(db).close();
  const odd = 'short-mirror-token-1';
  const fine = 'A'.repeat(40);
  const serve = startCli(
    ['serve', '--port', '0', '--db', db, '--data-dir', data.dir, '--log-level', 'info'],
    {
      LIVEFEED_MIRROR_TOKENS: `${fine},${odd}`,
    },
  );
  try {
    const warning = await serve.waitForEvent('mirror-token-shape');
    expect(warning).toMatchObject({ level: 40, tokens: [2] });
    expect(warning.msg).toMatch(
      /^mirror token 2 of LIVEFEED_MIRROR_TOKENS is not 40 characters of \[A-Za-z0-9\]/,
    );
    await serve.waitForEvent('listening');
  } finally {
    serve.child.kill('SIGTERM');
    await serve.exited;
    await data.cleanup();
  }
  const output = [...serve.stdout, ...serve.stderr].join('\n');
  expect(output).not.toContain(odd);
  expect(output).not.toContain(fine);
}, 60_000);
