import { spawn } from 'node:child_process';
import { Duplex } from 'node:stream';
import { ArchiveError } from './errors.js';

/**
 * A Duplex that pipes bytes through `program args` (a decompressor reading stdin, writing stdout) in
 * a child process, so decompression runs on another core than the caller. A non-zero exit fails
 * the stream with ArchiveError `<where>: corrupt archive (<program>: <its message>)`; destroying the stream kills it.
 */
export function programDecompressor(program: string, args: string[], where: string): Duplex {
  const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const stdin = child.stdin!;
  const stdout = child.stdout!;
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (text: string) => {
    if (stderr.length < 2000) stderr += text;
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  let finished = false;
  const duplex = new Duplex({
    write(chunk: Buffer, _encoding, callback) {
      if (stdin.write(chunk)) callback();
      else stdin.once('drain', () => callback());
    },
    final(callback) {
      stdin.end(callback);
    },
    read() {
      stdout.resume();
    },
    destroy(error, callback) {
      if (!finished) child.kill();
      callback(error);
    },
  });
  // A write after the program exited (it stopped on corrupt data) fails with EPIPE; the exit status says why.
  stdin.on('error', () => {});
  child.once('error', (error) =>
    duplex.destroy(new ArchiveError(`${where}: cannot run ${program}: ${error.message}`)),
  );
  stdout.on('data', (chunk: Buffer) => {
    if (!duplex.push(chunk)) stdout.pause();
  });
  stdout.once('end', () => {
    void exited.then((code) => {
      finished = true;
      if (code === 0) duplex.push(null);
      else
        duplex.destroy(
          new ArchiveError(
            `${where}: corrupt archive (${program}: ${stderr.trim().replace(/^\S+: \(stdin\):? /, '') || `exit ${code}`})`,
          ),
        );
    });
  });
  return duplex;
}
