import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** One external command: program name (looked up on PATH) and arguments. */
export interface Command {
  cmd: string;
  args: readonly string[];
  /** Working directory; default the current one. */
  cwd?: string;
}

const HINT = 'the archive builders need GNU tar, xz, bzip2 and gpg on PATH';

function label(command: Command): string {
  return [command.cmd, ...command.args].join(' ');
}

/** Resolves when `child` exits 0; rejects with the command line, exit code and stderr otherwise. */
function completion(child: ChildProcess, command: Command): Promise<void> {
  const stderr: Buffer[] = [];
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
  return new Promise((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`${label(command)}: ${error.message} (${HINT})`)));
    child.once('close', (code, signal) => {
      if (code === 0) resolve();
      else {
        const text = Buffer.concat(stderr).toString('utf8').trim();
        reject(new Error(`${label(command)} failed (${code ?? signal}): ${text}`));
      }
    });
  });
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Runs `command` and resolves to its stdout.
 * @throws Error with the command line, exit status and stderr when it fails or cannot start.
 */
export async function run(command: Command): Promise<Buffer> {
  const child = spawn(command.cmd, command.args, { cwd: command.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const [stdout] = await Promise.all([collect(child.stdout!), completion(child, command)]);
  return stdout;
}

/**
 * Runs `first | second` and writes the output of `second` to the file `outFile`, or resolves to it
 * as a Buffer when `outFile` is omitted. Streams end to end: nothing is held in memory but the
 * returned output.
 * @throws Error naming the failing command (its exit error is preferred over the broken pipe it causes).
 */
export async function runPiped(
  first: Command,
  second: Command,
  outFile?: string,
): Promise<Buffer | undefined> {
  const a = spawn(first.cmd, first.args, { cwd: first.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const b = spawn(second.cmd, second.args, { cwd: second.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  const output = outFile
    ? pipeline(b.stdout!, createWriteStream(outFile)).then(() => undefined)
    : collect(b.stdout!);
  const exits = [completion(a, first), completion(b, second)];
  // The pipe between them is not checked on its own: the second command may exit, successfully,
  // before Node has finished writing its input (tar can stop at the end-of-archive blocks), which
  // fails the pipe with "Premature close" as a shell pipe would break. The exit statuses decide.
  const piped = pipeline(a.stdout!, b.stdin!).catch(() => {});
  const results = await Promise.allSettled([...exits, output, piped]);
  const failure = results.find((result) => result.status === 'rejected');
  if (failure) {
    a.kill();
    b.kill();
    throw (failure as PromiseRejectedResult).reason;
  }
  return (results[2] as PromiseFulfilledResult<Buffer | undefined>).value;
}
