import type { Awaitable } from '../db/awaitable.js';

/**
 * `read` shared by the metrics of one scrape: the registry starts every collect in one tick, the
 * first call starts the read and the others await the same promise; the next scrape reads again.
 */
export function oncePerScrape<T>(read: () => Awaitable<T>): () => Promise<T> {
  let reading: Promise<T> | undefined;
  return () => {
    reading ??= Promise.resolve(read()).finally(() => {
      setImmediate(() => {
        reading = undefined;
      });
    });
    return reading;
  };
}
