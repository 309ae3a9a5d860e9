const PG_TIMESTAMPTZ = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(\.\d+)?([+-]\d{2})(?::?(\d{2}))?$/;

/**
 * Converts PostgreSQL timestamptz text (FEED.md, JSON dump archives: `2026-05-11 21:14:26.878674+00`)
 * to ISO 8601 UTC with exactly six fraction digits (`2026-05-11T21:14:26.878674Z`), so that the
 * stored texts sort in time order.
 * @throws Error quoting the text when it is not in that form.
 */
export function parsePgTimestamp(text: string): string {
  const match = PG_TIMESTAMPTZ.exec(text.trim());
  if (!match) throw new Error(`not a PostgreSQL timestamp: ${JSON.stringify(text.slice(0, 80))}`);
  const [, date, time, fraction = '', offsetHours, offsetMinutes = '00'] = match;
  const base = new Date(`${date}T${time}${offsetHours}:${offsetMinutes}`);
  if (Number.isNaN(base.getTime())) throw new Error(`not a valid timestamp: ${JSON.stringify(text)}`);
  const iso = base.toISOString().slice(0, 19);
  return `${iso}.${fraction.slice(1, 7).padEnd(6, '0')}Z`;
}
