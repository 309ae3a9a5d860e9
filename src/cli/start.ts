import type { CommandImplementation } from './command.js';
import { startServer } from './serve.js';
import { openSession } from './session.js';
import { runSync } from './sync.js';

/**
 * `livefeed start`: sync (following) and serve in one process, on SQLite or PostgreSQL; the demo
 * without a token. Subscriptions learn of packets from the sync in the process.
 */
export const startCommand: CommandImplementation = {
  async run(ctx) {
    const session = await openSession('start', ctx);
    let server: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      server = await startServer(session);
      return await runSync(session, server.url);
    } finally {
      await server?.close();
      await session.close();
    }
  },
};
