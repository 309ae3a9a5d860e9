import type { Statement } from 'better-sqlite3';
import type { EntityType } from '../feed/entities.js';
import type { Store } from './client.js';
import { changeKey } from './keys.js';
import type { ChangeRow } from './queries.js';
import { cachedStatement } from './statements.js';

const DATA_OF = 'SELECT CAST(data AS BLOB) AS data FROM changes WHERE id = ?';

/**
 * A change whose `data` is read on first use (one rowid seek), for reads that may not need it:
 * `resolve` mostly needs statuses and MBIDs, a search box only names. Copying each line out of
 * SQLite costs more than the seek it saves: a search page of 20 lines of 3 KB read with its lines
 * took 470–520 µs of CPU on the 1M-entity database, without them 290–350 µs (bench/RESULTS.md). A
 * class, so that every instance shares one shape and its getter (an object literal with a spread
 * and a getter per row cost `resolve` of 100 about 80 µs).
 */
export class LazyChange implements ChangeRow {
  readonly packet: number;
  readonly entity: EntityType;
  readonly position: number;
  #data: Buffer | undefined;

  /**
   * @param name the line's name when the read took it out in SQL (see {@link ChangeRow.name}); left
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

/**
 * The rows of an `aggregateChangeKeys` statement (db/queries.ts) in ascending `id`, each a
 * {@link LazyChange} of `store`: its line is read only if something asks for it.
 */
export function lazyChangeRows(store: Store, statement: Statement, ...params: unknown[]): LazyChange[] {
  const [ids, mbids] = statement.raw(true).get(...params) as [string | null, string];
  if (ids === null) return [];
  const mbidList = mbids.split(',');
  const rows = ids.split(',').map((id, i) => new LazyChange(store, Number(id), mbidList[i]!));
  // SQLite feeds the ordered subquery to the aggregates in order; sorted here should it not.
  for (let i = 1; i < rows.length; i++)
    if (rows[i]!.id < rows[i - 1]!.id) return rows.sort((a, b) => a.id - b.id);
  return rows;
}
