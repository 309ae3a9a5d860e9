import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../src/feed/lineSplitter.js';

function split(chunks: Buffer[]): string[] {
  const lines: string[] = [];
  const splitter = new LineSplitter((line) => lines.push(line.toString('utf8')));
  for (const chunk of chunks) splitter.push(chunk);
  splitter.end();
  return lines;
}

describe('LineSplitter', () => {
  const text = 'a\u2028b\r\n\nc\u0085d\u2029é\n{"x":"😀"}\nlast';
  const expected = ['a\u2028b\r', '', 'c\u0085d\u2029é', '{"x":"😀"}', 'last'];

  it('splits on \\n only, wherever the chunks are cut (inside UTF-8 sequences too)', () => {
    const bytes = Buffer.from(text);
    expect(split([bytes])).toEqual(expected);
    for (let a = 0; a <= bytes.length; a++) {
      for (let b = a; b <= bytes.length; b++) {
        expect(split([bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)])).toEqual(expected);
      }
    }
  });

  it('passes no empty line after a trailing \\n, and empty lines before it', () => {
    expect(split([Buffer.from('x\n')])).toEqual(['x']);
    expect(split([Buffer.from('\n\nx\n')])).toEqual(['', '', 'x']);
    expect(split([])).toEqual([]);
  });

  it('joins a multi-megabyte line from many chunks once, with nothing left held', () => {
    const line = 'y'.repeat(5 * 1024 * 1024);
    const bytes = Buffer.from(`short\n${line}\nafter\n`);
    const chunks: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 65536) chunks.push(bytes.subarray(i, i + 65536));
    const lines: Buffer[] = [];
    const splitter = new LineSplitter((l) => lines.push(Buffer.from(l)));
    for (const chunk of chunks) splitter.push(chunk);
    expect(splitter.bufferedBytes).toBe(0);
    splitter.end();
    expect(lines.map((l) => l.length)).toEqual([5, line.length, 5]);
  });
});
