import type pg from 'pg';
import {
  type FeedRewrite,
  parseRewrites,
  REWRITES_KEY,
  rewritesText,
  SERVED_KEY,
  withRewrite,
} from '../../db/feedRewrites.js';
import { LATEST_PACKET_SQL } from '../../db/latestPacket.js';
import { feedFrontierOn } from '../../db/postgres/changeFeedReads.js';
import { type PgQueryable, pgRow, pgRows } from '../../db/postgres/sql.js';

/**
 * db/feedServed.ts on PostgreSQL: the highest frontier served and the rewrites of the change
 * stream (db/feedRewrites.ts), with the same meta keys and rules, on the writer's transaction.
 */

async function readMeta(on: PgQueryable, key: string): Promise<string | undefined> {
  return (await pgRow<{ value: string }>(on, LATEST_PACKET_SQL.readMeta, [key]))?.value;
}

/** The rewrites of the change stream recorded in the database (db/feedRewrites.ts). */
export async function readRewritesPostgres(on: PgQueryable): Promise<readonly FeedRewrite[]> {
  return parseRewrites(await readMeta(on, REWRITES_KEY));
}

/** db/feedServed.ts noteServedFrontier on `client`, inside the caller's transaction. */
export async function noteServedFrontierOn(client: pg.ClientBase): Promise<number | undefined> {
  const stored = await readMeta(client, SERVED_KEY);
  const served = stored === undefined ? undefined : Number(stored);
  const frontier = await feedFrontierOn(client);
  if (frontier === undefined || (served !== undefined && frontier <= served)) return served;
  await pgRows(client, LATEST_PACKET_SQL.putMeta, [SERVED_KEY, String(frontier)]);
  return frontier;
}

/** db/feedServed.ts recordEventsWrite on `client`, inside the transaction that stores the events. */
export async function recordEventsWriteOn(client: pg.ClientBase, packet: number): Promise<void> {
  if (!(await storesBehindServedOn(client, packet))) return;
  const rewrites = withRewrite(parseRewrites(await readMeta(client, REWRITES_KEY)), packet);
  await pgRows(client, LATEST_PACKET_SQL.putMeta, [REWRITES_KEY, rewritesText(rewrites)]);
}

/** db/feedServed.ts storesBehindServed on `client`, inside the caller's transaction. */
export async function storesBehindServedOn(client: pg.ClientBase, packet: number): Promise<boolean> {
  const served = await noteServedFrontierOn(client);
  return served !== undefined && packet <= served;
}
