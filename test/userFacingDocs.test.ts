import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/cli.js';
import { sourceFiles } from './support/sources.js';

/** String literals of a TypeScript source (quotes and template literals), comments left out. */
function stringLiterals(text: string): string[] {
  const withoutComments = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return [...withoutComments.matchAll(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g)].map(
    (m) => m[0],
  );
}

describe('errors and docs cite only what a user has', () => {
  it('no user-visible string in src/ cites FEED.md (a file users do not have)', () => {
    const citing = sourceFiles(join(REPO_ROOT, 'src')).flatMap((file) =>
      stringLiterals(readFileSync(file, 'utf8'))
        .filter((s) => s.includes('FEED.md'))
        .map((s) => `${file}: ${s}`),
    );
    expect(citing).toEqual([]);
  });

  it('the README does not cite FEED.md', () => {
    expect(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')).not.toContain('FEED.md');
  });

  it('every file CONTRIBUTING.md and README.md link to is inside the repository and exists', () => {
    for (const doc of ['CONTRIBUTING.md', 'README.md']) {
      const text = readFileSync(join(REPO_ROOT, doc), 'utf8');
      const targets = [
        ...[...text.matchAll(/\]\(([^)#\s]+)\)/g)].map((m) => m[1]!),
        ...[...text.matchAll(/`(\.\.?\/[^`\s]+\.md)`/g)].map((m) => m[1]!),
      ].filter((t) => !/^https?:/.test(t));
      for (const target of targets) {
        const path = resolve(dirname(join(REPO_ROOT, doc)), target);
        expect(path.startsWith(REPO_ROOT), `${doc} points outside the repository: ${target}`).toBe(true);
        expect(existsSync(path), `${doc} links to a missing file: ${target}`).toBe(true);
      }
    }
  });
});
