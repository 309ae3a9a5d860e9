import { type FileHandle, open } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';

/** An open regular file of the feed folder, ready to be streamed. Close it if it is not streamed. */
export interface OpenFeedFile {
  handle: FileHandle;
  /** Size in bytes. */
  size: number;
  mtime: Date;
}

/**
 * Resolves the feed-root-relative POSIX `path` inside `root`.
 * @throws Error when the result would leave `root` (the routes never produce such a path; this is
 *   a second guard against path traversal).
 */
export function resolveInside(root: string, path: string): string {
  const base = resolve(root);
  const target = resolve(base, ...path.split('/'));
  const rel = relative(base, target);
  if (rel === '' || rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) {
    throw new Error(`sample feed: path ${JSON.stringify(path)} leaves the feed root ${base}`);
  }
  return target;
}

/**
 * Opens `file` for reading when it exists and is a regular file (symbolic links are followed);
 * undefined otherwise. Opening before the size is read means a file replaced meanwhile is still
 * served whole and consistent.
 * @throws the file system error for anything but a missing file or a directory.
 */
export async function openFeedFile(file: string): Promise<OpenFeedFile | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') return undefined;
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) {
      await handle.close();
      return undefined;
    }
    return { handle, size: stats.size, mtime: stats.mtime };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Outcome of a `Range` header against a file of known size: inclusive byte offsets when partial. */
export type RangeOutcome =
  | { kind: 'full' }
  | { kind: 'partial'; start: number; end: number }
  | { kind: 'unsatisfiable' };

const RANGE_SPEC = /^(\d*)-(\d*)$/;

/**
 * Interprets a `Range` request header (RFC 9110, section 14) for a file of `size` bytes.
 * - absent, another unit than `bytes`, an empty file, or several ranges → `full` (the server may
 *   ignore Range; it does not build multipart bodies);
 * - one range `a-b`, `a-` or `-n` → `partial`, the end clamped to the last byte;
 * - a malformed byte range, one starting at or past the end, `a-b` with a > b, or `-0` → `unsatisfiable` (416).
 */
export function parseRange(header: string | undefined, size: number): RangeOutcome {
  if (!header || size === 0) return { kind: 'full' };
  const eq = header.indexOf('=');
  if (eq < 0 || header.slice(0, eq).trim().toLowerCase() !== 'bytes') return { kind: 'full' };
  const specs = header.slice(eq + 1).split(',');
  if (specs.length > 1) return { kind: 'full' };
  const match = RANGE_SPEC.exec(specs[0]!.trim());
  if (!match) return { kind: 'unsatisfiable' };
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return { kind: 'unsatisfiable' };
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (start >= size || (last !== '' && Number(last) < start)) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end };
}
