import type { Logger } from '../logger.js';
import type { SyncObserver } from '../sync/observer.js';
import { createProgress, type Progress } from './progress.js';

/** Options of {@link syncProgressObserver}. */
export interface SyncProgressOptions {
  logger: Logger;
  /** Passes over fewer packets show no progress (the hourly follow pass). Default 3. */
  minPackets?: number;
  /** Passed to createProgress: force a bar (true) or plain lines (false). */
  tty?: boolean;
  stream?: NodeJS.WriteStream;
}

/** Shows a progress bar (or plain log lines off a terminal) for sync passes over many packets. */
export function syncProgressObserver(options: SyncProgressOptions): SyncObserver {
  let progress: Progress | undefined;
  return {
    passStarted: ({ from, to }) => {
      progress?.stop();
      progress = undefined;
      const total = to - from + 1;
      if (total < (options.minPackets ?? 3)) return;
      progress = createProgress({
        label: 'sync',
        total,
        unit: 'packets',
        logger: options.logger,
        tty: options.tty,
        stream: options.stream,
      });
    },
    packetVisited: (packet) => progress?.tick(1, `packet ${packet}`),
    passFinished: () => {
      progress?.stop();
      progress = undefined;
    },
  };
}
