import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { cliEnv, REPO_ROOT } from './support/cli.js';
import { tempDir } from './support/harness.js';

/**
 * `npm start` (README, Quick start) runs livefeed itself in npm's place: the memory settings of
 * bin/livefeed.js' first line apply, and a SIGTERM to npm (a service manager, `kill %1`) reaches
 * livefeed, which stops, instead of leaving it running with the port and the writer lock.
 * Needs the build (`npm ci` makes it), like test/bundle.test.ts.
 */

/** Command lines (NUL-separated arguments joined by spaces) of the processes naming `text`. */
function processesNaming(text: string): { pid: number; args: string }[] {
  const found: { pid: number; args: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      if (args.includes(text)) found.push({ pid: Number(entry), args });
    } catch {
      // The process ended while listed.
    }
  }
  return found;
}

it('`npm start` runs livefeed with its memory settings, and SIGTERM to npm stops it', {
  timeout: 120_000,
}, async () => {
  const data = await tempDir();
  const npm = spawn('npm', ['start', '--', '--data-dir', data.dir, '--port', '0'], {
    cwd: REPO_ROOT,
    env: cliEnv(),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  npm.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const npmExited = new Promise<void>((resolve) => npm.once('close', () => resolve()));
  try {
    for (let i = 0; i < 600 && !stderr.includes('"event":"listening"'); i++) await sleep(100);
    expect(stderr).toContain('"event":"listening"');
    const livefeed = processesNaming(data.dir).filter((p) => p.args.includes('livefeed.js start'));
    expect(livefeed).toHaveLength(1);
    expect(livefeed[0]!.args).toContain('--max-semi-space-size=8');
    const environ = readFileSync(`/proc/${livefeed[0]!.pid}/environ`, 'utf8').split('\0');
    expect(environ).toContain('MALLOC_TRIM_THRESHOLD_=33554432');

    npm.kill('SIGTERM');
    await npmExited;
    for (let i = 0; i < 50 && processesNaming(data.dir).length > 0; i++) await sleep(100);
    expect(processesNaming(data.dir)).toEqual([]);
    expect(stderr).toContain('"event":"shutdown"');
  } finally {
    for (const p of processesNaming(data.dir)) process.kill(p.pid, 'SIGKILL');
    await data.cleanup();
  }
});
