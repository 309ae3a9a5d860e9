/**
 * Whether an error says the database server cannot be reached or cannot answer now, as opposed to
 * a fault of the request or of livefeed. No driver is imported here, so that any room may ask
 * (a SQLite `serve` never loads the PostgreSQL driver).
 */

/** Node's network errors of a connection that cannot be made or broke. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'EADDRNOTAVAIL',
]);
/**
 * SQLSTATEs of a server that cannot answer now: connection exceptions (08), shutdown and start-up
 * (57P01-57P03), too many connections (53300), a refused login (28), no such database (3D000).
 */
const UNAVAILABLE_STATE = /^(08...|57P0[123]|53300|28...|3D000)$/;
/** The PostgreSQL driver's own errors when a connection breaks or cannot be made (they carry no code). */
const LOST_CONNECTION =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/** True when `error` says the server cannot be reached or cannot answer: another server may, or later. */
export function serverUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return NETWORK_CODES.has(code) || UNAVAILABLE_STATE.test(code);
  return LOST_CONNECTION.test(error.message);
}
