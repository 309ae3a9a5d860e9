import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgress, formatSize, sizeUnit } from '../../src/ops/progress.js';
import { syncProgressObserver } from '../../src/ops/syncProgress.js';
import { testLogger } from '../support/harness.js';

function events(lines: string[]) {
  return lines.map(
    (l) => JSON.parse(l) as { event: string; done: number; total: number; percent: number; msg: string },
  );
}

/** A stream that says it is a terminal, with the cursor methods a progress bar uses. */
function fakeTerminal(): NodeJS.WriteStream & { text: () => string } {
  const stream = new PassThrough() as unknown as NodeJS.WriteStream & { text: () => string };
  const chunks: string[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
  Object.assign(stream, {
    isTTY: true,
    columns: 100,
    cursorTo: () => true,
    clearLine: () => true,
    clearScreenDown: () => true,
    moveCursor: () => true,
    text: () => chunks.join(''),
  });
  return stream;
}

describe('progress', () => {
  it('off a terminal: a structured log line per 10% and one at the end', () => {
    const lines: string[] = [];
    const progress = createProgress({
      label: 'import',
      total: 40,
      unit: 'files',
      logger: testLogger(lines),
      tty: false,
    });
    for (let i = 0; i < 40; i++) progress.tick(1, `file ${i}`);
    progress.stop();
    progress.stop();
    const logged = events(lines);
    expect(logged.every((e) => e.event === 'progress')).toBe(true);
    expect(logged.map((e) => e.percent)).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
    expect(logged[0]!.msg).toBe('import: 4/40 files (10%), file 3');
    expect(logged.at(-1)!.msg).toBe('import: 40/40 files (100%), done');
  });

  it('on a terminal: a bar with counts, and no log lines', () => {
    const lines: string[] = [];
    const stream = fakeTerminal();
    const progress = createProgress({
      label: 'sync',
      total: 5,
      unit: 'packets',
      logger: testLogger(lines),
      stream,
    });
    progress.tick(1, 'packet 1');
    progress.tick(4, 'packet 5');
    progress.stop();
    expect(stream.text()).toMatch(/sync \[[^\]]*\] 100% \| 5\/5 packets \| ETA .* \| packet 5/);
    expect(lines).toEqual([]);
  });

  it('sync: shows progress only for passes over several packets', () => {
    const lines: string[] = [];
    const observer = syncProgressObserver({ logger: testLogger(lines), tty: false, minPackets: 3 });
    observer.passStarted!({ latest: 11, from: 10, to: 11 });
    observer.packetVisited!(10);
    observer.packetVisited!(11);
    observer.passFinished!({ seconds: 1, outcome: 'ok' });
    expect(lines).toEqual([]);
    observer.passStarted!({ latest: 29, from: 10, to: 29 });
    for (let p = 10; p <= 29; p++) observer.packetVisited!(p);
    observer.passFinished!({ seconds: 1, outcome: 'ok' });
    const logged = events(lines);
    expect(logged.at(-1)).toMatchObject({ done: 20, total: 20, percent: 100 });
    expect(logged[0]!.msg).toBe('sync: 2/20 packets (10%), packet 11');
  });

  it('counts small files in kB and large ones in MB, and writes sizes as people read them', () => {
    expect(sizeUnit(1348)).toEqual({ name: 'kB', bytes: 1e3 });
    expect(sizeUnit(9_999_999).name).toBe('kB');
    expect(sizeUnit(10e6).name).toBe('MB');
    expect([512, 1957, 3_456_789, 1_200_000_000].map(formatSize)).toEqual([
      '512 B',
      '2.0 kB',
      '3.5 MB',
      '1.20 GB',
    ]);
  });
});
