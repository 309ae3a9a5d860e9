import { expect, it } from 'vitest';
import { prettyLine } from '../../src/log/format.js';

/** The human-readable log line of a terminal (src/log/format.ts). */

const at = '2026-11-29T12:00:01.000Z';
const clock = new Date(at).toTimeString().slice(0, 8);

it('shows the message, then the event name and the other fields, without the fields every line has', () => {
  const json = JSON.stringify({
    level: 40,
    time: at,
    service: 'livefeed',
    pid: 1,
    hostname: 'h',
    event: 'webhook-rewound',
    webhook: 'hook',
    packet: 186100,
    msg: 'webhook hook: events of packet 186100 and later were stored behind its position',
  });
  expect(prettyLine(json, false)).toBe(
    `${clock} WARN  webhook hook: events of packet 186100 and later were stored behind its position  event=webhook-rewound webhook=hook packet=186100\n`,
  );
});

it('shows the event name in place of a missing message, and passes a line that is not JSON', () => {
  expect(prettyLine(JSON.stringify({ level: 30, time: at, event: 'sync-pass', stored: 3 }), false)).toBe(
    `${clock} INFO  sync-pass  stored=3\n`,
  );
  expect(prettyLine('plain text', false)).toBe('plain text\n');
});
