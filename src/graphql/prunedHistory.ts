import { type Awaitable, type Reads, thenAwaitable } from '../db/reads.js';
import { userError } from './errors.js';

/**
 * Reads `read()` of packet `packet` when its history is held. `--keep-history` deletes the JSON
 * dump changes of older packets, except each MBID's newest, and all their replication row changes,
 * so a page of them would have a silent gap (README, Bounded history).
 * @param what what is asked for, for the message, e.g. `artist changes`
 * @throws GraphQLError HISTORY_PRUNED (`extensions.historyFrom`, `extensions.packet`) for a packet
 *   before the pruning cutoff (thrown on SQLite, a rejection on PostgreSQL)
 */
export function unlessPruned<T>(
  reads: Pick<Reads, 'prunedBefore'>,
  packet: number,
  what: string,
  read: () => Awaitable<T>,
): Awaitable<T> {
  return thenAwaitable(reads.prunedBefore(), (historyFrom) => {
    if (historyFrom === undefined || packet >= historyFrom) return read();
    throw userError(
      'HISTORY_PRUNED',
      `the ${what} of packet ${packet} were pruned (--keep-history): this instance holds history from ` +
        `packet ${historyFrom} on; each entity's current version stays (entity, entities). See "Bounded history" in the README.`,
      { historyFrom, packet },
    );
  });
}
