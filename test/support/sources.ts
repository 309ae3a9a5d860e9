import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The `.ts` files under `dir`, recursively (absolute paths). */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}
