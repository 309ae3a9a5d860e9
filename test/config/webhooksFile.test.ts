import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseWebhooks } from '../../src/config/webhooksFile.js';
import { ConfigError, loadConfig, prepareConfig } from '../../src/config.js';
import { startCli } from '../support/cli.js';
import { tempDir } from '../support/harness.js';

// What the CLI does before loading a configuration that names a webhooks file.
beforeAll(() => prepareConfig('sync', { webhooksFile: 'hooks.yaml' }, {}));

const SECRET = 'a-secret-of-32-characters-123456';
const MBID = 'B8A7C51F-362C-4DCB-A259-BC6E0095F0A6';

function problems(text: string): string[] {
  try {
    parseWebhooks(text);
  } catch (error) {
    return (error as Error).message.split('\n');
  }
  throw new Error('expected the file to be refused');
}

describe('the webhooks file', () => {
  it('reads YAML with both filters, GraphQL entity type names and defaults', () => {
    const specs = parseWebhooks(
      [
        '- url: https://user:pw@hooks.example.org/livefeed?key=k#x',
        `  secret: ${SECRET}`,
        '  entities: [ARTIST, RELEASE_GROUP, ARTIST]',
        `  mbids: ["${MBID}"]`,
        '- url: http://127.0.0.1:9000/in',
        `  secret: "${SECRET}"`,
        '  name: local',
        '  batchSize: 500',
      ].join('\n'),
    );
    expect(specs).toEqual([
      {
        name: 'https://hooks.example.org/livefeed',
        url: 'https://user:pw@hooks.example.org/livefeed?key=k#x',
        displayUrl: 'https://hooks.example.org/livefeed',
        secret: SECRET,
        entities: ['artist', 'release-group'],
        mbids: [MBID.toLowerCase()],
        batchSize: 100,
      },
      {
        name: 'local',
        url: 'http://127.0.0.1:9000/in',
        displayUrl: 'http://127.0.0.1:9000/in',
        secret: SECRET,
        entities: null,
        mbids: null,
        batchSize: 500,
      },
    ]);
  });

  it('reads JSON', () => {
    const specs = parseWebhooks(
      JSON.stringify([{ url: 'https://a.example/x', secret: SECRET, entities: ['WORK'] }]),
    );
    expect(specs.map((s) => [s.name, s.entities])).toEqual([['https://a.example/x', ['work']]]);
  });

  it('names every problem with its index, field and line, never the secret', () => {
    const lines = problems(
      [
        '- url: https://a.example/x', // 1
        `  secret: ${SECRET}`, // 2
        '  entities: [ARTIST, artists]', // 3
        '  mbid: []', // 4
        '- url: not-a-url-but-maybe-a-secret', // 5
        '  secret: short-secret-1', // 6
        '  mbids: [nope]', // 7
        '  batchSize: 501', // 8
        '- secret: another-secret-long-enough', // 9
        '- url: https://a.example/x', // 10
        `  secret: ${SECRET}`, // 11
        '- 7', // 12
        '- url: https://b.example/y', // 13
        `  secret: ${SECRET}`, // 14
        '  entities: []', // 15
      ].join('\n'),
    );
    expect(lines).toEqual([
      '[0].mbid (line 4): unknown field "mbid" (expected url, secret, entities, mbids, name, batchSize)',
      '[0].entities[1] (line 3): unknown entity type "artists" (expected one of AREA, ARTIST, EVENT, INSTRUMENT, LABEL, PLACE, RECORDING, RELEASE, RELEASE_GROUP, SERIES, WORK)',
      '[1].url (line 5): must be an http or https URL (value not shown)',
      '[1].secret (line 6): must be a text of at least 16 characters (value not shown)',
      '[1].mbids[0] (line 7): not an MBID: "nope"',
      '[1].batchSize (line 8): must be a whole number from 1 to 500',
      '[2].url (line 9): missing: where to POST events (http or https)',
      '[4] (line 12): must be a mapping { url, secret, entities, mbids }',
      '[5].entities (line 15): an empty list matches nothing: leave the field out to match every event',
    ]);
    const all = lines.join('\n');
    for (const secret of [
      SECRET,
      'short-secret-1',
      'another-secret-long-enough',
      'not-a-url-but-maybe-a-secret',
    ])
      expect(all).not.toContain(secret);
  });

  it('asks for quotes around a secret YAML reads as a number', () => {
    expect(problems('- url: https://a.example/x\n  secret: 12345678901234567890\n')).toEqual([
      '[0].secret (line 2): is read as a number or boolean, not a text: quote it (value not shown)',
    ]);
    expect(parseWebhooks('- url: https://a.example/x\n  secret: "12345678901234567890"\n')).toHaveLength(1);
  });

  it('never shows a secret written where it does not belong: an alias, a field name, a list entry', () => {
    const alias = problems(`- url: https://a.example/x\n  secret: *${SECRET}\n`);
    expect(alias).toEqual([
      'a value starting with * or & is read as a YAML alias or anchor (value not shown): put the value in quotes',
    ]);
    const misplaced = problems(
      [
        '- url: https://a.example/x',
        `  ${SECRET}: 1`,
        `  secret: ${SECRET}`,
        `  entities: [${SECRET}]`,
        `  mbids: ["${SECRET}"]`,
      ].join('\n'),
    );
    expect(misplaced).toEqual([
      '[0] (line 1): unknown field (name not shown) (expected url, secret, entities, mbids, name, batchSize)',
      '[0].entities[0] (line 4): unknown entity type (value not shown) (expected one of AREA, ARTIST, EVENT, INSTRUMENT, LABEL, PLACE, RECORDING, RELEASE, RELEASE_GROUP, SERIES, WORK)',
      '[0].mbids[0] (line 5): not an MBID: (value not shown)',
    ]);
    expect([...alias, ...misplaced].join('\n')).not.toContain(SECRET);
  });

  it('refuses two webhooks of one name (the default name is the URL without credentials or query)', () => {
    const twice = `- url: https://a.example/x?k=1\n  secret: ${SECRET}\n- url: https://u:p@a.example/x\n  secret: ${SECRET}\n`;
    expect(problems(twice)).toEqual([
      '[1] (line 3): names the same webhook as [0] ("https://a.example/x"): give one of them a distinct name (its cursor is kept under its name)',
    ]);
    const named = parseWebhooks(`${twice.replace('k=1', 'k=1\n  name: first')}`);
    expect(named.map((s) => s.name)).toEqual(['first', 'https://a.example/x']);
  });

  it('refuses a file that is not a list, and syntax errors with their line but not the text around them', () => {
    expect(problems(`url: https://a.example/x\nsecret: ${SECRET}\n`)).toEqual([
      'must be a list of webhooks ({ url, secret, entities, mbids }); see the README, Webhooks',
    ]);
    const syntax = problems(`- url: https://a.example/x\n  secret: "${SECRET}\n  entities: [ARTIST\n`);
    expect(syntax.length).toBeGreaterThan(0);
    expect(syntax[0]).toMatch(/^line \d+, column \d+: not valid YAML or JSON \([A-Z_]+: /);
    expect(syntax.join('\n')).not.toContain(SECRET);
    const json = problems(`[{"url": "https://a.example/x", "secret": "${SECRET}",}`);
    expect(json[0]).toMatch(/^line 1, column \d+: not valid YAML or JSON/);
    expect(json.join('\n')).not.toContain(SECRET);
  });

  it('LIVEFEED_WEBHOOKS_FILE and --webhooks-file: loaded with the config, errors name the file (exit 2)', async () => {
    const { dir } = await tempDir();
    const good = join(dir, 'hooks.yaml');
    writeFileSync(good, `- url: https://a.example/x\n  secret: ${SECRET}\n`);
    expect(loadConfig({}, {}).webhooks).toEqual([]);
    expect(loadConfig({}, { LIVEFEED_WEBHOOKS_FILE: good }).webhooks.map((w) => w.name)).toEqual([
      'https://a.example/x',
    ]);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify([{ url: 'https://a.example/x', secret: SECRET, entities: ['NOPE'] }]));
    expect(() => loadConfig({ webhooksFile: bad }, { LIVEFEED_WEBHOOKS_FILE: good })).toThrow(ConfigError);
    expect(() => loadConfig({ webhooksFile: bad }, {})).toThrow(
      `--webhooks-file ${bad}: [0].entities[0] (line 1): unknown entity type "NOPE"`,
    );
    const missing = join(dir, 'missing.yaml');
    expect(() => loadConfig({}, { LIVEFEED_WEBHOOKS_FILE: missing })).toThrow(
      `LIVEFEED_WEBHOOKS_FILE=${missing}: cannot read the webhooks file: ENOENT`,
    );
    // An environment shared with `serve` and `status`: those commands take no webhooks and ignore it.
    for (const command of ['serve', 'status', 'import', 'bootstrap'] as const) {
      expect(loadConfig({}, { LIVEFEED_WEBHOOKS_FILE: missing }, command).webhooks).toEqual([]);
    }
    expect(() => loadConfig({}, { LIVEFEED_WEBHOOKS_FILE: missing }, 'sync')).toThrow(/missing\.yaml/);
  });

  it('a process whose command takes no webhooks runs with LIVEFEED_WEBHOOKS_FILE set (YAML not loaded)', async () => {
    const { dir } = await tempDir();
    const hooks = join(dir, 'hooks.yaml');
    writeFileSync(hooks, `- url: https://a.example/x\n  secret: ${SECRET}\n`);
    const run = startCli(['status', '--offline', '--db', join(dir, 'empty.db')], {
      LIVEFEED_WEBHOOKS_FILE: hooks,
    });
    const exit = await run.exited;
    expect(run.stderr.join('\n')).not.toMatch(/invalid configuration|YAML parser/);
    expect(exit.code).not.toBe(2);
  });
});
