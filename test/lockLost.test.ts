import { expect, it } from 'vitest';
import { failIfLockLost } from '../src/cli/session.js';
import { LockLostError } from '../src/sync/errors.js';

/**
 * `failIfLockLost` (src/cli/session.ts): work that a lost writer lock aborted ends as the
 * LockLostError (exit 4), whether it returned or threw; work a signal stopped first ends as it
 * ended (exit 0 for a stop); work that went on to its end is left as it was.
 */

const lostLock = () => {
  const lost = new AbortController();
  lost.abort(new LockLostError('its database connection broke (Connection terminated)'));
  return lost.signal;
};

it('turns work a lost lock ended, returned or thrown, into the LockLostError', async () => {
  const stopped = new AbortController().signal;
  await expect(failIfLockLost(lostLock(), stopped, async () => 0)).rejects.toThrow(
    /writer lock was lost: its database connection broke/,
  );
  const aborted = Object.assign(new Error('aborted'), { name: 'AbortError' });
  await expect(
    failIfLockLost(lostLock(), stopped, async () => {
      throw aborted;
    }),
  ).rejects.toBeInstanceOf(LockLostError);
});

it('leaves work a signal stopped first, and work that kept its lock, as they ended', async () => {
  const stop = new AbortController();
  stop.abort(new Error('stopped by SIGTERM'));
  await expect(failIfLockLost(lostLock(), stop.signal, async () => 0)).resolves.toBe(0);
  const held = new AbortController().signal;
  await expect(failIfLockLost(held, held, async () => 1)).resolves.toBe(1);
  await expect(
    failIfLockLost(held, held, async () => {
      throw new Error('a file failed');
    }),
  ).rejects.toThrow('a file failed');
});
