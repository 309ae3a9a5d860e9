import { join } from 'node:path';

/** Where kept archives live: `<dataDir>/files/<name>` (name = path under the feed root). */
export function keptPath(dataDir: string, name: string): string {
  return join(dataDir, 'files', name);
}
