import { DEFAULT_FRESHNESS } from '../../src/ops/freshness.js';
import { collectStatus, renderStatus } from '../../src/ops/statusReport.js';
import type { TestDatabase } from './stores.js';

/** What `livefeed status` prints for `db` at `now`, upstream not asked (the sync tests' view). */
export async function statusScreen(db: TestDatabase, now: Date): Promise<string> {
  return renderStatus(
    await collectStatus(db.reads, {
      display: db.store.display,
      demo: false,
      upstream: { kind: 'not-asked', reason: 'test' },
      thresholds: DEFAULT_FRESHNESS,
      now,
    }),
  );
}
