import type pg from 'pg';

/**
 * Runs `read` on one connection of `pool` in a REPEATABLE READ READ ONLY transaction, so that its
 * statements see one snapshot of the database, as db/snapshot.ts readSnapshot does on SQLite: a
 * read made of several statements (the change stream's frontier, its pruning bound, then its
 * changes and removals) never mixes two states of a writer committing in between. Takes no lock
 * that blocks the writer.
 * @returns what `read` resolves to
 * @throws what `read` throws (after ROLLBACK), or the driver's error
 */
export async function inPgReadSnapshot<T>(
  pool: pg.Pool,
  read: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  // A connection that breaks between statements emits 'error'; the next statement fails anyway.
  const ignore = () => {};
  client.on('error', ignore);
  let broken: Error | undefined;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const result = await read(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: Error) => {
      broken = rollbackError;
    });
    throw error;
  } finally {
    client.removeListener('error', ignore);
    client.release(broken);
  }
}
