import { describe, expect, it } from 'vitest';
import { RawJson, serializeWithRawJson } from '../../../src/graphql/plugins/rawJson.js';

describe('RawJson', () => {
  const line = '{"id": "x", "name": "Ümlaut \u2028 \\"quoted\\"", "n": [1, 2.5]}';

  it('writes stored JSON text into the response as it is, the rest as JSON.stringify does', () => {
    const result = {
      data: {
        nodes: [
          { mbid: 'a', data: new RawJson(Buffer.from(line)) },
          { mbid: 'b\u0000', data: null },
        ],
      },
    };
    const out = serializeWithRawJson(result);
    expect(Buffer.isBuffer(out)).toBe(true);
    expect(out.toString()).toBe(
      `{"data":{"nodes":[{"mbid":"a","data":${line}},{"mbid":"b\\u0000","data":null}]}}`,
    );
    expect(JSON.parse(out.toString())).toEqual(JSON.parse(JSON.stringify(result)));
  });

  it('is plain JSON.stringify without raw values, and parses for any other serializer', () => {
    expect(serializeWithRawJson({ a: [1, 'x'] })).toBe('{"a":[1,"x"]}');
    expect(JSON.stringify({ data: new RawJson(Buffer.from(line)) })).toBe(
      JSON.stringify({ data: JSON.parse(line) }),
    );
  });

  it('keeps many raw values in order', () => {
    const values = Array.from({ length: 30 }, (_, i) => new RawJson(Buffer.from(`{"i":${i}}`)));
    expect(JSON.parse(serializeWithRawJson(values).toString())).toEqual(values.map((_, i) => ({ i })));
  });
});
