import { randomBytes } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';

/**
 * A JSON value that is already JSON text in UTF-8 (a stored JSON dump line): the `JSON` scalar
 * passes it through, and {@link rawJsonPlugin} writes the bytes into the response as they are, so a
 * page of changes is neither decoded, parsed, stringified nor encoded again per request. Any other
 * serializer (subscriptions, tests calling `execute`) gets the parsed value through `toJSON`, so the
 * answer is the same either way. `bytes` must be valid JSON (the ingest stores only lines that
 * `JSON.parse` accepts).
 */
export class RawJson {
  constructor(readonly bytes: Buffer) {}

  toJSON(): unknown {
    if (collected) {
      collected.push(this.bytes);
      return `${MARKER}${collected.length - 1}`;
    }
    return JSON.parse(this.bytes.toString('utf8'));
  }
}

// A marker no stored text can hold: NUL (written `\u0000` by JSON.stringify) and a per-process
// random nonce, then the index of the raw value.
const NONCE = randomBytes(12).toString('hex');
const MARKER = `\u0000${NONCE}:`;
const MARKER_IN_JSON = new RegExp(`"\\\\u0000${NONCE}:(\\d+)"`, 'g');

// Raw values met by RawJson.toJSON during the current serializeWithRawJson call (JSON.stringify is
// synchronous, so one slot suffices).
let collected: Buffer[] | null = null;

/**
 * `JSON.stringify(value)` with every {@link RawJson} in it written as its bytes, unparsed: a string
 * when there is none, else a Buffer of the UTF-8 JSON text. The Buffer is allocated once at its
 * final size and the stringified rest is encoded straight into it between the raw bytes, each copied
 * once: no Buffer per text segment and no concatenation (bench/RESULTS.md, page of real-sized
 * lines). Falls back to parsing when the markers do not add up (never expected).
 */
export function serializeWithRawJson(value: unknown): string | Buffer {
  const raw: Buffer[] = [];
  collected = raw;
  let text: string;
  try {
    text = JSON.stringify(value);
  } finally {
    collected = null;
  }
  if (raw.length === 0) return text;
  // Text segments between markers: [start, end) offsets into `text`, and their UTF-8 sizes.
  const cuts: number[] = [];
  let size = 0;
  let last = 0;
  let next = 0;
  MARKER_IN_JSON.lastIndex = 0;
  for (let match = MARKER_IN_JSON.exec(text); match; match = MARKER_IN_JSON.exec(text)) {
    if (Number(match[1]) !== next) return JSON.stringify(value);
    cuts.push(last, match.index);
    size += Buffer.byteLength(text.slice(last, match.index)) + raw[next++]!.length;
    last = match.index + match[0].length;
  }
  if (next !== raw.length) return JSON.stringify(value);
  cuts.push(last, text.length);
  size += Buffer.byteLength(text.slice(last));
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (let i = 0; i < cuts.length; i += 2) {
    at += out.write(text.slice(cuts[i], cuts[i + 1]), at);
    const bytes = raw[i / 2];
    if (bytes) at += bytes.copy(out, at);
  }
  return out;
}

/**
 * Yoga plugin: results are serialized by {@link serializeWithRawJson}, so stored JSON
 * (EntityChange.data) goes out as stored. Yoga's result processors call `stringify` and use the
 * value as a response body or inside a template string (batches, event streams); a Buffer of UTF-8
 * JSON text serves in both, so the string type of the hook is widened on purpose here.
 */
export function rawJsonPlugin(): Plugin {
  const stringify = serializeWithRawJson as (result: unknown) => string;
  return {
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result)) setResult(result.map((r) => ({ ...r, stringify })));
      else if (!(Symbol.asyncIterator in (result as object))) setResult({ ...result, stringify });
    },
  };
}
