import type { EntityType } from '../feed/entities.js';
import type { Store } from './client.js';
import { changeKey } from './keys.js';
import { cachedStatement } from './statements.js';

const DATA_OF = 'SELECT CAST(data AS BLOB) AS data FROM changes WHERE id = ?';

/**
 * A change whose `data` is read on first use (one rowid seek), for reads that may not need it:
 * `resolve` mostly needs statuses and MBIDs, a search box only names. Copying each line out of
 * SQLite costs more than the seek it saves: a search page of 20 lines of 3 KB read with its lines
 * took 470–520 µs of CPU on the 1M-entity database, without them 290–350 µs (bench/RESULTS.md). A
 * class, so that every instance shares one shape and its getter (an object literal with a spread
 * and a getter per row cost `resolve` of 100 about 80 µs). A `ChangeRow` (db/queries.ts) by its
 * shape: that module builds these, so this one does not import it.
 */
export class LazyChange {
  readonly packet: number;
  readonly entity: EntityType;
  readonly position: number;
  #data: Buffer | undefined;

  /**
   * @param name the line's name when the read took it out in SQL (see `ChangeRow.name`, db/queries.ts); left
   * undefined otherwise, so that `EntityChange.name` parses the line.
   */
  constructor(
    private readonly store: Store,
    readonly id: number,
    readonly mbid: string,
    readonly name?: string | null,
  ) {
    const key = changeKey(id);
    this.packet = key.packet;
    this.entity = key.entity;
    this.position = key.position;
  }

  /**
   * The line's bytes, read once.
   * @throws Error when the change is no longer held (history pruned between the read that found it
   * and this one).
   */
  get data(): Buffer {
    if (this.#data === undefined) {
      const row = cachedStatement(this.store, DATA_OF).get(this.id) as { data: Buffer } | undefined;
      if (row === undefined) throw new Error(`change ${this.id} of ${this.mbid} is no longer held`);
      this.#data = row.data;
    }
    return this.#data;
  }
}
