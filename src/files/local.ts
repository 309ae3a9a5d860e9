import { type FileHandle, open } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';

/**
 * Local file access shared by the HTTP file links and mirror, the sample feed and the sync's
 * retention: paths kept inside a folder, files opened for streaming. Below `http/` and `sync/` so
 * that both import it.
 */

/**
 * Resolves the relative POSIX `path` inside the folder `root`.
 * @throws Error when the result would leave `root` or is `root` itself (callers only pass paths
 *   they matched or looked up; this is a second guard against path traversal).
 */
export function resolveInside(root: string, path: string): string {
  const base = resolve(root);
  const target = resolve(base, ...path.split('/'));
  const rel = relative(base, target);
  if (rel === '' || rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) {
    throw new Error(`path ${JSON.stringify(path)} leaves ${base}`);
  }
  return target;
}

/** An open regular file, ready to be streamed. Close it if it is not streamed. */
export interface OpenFeedFile {
  handle: FileHandle;
  /** Size in bytes. */
  size: number;
  mtime: Date;
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
