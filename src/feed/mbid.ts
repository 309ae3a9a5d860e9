const MBID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * True when `value` is an MBID (a UUID in canonical text form, either case of hex digits). Used by
 * the writer to judge JSON dump lines and by GraphQL to judge `mbid` arguments.
 */
export function isMbid(value: unknown): value is string {
  return typeof value === 'string' && MBID_PATTERN.test(value);
}
