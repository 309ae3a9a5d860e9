import pino, { type Logger } from 'pino';
import { type LogFormat, logDestination } from './log/format.js';

export type { Logger };

/**
 * The structured logger: one JSON line per event on stderr (stdout stays free for command output),
 * or one human-readable line per event with `format` `pretty` (the default on a terminal), in
 * colour on a terminal unless `color` is false (NO_COLOR, read by src/config).
 * Nothing logged may hold the upstream token: log redacted URLs only (feed/protocol/urls.ts redactUrl).
 */
export function createLogger(
  level: string,
  bindings: Record<string, unknown> = {},
  format?: LogFormat,
  color = true,
): Logger {
  return pino(
    {
      level,
      base: { ...bindings },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: ['token', '*.token', 'headers.authorization'], censor: '***' },
    },
    format ? logDestination(format, color) : pino.destination({ fd: 2, sync: true }),
  );
}
