/**
 * Which kept archives stay under `<dataDir>/files` (`--keep-files`, issue 4, Files and links):
 * every one (`all`), those of the newest `count` packets by number (packets are hourly, so `48` is
 * about two days), or those whose packet TIMESTAMP (fetch time when unknown) is at most `maxAgeMs`
 * milliseconds old.
 */
export type KeepFiles =
  | { kind: 'all' }
  | { kind: 'packets'; count: number }
  | { kind: 'age'; maxAgeMs: number };

const AGE_UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/**
 * Parses a `--keep-files` value: `all`, a packet count (`48`, `0` keeps none), or an age: a whole
 * number with `m` (minutes), `h`, `d` or `w` (`7d`).
 * @throws Error saying what is accepted.
 */
export function parseKeepFiles(text: string): KeepFiles {
  const value = text.trim().toLowerCase();
  if (value === 'all') return { kind: 'all' };
  if (/^\d+$/.test(value)) return { kind: 'packets', count: Number(value) };
  const age = /^(\d+)([mhdw])$/.exec(value);
  if (age) return { kind: 'age', maxAgeMs: Number(age[1]) * AGE_UNITS[age[2]!]! };
  throw new Error('must be all, a number of packets (48) or an age (36h, 7d, 2w)');
}
