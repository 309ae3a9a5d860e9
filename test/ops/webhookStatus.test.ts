import { expect, it } from 'vitest';
import type { WebhookState } from '../../src/db/webhookQueries.js';
import { webhookLines } from '../../src/ops/webhookStatus.js';

const state = (name: string, url: string): WebhookState => ({
  name,
  url,
  entities: null,
  mbids: null,
  cursor: null,
  deliveredPacket: 186110,
  attempts: 0,
  lastError: null,
  lastErrorAt: null,
  nextRetryAt: null,
  lastAttemptAt: '2026-05-01T10:00:00.000Z',
  lastSuccessAt: '2026-05-01T10:00:00.000Z',
  deliveredEvents: 12,
  deliveries: 3,
  failedDeliveries: 0,
  addedAt: '2026-05-01T09:00:00.000Z',
  retiredAt: null,
});

it('names a webhook by its name and URL, and one without a name (named by its URL) once', () => {
  const lines = webhookLines(
    [state('crm', 'https://a.example/in'), state('https://b.example/in', 'https://b.example/in')],
    200,
  );
  expect(lines.filter((line) => /^ {4}\S/.test(line))).toEqual([
    '    crm  https://a.example/in',
    '    https://b.example/in',
  ]);
});
