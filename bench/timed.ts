/**
 * Timing a command as a process, shared by the benchmark scripts (bench/run.ts, bench/bootstrap.ts):
 * wall time from spawn to exit and, under GNU time, the peak RSS of its largest process.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** What {@link timed} measured. `ms` wall milliseconds. */
export interface Timed {
  ms: number;
  stdout: string;
  /** Standard error, without GNU time's line. */
  stderr: string;
  /** Largest RSS of the process and its children in MB (GNU time), when /usr/bin/time exists. */
  treeRssMb?: number;
}

const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

/**
 * Runs a command to its end in the repository root; wall time from spawn to exit.
 * @throws Error naming the command and the end of its stderr when it exits non-zero.
 */
export function timed(
  cmd: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<Timed> {
  const [program, programArgs] = GNU_TIME ? [GNU_TIME, ['-f', 'maxrss=%M', cmd, ...args]] : [cmd, args];
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(program, programArgs, { cwd: ROOT, env: { ...process.env, ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    child.once('error', reject);
    child.once('close', (code) => {
      const ms = performance.now() - started;
      const rss = /maxrss=(\d+)/.exec(stderr);
      if (code !== 0)
        reject(new Error(`${cmd} ${args.join(' ')} failed (${code}): ${stderr.trim().slice(-2000)}`));
      else
        resolve({
          ms,
          stdout,
          stderr: stderr.replace(/maxrss=\d+\n?/, ''),
          treeRssMb: rss ? Math.round(Number(rss[1]) / 1024) : undefined,
        });
    });
  });
}
