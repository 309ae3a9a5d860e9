import { writeAboveBottomLine } from './terminal.js';

/** How log events are written on stderr: JSON lines (machines) or human-readable lines (terminals). */
export type LogFormat = 'pretty' | 'json';

/** The default format: pretty when stderr is a terminal, JSON lines otherwise. */
export function defaultLogFormat(stream: { isTTY?: boolean } = process.stderr): LogFormat {
  return stream.isTTY === true ? 'pretty' : 'json';
}

const LEVELS: Record<number, { name: string; color: string }> = {
  10: { name: 'TRACE', color: '90' },
  20: { name: 'DEBUG', color: '36' },
  30: { name: 'INFO', color: '32' },
  40: { name: 'WARN', color: '33' },
  50: { name: 'ERROR', color: '31' },
  60: { name: 'FATAL', color: '41;97' },
};
/** Fields every line has or that the line shows in its own place. */
const SHOWN_APART = new Set(['level', 'time', 'msg', 'service', 'pid', 'hostname']);

/**
 * One pino JSON line as a human-readable line: `12:00:01 INFO  message  event=name key=value ...`
 * (local time; the event's name, or the name alone when there is no message, and the other fields
 * after the message). Lines that are not JSON pass unchanged.
 */
export function prettyLine(json: string, color: boolean): string {
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const level = LEVELS[event.level as number] ?? { name: String(event.level), color: '0' };
  const time = typeof event.time === 'string' ? new Date(event.time) : new Date();
  const clock = time.toTimeString().slice(0, 8);
  const paint = (code: string, text: string) => (color ? `\x1b[${code}m${text}\x1b[0m` : text);
  // The event's name first among the fields, so that the names the README gives can be searched for.
  const { event: name, ...rest } = event;
  const shown = event.msg === undefined ? rest : { event: name, ...rest };
  const fields = Object.entries(shown)
    .filter(([key, value]) => !SHOWN_APART.has(key) && value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  const tail = fields.length > 0 ? `  ${paint('90', fields.join(' '))}` : '';
  return `${paint('90', clock)} ${paint(level.color, level.name.padEnd(5))} ${event.msg ?? event.event ?? ''}${tail}\n`;
}

/**
 * A synchronous pino destination on `stream` (stderr): JSON lines or {@link prettyLine}s, each
 * in colour on a terminal when `colorAllowed` (not NO_COLOR), written above a progress bar when one is shown (src/log/terminal.ts). Synchronous, so nothing is
 * lost at exit and it works inside the single binary (no worker-thread transport).
 */
export function logDestination(
  format: LogFormat,
  colorAllowed: boolean,
  stream: NodeJS.WriteStream = process.stderr,
): { write(line: string): void } {
  const color = stream.isTTY === true && colorAllowed;
  return {
    write: (line) => writeAboveBottomLine(stream, format === 'pretty' ? prettyLine(line, color) : line),
  };
}
