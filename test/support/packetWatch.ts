import { openStore } from '../../src/db/client.js';
import { watchPostgresPackets } from '../../src/db/postgres/listen.js';
import { type PacketEvents, watchCompletedPackets } from '../../src/ops/events.js';
import type { TestDatabase } from './stores.js';

/** A server's database watch over `db` (`serve` alone): SQLite's polling or PostgreSQL's LISTEN. */
export async function watchOf(kind: 'sqlite' | 'postgres', db: TestDatabase, events: PacketEvents) {
  if (kind === 'sqlite') {
    const reader = openStore(db.db);
    const stop = watchCompletedPackets(reader, events, { intervalMs: 10 });
    return async () => {
      stop();
      reader.close();
    };
  }
  const watch = watchPostgresPackets({ connectionString: db.db, display: 'subscription' }, events);
  await watch.listening;
  return () => watch.stop();
}
