import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/cli.js';
import { sourceFiles } from './support/sources.js';

const SRC = join(REPO_ROOT, 'src');

/** Source files of src/ (relative paths) whose code, comments left out, matches `pattern`. */
function filesMatching(pattern: RegExp): string[] {
  return sourceFiles(SRC)
    .filter((file) => {
      const code = readFileSync(file, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      return pattern.test(code);
    })
    .map((file) => relative(REPO_ROOT, file));
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
