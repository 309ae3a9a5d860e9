import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SAMPLE_TOKEN } from '../../src/samplefeed/server.js';

/** The repository root (where `src/cli/main.ts` lives). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A running `livefeed` CLI process (through tsx, so no build is needed). */
export interface CliProcess {
  child: ChildProcess;
  /** stderr lines so far (pino JSON lines and `livefeed: ...` messages). */
  stderr: string[];
  stdout: string[];
  /** Resolves with the exit code (or the signal name) once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when a JSON log line with `event` appears (rejects if the process ends first). */
  waitForEvent(event: string): Promise<Record<string, unknown>>;
  /** Resolves when `test` holds for the log lines so far (rejects if the process ends first). */
  waitUntil(test: (events: Record<string, unknown>[]) => boolean, what: string): Promise<void>;
  /** Parsed JSON log lines. */
  events(): Record<string, unknown>[];
}

/**
 * The environment of a CLI process under test: this process's, without the test runner's own
 * LIVEFEED_* variables (a developer's token or database must not leak into a test), plus `env`.
 */
export function cliEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('LIVEFEED_')),
  );
  return { ...base, ...env };
}

/**
 * Starts `node --import tsx src/cli/main.ts ...args` with `env` added to this process's environment
 * (LIVEFEED_* variables of the test runner are removed first); `nodeArgs` go to node before the
 * script (e.g. another `--import`).
 */
export function startCli(
  args: readonly string[],
  env: Record<string, string> = {},
  nodeArgs: readonly string[] = [],
): CliProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', ...nodeArgs, 'src/cli/main.ts', ...args], {
    cwd: REPO_ROOT,
    env: cliEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  const stdout: string[] = [];
  const listeners = new Set<() => void>();
  const collect = (into: string[]) => {
    let rest = '';
    return (chunk: Buffer) => {
      const lines = (rest + chunk.toString('utf8')).split('\n');
      rest = lines.pop() ?? '';
      into.push(...lines);
      for (const listener of listeners) listener();
    };
  };
  child.stderr!.on('data', collect(stderr));
  child.stdout!.on('data', collect(stdout));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => {
      resolve({ code, signal });
      for (const listener of listeners) listener();
    }),
  );
  const events = () =>
    stderr.flatMap((line) => {
      if (!line.startsWith('{')) return [];
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  const waitUntil = (test: (logged: Record<string, unknown>[]) => boolean, what: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (test(events())) {
          listeners.delete(check);
          resolve();
        } else if (child.exitCode !== null || child.signalCode !== null) {
          listeners.delete(check);
          reject(new Error(`livefeed ended before ${what}:\n${stderr.join('\n')}`));
        }
      };
      listeners.add(check);
      check();
    });
  const waitForEvent = async (event: string) => {
    await waitUntil((logged) => logged.some((e) => e.event === event), `logging ${event}`);
    return events().find((e) => e.event === event)!;
  };
  return { child, stderr, stdout, exited, waitForEvent, waitUntil, events };
}

/**
 * Starts `livefeed sync` on the sample feed at `feedRoot` with its token, JSON dumps only and
 * JSON log lines, into `dataDir`; `more` adds flags (`--once`, `--entities`, `--from`, `--db`, ...).
 */
export function startSync(feedRoot: string, dataDir: string, more: readonly string[] = []): CliProcess {
  return startCli(
    [
      'sync',
      '--feed-url',
      feedRoot,
      '--data-dir',
      dataDir,
      '--no-replication-packets',
      '--log-level',
      'info',
      ...more,
    ],
    { LIVEFEED_TOKEN: SAMPLE_TOKEN },
  );
}
