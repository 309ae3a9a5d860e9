import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/cli.js';
import { sourceFiles } from './support/sources.js';

const SRC = join(REPO_ROOT, 'src');

/** The code of `file`, comments left out. */
function codeOf(file: string): string {
  return readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
}

/** Source files of src/ (relative paths) whose code, comments left out, matches `pattern`. */
function filesMatching(pattern: RegExp): string[] {
  return sourceFiles(SRC)
    .filter((file) => pattern.test(codeOf(file)))
    .map((file) => relative(REPO_ROOT, file));
}

/** The rooms of src/ from the top down (CONTRIBUTING.md, Layout): a room imports only rooms below it. */
const ROOMS = [
  'cli',
  'samplefeed',
  'http',
  'graphql',
  'ops',
  'webhooks',
  'sync',
  'db',
  'config',
  'files',
  'feed',
  'log',
];

/** The room of a path under src/ (`config.ts` is `config/`'s, `logger.ts` is `log/`'s), or undefined. */
function roomOf(path: string): string | undefined {
  const [top] = relative(SRC, path)
    .replace(/\.[jt]s$/, '')
    .split('/');
  const room = top === 'config' ? 'config' : top === 'logger' ? 'log' : top;
  return room !== undefined && ROOMS.includes(room) ? room : undefined;
}

/** Every relative import of src/ (static, `import type`, side-effect and `import()`) that runs up a room. */
function upwardImports(): string[] {
  return sourceFiles(SRC).flatMap((file) => {
    const from = roomOf(file);
    if (from === undefined) return [];
    return [...codeOf(file).matchAll(/(?:\bfrom|\bimport)\s*\(?\s*['"](\.[^'"]+)['"]/g)].flatMap(
      ([, spec]) => {
        const to = roomOf(resolve(dirname(file), spec as string));
        return to !== undefined && ROOMS.indexOf(to) < ROOMS.indexOf(from)
          ? [`${relative(REPO_ROOT, file)} (${from}/) imports ${spec} (${to}/)`]
          : [];
      },
    );
  });
}

describe('the command layer and config rooms (CONTRIBUTING.md, Layout)', () => {
  it('reads the environment only in src/config/', () => {
    expect(filesMatching(/process\.env/)).toEqual(['src/config/load.ts']);
  });

  it('ends the process or sets its exit code only in the entry point', () => {
    expect(filesMatching(/process\.exit/)).toEqual(['src/cli/main.ts']);
  });

  it('loads the configuration only in src/cli/', () => {
    const loading = filesMatching(/\bload(SampleFeed)?Config\(/).filter((f) => !f.startsWith('src/config'));
    expect(loading.every((file) => file.startsWith('src/cli/'))).toBe(true);
  });
});

describe('the import direction between rooms (CONTRIBUTING.md, Layout)', () => {
  it('knows the room of every source file of src/', () => {
    // src/types/ holds declaration files (.d.ts) only: no code, no room.
    const unlisted = sourceFiles(SRC).filter((file) => !file.endsWith('.d.ts') && roomOf(file) === undefined);
    expect(unlisted.map((file) => relative(REPO_ROOT, file))).toEqual([]);
  });

  it('imports only rooms below (db/ never imports sync/, sync/ never graphql/, ...)', () => {
    expect(upwardImports()).toEqual([]);
  });
});
