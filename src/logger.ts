import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * The structured logger: one JSON line per event on stderr (stdout stays free for command output).
 * Nothing logged may hold the upstream token: log redacted URLs only (feed/protocol/urls.ts redactUrl).
 */
export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino(
    {
      level,
      base: { ...bindings },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: ['token', '*.token', 'headers.authorization'], censor: '***' },
    },
    pino.destination({ fd: 2, sync: true }),
  );
}
