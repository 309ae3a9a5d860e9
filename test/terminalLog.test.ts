import { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { cliEnv, REPO_ROOT } from './support/cli.js';
import { tempDir } from './support/harness.js';

const HAVE_SCRIPT = spawnSync('script', ['--version']).status === 0;
if (!HAVE_SCRIPT) console.warn('terminal test SKIPPED: no `script` (util-linux) to make a pseudo-terminal');

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, 'g');
const BAR = /[\u2588\u2591]/;

/** Runs `livefeed start` (the demo) under a real pseudo-terminal (`script`) until its ready line. */
async function startOnTerminal(dataDir: string): Promise<string> {
  const command = `timeout -s KILL 100 ${process.execPath} --import tsx src/cli/main.ts start --data-dir ${dataDir} --port 0`;
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LIVEFEED_')));
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: REPO_ROOT,
    env: { ...base, COLUMNS: '120', TERM: 'xterm' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  try {
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (/GraphiQL: http:\/\/127\.0\.0\.1:\d+\/graphql/.test(output.replace(ANSI, ''))) resolve();
      };
      child.stdout.on('data', check);
      void exited.then(() => reject(new Error(`livefeed ended before its ready line:\n${output}`)));
    });
    // Let anything that would follow the ready line arrive.
    await new Promise((r) => setTimeout(r, 500));
    return output;
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

describe.skipIf(!HAVE_SCRIPT)('on a terminal (a real pseudo-terminal)', () => {
  it('logs human-readable lines, keeps the progress bar on its own line, and ends with the GraphiQL URL', {
    timeout: 120_000,
  }, async () => {
    const data = await tempDir();
    try {
      const output = await startOnTerminal(data.dir);
      // What a terminal shows of each line: the text after its last carriage return.
      const visible = output
        .split('\n')
        .map((line) => line.replace(/\r$/, '').split('\r').at(-1)!.replace(ANSI, ''));
      const lines = visible.map((line) => line.trim()).filter(Boolean);
      // Human-readable, not JSON: "12:00:01 INFO  message  key=value".
      expect(output).not.toContain('{"level"');
      expect(lines.some((line) => /^\d\d:\d\d:\d\d WARN +DEMO MODE/.test(line))).toBe(true);
      // The progress bar was shown, and never shares a line with a log line.
      expect(BAR.test(output)).toBe(true);
      for (const text of visible) {
        if (BAR.test(text)) expect(text, 'a bar and a log line on one line').not.toMatch(/INFO|WARN|"level"/);
      }
      // Once the first pass is done, the GraphiQL URL is the last line.
      expect(lines.at(-1)).toMatch(/INFO +GraphiQL: http:\/\/127\.0\.0\.1:\d+\/graphql \(demo data\)/);
    } finally {
      await data.cleanup();
    }
  });

  it('--log-format json keeps JSON lines on a terminal, and LIVEFEED_LOG_FORMAT is checked', async () => {
    const bad = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--demo'], {
      cwd: REPO_ROOT,
      env: cliEnv({ LIVEFEED_LOG_FORMAT: 'fancy' }),
      encoding: 'utf8',
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('LIVEFEED_LOG_FORMAT=fancy');
  });
});
