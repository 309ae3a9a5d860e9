const MBID_SOURCE = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
const MBID_PATTERN = new RegExp(MBID_SOURCE, 'i');
const LOWER_CASE_MBID_PATTERN = new RegExp(MBID_SOURCE);

/**
 * True when `value` is an MBID (a UUID in canonical text form, either case of hex digits). Used by
 * the writer to judge JSON dump lines and by GraphQL to judge `mbid` arguments.
 */
export function isMbid(value: unknown): value is string {
  return typeof value === 'string' && MBID_PATTERN.test(value);
}

/**
 * True when `value` is an MBID written in lower case, the form livefeed stores and answers: such a
 * value needs no lower-casing (GraphQL's `checkMbids` takes a list of them as it is).
 */
export function isLowerCaseMbid(value: unknown): value is string {
  return typeof value === 'string' && LOWER_CASE_MBID_PATTERN.test(value);
}
