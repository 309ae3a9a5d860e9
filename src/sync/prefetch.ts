import { rmSync } from 'node:fs';
import type { FeedClient } from '../feed/client.js';
import { type StartedDownload, startDownload } from './streamedFetch.js';

/** Downloads begun ahead of the file being stored (issue 16: "bounded, e.g. two ahead"). */
export const PREFETCH_AHEAD = 2;

/**
 * Fetches the next files of a catch-up while the current one is stored: given the pass's files in
 * order ({@link plan}: JSON dumps and replication packets), each {@link take} of a file starts the
 * downloads of the next {@link PREFETCH_AHEAD} ones, each with its `.asc` once its body starts.
 * Only downloads overlap: each file is still verified and committed in its turn, in file order.
 * A prefetched file that fails (404, network, a cut body) fails when its step takes it, exactly as
 * if it were fetched then; a file that was skipped (a step not run) is dropped, its download
 * stopped (its kept bytes resume next time).
 */
export class Prefetcher {
  #order: string[] = [];
  #next = 0;
  readonly #started = new Map<string, { download: StartedDownload; stop: AbortController }>();

  constructor(
    private readonly client: FeedClient,
    private readonly dataDir: string,
    private readonly signal?: AbortSignal,
    private readonly ahead = PREFETCH_AHEAD,
  ) {}

  /** The files the pass will ask for, in order (feed-root-relative names). */
  plan(names: readonly string[]): void {
    this.#order = [...names];
    this.#next = 0;
  }

  /** The download begun for `name`, if any; starts the next ones. Files planned before it are dropped. */
  take(name: string): StartedDownload | undefined {
    const at = this.#order.indexOf(name, this.#next);
    if (at < 0) return undefined;
    for (const skipped of this.#order.slice(this.#next, at)) this.#drop(skipped);
    this.#next = at + 1;
    const taken = this.#started.get(name);
    this.#started.delete(name);
    this.#fill();
    return taken?.download ?? undefined;
  }

  /** Stops and removes every download not taken. */
  close(): void {
    for (const name of [...this.#started.keys()]) this.#drop(name);
    this.#order = [];
  }

  #fill(): void {
    for (let i = this.#next; i < this.#order.length && i < this.#next + this.ahead; i++) {
      const name = this.#order[i]!;
      if (this.#started.has(name) || this.signal?.aborted) continue;
      const stop = new AbortController();
      const signal = this.signal ? AbortSignal.any([this.signal, stop.signal]) : stop.signal;
      this.#started.set(name, { download: startDownload(this.client, name, this.dataDir, signal), stop });
    }
  }

  #drop(name: string): void {
    const started = this.#started.get(name);
    if (!started) return;
    this.#started.delete(name);
    started.stop.abort();
    void started.download.done.then(
      (result) => result.status === 'ok' && rmSync(result.path, { force: true }),
      () => {},
    );
  }
}
