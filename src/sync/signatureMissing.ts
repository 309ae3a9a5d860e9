import type { Store } from '../db/client.js';
import { type FileKey, fileRow } from './fileRow.js';
import { SignatureError } from './verifier.js';

/**
 * How long an archive may be served without its `.asc` before its failure reads "signature missing
 * upstream": upstream publishes an archive without signature when gpg fails (FEED.md, Signatures),
 * and the `.asc` may land later, so a day of retries comes first.
 */
export const SIGNATURE_MISSING_AFTER_MS = 24 * 3_600_000;

/** The reason a file keeps once its `.asc` has been missing for {@link SIGNATURE_MISSING_AFTER_MS}. */
export const SIGNATURE_MISSING_UPSTREAM = 'signature missing upstream';

/**
 * After a file's failure was recorded FAILED: notes since when its `.asc` has been missing (404)
 * when `error` says so, and clears that time for any other failure. Once the `.asc` has been
 * missing for a day of retries the reason becomes {@link SIGNATURE_MISSING_UPSTREAM}, naming
 * `--accept-unsigned`. Returns the reason stored then, else undefined.
 */
export function recordSignatureFailure(
  store: Store,
  file: FileKey,
  error: unknown,
  now: Date,
): string | undefined {
  const missing = error instanceof SignatureError && error.kind === 'missing';
  const { table, where, args } = fileRow(file);
  const row = store.sqlite
    .prepare(
      `UPDATE ${table} SET signature_missing_since = CASE WHEN ? THEN coalesce(signature_missing_since, ?) END
       WHERE ${where} RETURNING signature_missing_since AS since`,
    )
    .get(missing ? 1 : 0, now.toISOString(), ...args) as { since: string | null } | undefined;
  if (!missing || !row?.since || now.getTime() - Date.parse(row.since) < SIGNATURE_MISSING_AFTER_MS) {
    return undefined;
  }
  const reason =
    `${SIGNATURE_MISSING_UPSTREAM}: no .asc since ${row.since}; to store it unverified, ` +
    `run livefeed sync --accept-unsigned ${error.file} (see the README, Signatures)`;
  store.sqlite.prepare(`UPDATE ${table} SET error = ? WHERE ${where}`).run(reason, ...args);
  return reason;
}
