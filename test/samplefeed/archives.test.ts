import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestKeyHome,
  DEFAULT_TIMESTAMP,
  jsonDumpMembers,
  pgTimestampSeconds,
  signFile,
  type TestKeyHome,
  verifyWithGpg,
  writeJsonDump,
  writeTarArchive,
} from '../support/archives.js';
import { runPiped } from '../support/processes.js';

let tmp: string;
let signer: TestKeyHome;
let verifier: TestKeyHome;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'lf-archives-'));
  signer = await createTestKeyHome();
  verifier = await createTestKeyHome({ secret: false });
});

afterAll(async () => {
  await signer?.close();
  await verifier?.close();
  await rm(tmp, { recursive: true, force: true });
});

/** `xz -dc file | tar <args>` with the real binaries. */
async function xzTar(file: string, args: string[]): Promise<string> {
  const out = await runPiped({ cmd: 'xz', args: ['-dc', file] }, { cmd: 'tar', args });
  return out!.toString('utf8');
}

async function member(file: string, name: string): Promise<Buffer> {
  return (await runPiped({ cmd: 'xz', args: ['-dc', file] }, { cmd: 'tar', args: ['-xOf', '-', name] }))!;
}

describe('writeJsonDump', () => {
  const awkward = ['{"id":"1","name":"a\u2028b\u2029c\u0085d\re"}', '{"id":"2","name":"plain"}'];

  it('writes upstream members in upstream order, owner 0, fixed mtime (checked with real xz and tar)', async () => {
    const built = await writeJsonDump(tmp, { packet: 186100, entity: 'release-group', lines: awkward });
    expect(built.feedPath).toBe('json-dumps/json-dump-186100/release-group.tar.xz');
    expect(built.path).toBe(join(tmp, 'json-dumps/json-dump-186100/release-group.tar.xz'));
    const names = (await xzTar(built.path, ['-tf', '-'])).trim().split('\n');
    expect(names).toEqual(jsonDumpMembers('release-group'));
    const verbose = (await xzTar(built.path, ['-tvf', '-', '--numeric-owner', '--full-time']))
      .trim()
      .split('\n');
    const mtime = new Date(pgTimestampSeconds(DEFAULT_TIMESTAMP)! * 1000)
      .toISOString()
      .slice(0, 19)
      .replace('T', ' ');
    for (const row of verbose) {
      expect(row).toMatch(/^-rw-r--r-- 0\/0 /);
      expect(row).toContain(mtime);
    }
  });

  it('writes the member contents, lines split by \\n only', async () => {
    const built = await writeJsonDump(tmp, {
      packet: 7,
      entity: 'area',
      lines: awkward,
      timestamp: '2026-05-12 03:00:01.5+00',
      schemaSequence: 32,
    });
    const text = async (name: string) => (await member(built.path, name)).toString('utf8');
    expect(await text('TIMESTAMP')).toBe('2026-05-12 03:00:01.5+00\n');
    expect(await text('REPLICATION_SEQUENCE')).toBe('7\n');
    expect(await text('SCHEMA_SEQUENCE')).toBe('32\n');
    expect(await text('JSON_DUMPS_SCHEMA_NUMBER')).toBe('1\n');
    expect(await text('mbdump/area')).toBe(`${awkward.join('\n')}\n`);
  });

  it('streams a multi-megabyte line from a generator', async () => {
    const big = `{"id":"big","name":"${'é'.repeat(1_500_000)}"}`;
    function* lines() {
      yield '{"id":"small"}';
      yield big;
    }
    const built = await writeJsonDump(tmp, { packet: 8, entity: 'release', lines: lines() });
    const data = await member(built.path, 'mbdump/release');
    expect(data.length).toBeGreaterThan(3_000_000);
    expect(data.equals(Buffer.from(`{"id":"small"}\n${big}\n`))).toBe(true);
  });

  it('gives equal bytes for equal inputs', async () => {
    const a = await writeJsonDump(join(tmp, 'a'), { packet: 9, entity: 'work', lines: awkward });
    const b = await writeJsonDump(join(tmp, 'b'), { packet: 9, entity: 'work', lines: awkward });
    expect((await readFile(a.path)).equals(await readFile(b.path))).toBe(true);
  });

  it('builds malformed dumps on request: other sequence, omitted and extra members', async () => {
    const built = await writeJsonDump(tmp, {
      packet: 10,
      entity: 'label',
      lines: [],
      replicationSequence: 11,
      omitMembers: ['README', 'COPYING'],
      extraMembers: [{ name: 'mbdump/extra', content: Buffer.from('x') }],
    });
    const names = (await xzTar(built.path, ['-tf', '-'])).trim().split('\n');
    expect(names).toEqual([
      'TIMESTAMP',
      'REPLICATION_SEQUENCE',
      'SCHEMA_SEQUENCE',
      'mbdump/label',
      'JSON_DUMPS_SCHEMA_NUMBER',
      'mbdump/extra',
    ]);
    expect((await member(built.path, 'REPLICATION_SEQUENCE')).toString()).toBe('11\n');
    expect((await member(built.path, 'mbdump/label')).length).toBe(0);
  });

  it('rejects unknown omitted members and unsafe member names', async () => {
    await expect(
      writeJsonDump(tmp, { packet: 1, entity: 'area', lines: [], omitMembers: ['NOPE'] }),
    ).rejects.toThrow(/json-dump-1\/area: cannot omit unknown member "NOPE"/);
    for (const name of ['../x', '/abs', './TIMESTAMP', 'a//b']) {
      await expect(
        writeTarArchive(join(tmp, 'bad.tar.xz'), [{ name, content: 'x' }], { compression: 'xz', mtime: 0 }),
      ).rejects.toThrow(/must be a relative path/);
    }
  });
});

describe('signFile', () => {
  it('writes an armored detached signature that the committed public key verifies', async () => {
    const file = join(tmp, 'signed.bin');
    await writeFile(file, Buffer.from([0, 1, 2, 255, 13, 10]));
    const signature = await signFile(file, signer);
    expect(signature).toBe(`${file}.asc`);
    expect(await readFile(signature, 'utf8')).toMatch(/^-----BEGIN PGP SIGNATURE-----\n/);
    await verifyWithGpg(file, signature, verifier);
    await writeFile(file, Buffer.from([0, 1, 2, 255, 13, 10, 0]));
    await expect(verifyWithGpg(file, signature, verifier)).rejects.toThrow(/BAD signature/);
  });

  it('gives equal signatures for a fixed signing time', async () => {
    const file = join(tmp, 'fixed.bin');
    await writeFile(file, 'same bytes');
    const time = pgTimestampSeconds(DEFAULT_TIMESTAMP)!;
    const first = await readFile(await signFile(file, signer.dir, { time }), 'utf8');
    const second = await readFile(await signFile(file, signer.dir, { time }), 'utf8');
    expect(second).toBe(first);
  });
});
