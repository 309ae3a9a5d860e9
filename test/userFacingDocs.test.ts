import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../src/cli/commands.js';
import { OPTIONS } from '../src/config/options.js';
import type { OptionRow } from '../src/config/row.js';
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

/** The rows of the README's configuration table (## Configuration): its flag and env cells. */
function configurationTable(): { flag: string; env: string }[] {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.split('\n## Configuration\n')[1]?.split('\n## ')[0] ?? '';
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| flag |'))
    .map((line) => {
      const [, flag = '', env = ''] = line.split('|');
      return { flag: flag.trim(), env: env.trim() };
    });
}

/** The backticked names (`--flag`, `ENV_NAME`) of a cell. */
const namesIn = (cell: string) => [...cell.matchAll(/`(--[a-z-]+|[A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!);

describe("the README's configuration table", () => {
  const table = configurationTable();

  it('has a row for every option row of the code: its flag and its env name(s), or (none)', () => {
    const missing = Object.entries(OPTIONS as Record<string, OptionRow>).flatMap(([key, row]) => {
      const flag = row.flag ? `\`${row.flag.split(' ')[0]}\`` : '(none)';
      const envs = row.env ? row.env.split(' / ').map((env) => `\`${env}\``) : ['(none)'];
      const found = table.some((r) => r.flag.includes(flag) && envs.every((env) => r.env.includes(env)));
      return found ? [] : [`${key}: ${flag} | ${envs.join(' / ')}`];
    });
    expect(table.length).toBeGreaterThan(0);
    expect(missing).toEqual([]);
  });

  it('names only flags and env names the code has', () => {
    const known = new Set<string>(['LIVEFEED_CACHE_DIR']);
    for (const row of Object.values(OPTIONS as Record<string, OptionRow>)) {
      if (row.flag) known.add(row.flag.split(' ')[0]!);
      for (const env of row.env?.split(' / ') ?? []) known.add(env);
    }
    for (const command of COMMANDS)
      for (const { flag } of command.flags ?? []) known.add(flag.split(' ')[0]!);
    // The single binary's launcher reads it before livefeed starts (scripts/sea/main.cjs).
    expect(readFileSync(join(REPO_ROOT, 'scripts/sea/main.cjs'), 'utf8')).toContain('LIVEFEED_CACHE_DIR');
    const unknown = table
      .flatMap((r) => [...namesIn(r.flag), ...namesIn(r.env)])
      .filter((n) => !known.has(n));
    expect(unknown).toEqual([]);
  });
});
