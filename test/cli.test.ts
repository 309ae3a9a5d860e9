import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../src/cli/commands.js';
import { OPTIONS } from '../src/config/options.js';
import type { OptionRow } from '../src/config/row.js';
import {
  BUNDLED_FEED_ROOT,
  SAMPLE_TOKEN,
  type SampleFeed,
  startSampleFeed,
} from '../src/samplefeed/server.js';
import { tempDir } from './support/harness.js';

const CLI = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function start(
  args: string[],
  env: Record<string, string> = {},
): ChildProcess & { output: { stdout: string; stderr: string } } {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout!.on('data', (d: Buffer) => (output.stdout += d));
  child.stderr!.on('data', (d: Buffer) => (output.stderr += d));
  return Object.assign(child, { output });
}

async function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = start(args, env);
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, ...child.output };
}

describe('livefeed CLI (real processes, real HTTP)', () => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    data = await tempDir();
  });
  afterAll(async () => {
    await feed.close();
    await data.cleanup();
  });

  it('sync --once then serve answers GraphQL and GraphiQL', async () => {
    const synced = await run(
      ['sync', '--once', '--feed-url', feed.feedRoot, '--data-dir', data.dir, '--no-replication-packets'],
      {
        LIVEFEED_TOKEN: SAMPLE_TOKEN,
      },
    );
    expect(synced.stderr).not.toContain(SAMPLE_TOKEN);
    expect(synced.code, synced.stderr).toBe(0);
    const events = synced.stderr
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { event?: string });
    expect(events.some((e) => e.event === 'sync-done')).toBe(true);

    const server = start(['serve', '--port', '0', '--data-dir', data.dir]);
    try {
      let port = 0;
      for (let i = 0; i < 100 && !port; i++) {
        await new Promise((r) => setTimeout(r, 100));
        const line = server.output.stderr.split('\n').find((l) => l.includes('"event":"listening"'));
        if (line) port = (JSON.parse(line) as { port: number }).port;
      }
      expect(port).toBeGreaterThan(0);
      const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ latestPacket { number dumps { status } } service { demo } }' }),
      });
      const body = (await response.json()) as {
        data: { latestPacket: { number: number; dumps: unknown[] }; service: { demo: boolean } };
      };
      // The newest packet (186123) waits: its missing JSON dumps settle only once a later packet's dump is seen.
      expect(body.data.latestPacket.number).toBe(186122);
      expect(body.data.latestPacket.dumps).toHaveLength(11);
      expect(body.data.service.demo).toBe(false);
      const page = await fetch(`http://127.0.0.1:${port}/graphql`, { headers: { accept: 'text/html' } });
      expect(await page.text()).toMatch(/GraphiQL|graphiql/);
    } finally {
      server.kill('SIGTERM');
      const [code] = (await once(server, 'exit')) as [number | null];
      expect(code).toBe(0);
    }
  });

  it('exits 3 naming the token problem when the feed refuses the token', async () => {
    const wrong = 'WrongTokenWrongTokenWrongTokenWrongToken';
    const result = await run(['sync', '--once', '--feed-url', feed.feedRoot, '--data-dir', data.dir], {
      LIVEFEED_TOKEN: wrong,
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/access token is invalid/);
    expect(result.stderr).not.toContain(wrong);
  });

  it('exits 2 naming every invalid value', async () => {
    const result = await run(['sync', '--once', '--poll-interval', 'x', '--entities', 'song'], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--poll-interval/);
    expect(result.stderr).toMatch(/song/);
  });

  it('sync without a token and without --feed-url says so', async () => {
    const result = await run(['sync', '--once', '--data-dir', data.dir], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no upstream token: set LIVEFEED_TOKEN or LIVEFEED_TOKEN_FILE/);
    expect(result.stderr).toContain('or pass --demo to sync the bundled sample feed');
  });

  it('--help lists flags, env names and defaults', async () => {
    const result = await run(['sync', '--help']);
    expect(result.code).toBe(0);
    for (const text of [
      '--once',
      '--from',
      '--entities',
      'LIVEFEED_FEED_URL',
      'LIVEFEED_TOKEN_FILE',
      'default 300',
    ]) {
      expect(result.stdout).toContain(text);
    }
  });

  it('every command --help lists each option row it takes: flags, and env names (env-only ones too)', async () => {
    const rows = Object.values(OPTIONS) as OptionRow[];
    const missing = (
      await Promise.all(
        COMMANDS.map(async ({ name }) => {
          const { code, stdout } = await run([name, '--help']);
          expect(code).toBe(0);
          const names = rows
            .filter((row) => !row.hidden && row.commands.includes(name))
            .flatMap((row) => [
              ...(row.flag ? [row.flag.split(' ')[0]!] : []),
              ...(row.env?.split(' / ') ?? []),
            ]);
          return names.filter((text) => !stdout.includes(text)).map((text) => `${name} --help: ${text}`);
        }),
      )
    ).flat();
    expect(missing).toEqual([]);
  });
});
