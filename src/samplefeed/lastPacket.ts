import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

const PACKET_FILE = /^replication-(\d+)(?:-v2)?\.tar\.bz2$/;
const DUMP_FOLDER = /^json-dump-(\d+)$/;

/**
 * The highest packet number in the feed folder `root`: the largest N with a replication packet file
 * (`replication-N-v2.tar.bz2` or `replication-N.tar.bz2`) or a `json-dumps/json-dump-N/` folder;
 * null when there is none (FEED.md, replication-info). Reads the folder on every call, so files
 * added later (late publication) are seen at once. A missing root or `json-dumps/` counts as empty;
 * symbolic links count as what they point at, as upstream's `os.path.isfile` does.
 */
export async function findLastPacket(root: string): Promise<number | null> {
  let last: number | null = null;
  const consider = (match: RegExpExecArray | null) => {
    const value = match ? Number(match[1]) : Number.NaN;
    if (Number.isSafeInteger(value) && (last === null || value > last)) last = value;
  };
  for (const entry of await listDir(root)) {
    if (PACKET_FILE.test(entry.name) && (await isKind(root, entry, 'file')))
      consider(PACKET_FILE.exec(entry.name));
  }
  const dumps = join(root, 'json-dumps');
  for (const entry of await listDir(dumps)) {
    if (DUMP_FOLDER.test(entry.name) && (await isKind(dumps, entry, 'dir')))
      consider(DUMP_FOLDER.exec(entry.name));
  }
  return last;
}

async function listDir(dir: string): Promise<Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

async function isKind(dir: string, entry: Dirent, kind: 'file' | 'dir'): Promise<boolean> {
  if (!entry.isSymbolicLink()) return kind === 'file' ? entry.isFile() : entry.isDirectory();
  // A dangling link is simply not a packet.
  const target = await stat(join(dir, entry.name)).catch(() => undefined);
  return kind === 'file' ? target?.isFile() === true : target?.isDirectory() === true;
}
