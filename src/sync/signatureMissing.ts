import type { Store } from '../db/client.js';
import { type FileKey, type FileRow, fileRow } from './fileRow.js';
import { SignatureError } from './verifier.js';

/**
 * How long an archive may be served without its `.asc` before its failure reads "signature missing
 * upstream": upstream publishes an archive without signature when gpg fails (FEED.md, Signatures),
 * and the `.asc` may land later, so a day of retries comes first.
 */
export const SIGNATURE_MISSING_AFTER_MS = 24 * 3_600_000;

/** The reason a file keeps once its `.asc` has been missing for {@link SIGNATURE_MISSING_AFTER_MS}. */
export const SIGNATURE_MISSING_UPSTREAM = 'signature missing upstream';

/** The statements of this module with `?` parameters, shared with sync/postgres/fileRecords.ts. */
export const SIGNATURE_MISSING_SQL = {
  /** (missing as 1/0, now, ...key) → since. */
  note: ({ table, where }: FileRow) =>
    `UPDATE ${table} SET signature_missing_since = CASE WHEN ? THEN coalesce(signature_missing_since, ?) END
       WHERE ${where} RETURNING signature_missing_since AS since`,
  /** (error, ...key). */
  setReason: ({ table, where }: FileRow) => `UPDATE ${table} SET error = ? WHERE ${where}`,
};

/** True when `error` says the file's `.asc` is missing (404). */
export function signatureMissing(error: unknown): error is SignatureError {
  return error instanceof SignatureError && error.kind === 'missing';
}

/**
 * The reason a file keeps when its `.asc`, missing since `since` (ISO 8601), has been missing for
 * {@link SIGNATURE_MISSING_AFTER_MS}; undefined before that, or when `error` is another failure.
 */
export function signatureMissingReason(
  error: unknown,
  since: string | null | undefined,
  now: Date,
): string | undefined {
  if (!signatureMissing(error) || !since || now.getTime() - Date.parse(since) < SIGNATURE_MISSING_AFTER_MS) {
    return undefined;
  }
  return (
    `${SIGNATURE_MISSING_UPSTREAM}: no .asc since ${since}; to store it unverified, ` +
    `run livefeed sync --accept-unsigned ${error.file} (see the README, Integrity and reliability)`
  );
}

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
  const row = fileRow(file);
  const noted = store.sqlite
    .prepare(SIGNATURE_MISSING_SQL.note(row))
    .get(signatureMissing(error) ? 1 : 0, now.toISOString(), ...row.args) as
    | { since: string | null }
    | undefined;
  const reason = signatureMissingReason(error, noted?.since, now);
  if (reason) store.sqlite.prepare(SIGNATURE_MISSING_SQL.setReason(row)).run(reason, ...row.args);
  return reason;
}
