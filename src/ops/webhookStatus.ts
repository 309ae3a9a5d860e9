import type { WebhookState } from '../db/webhookQueries.js';

function clip(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

/** The lines under a webhook's name: how it stands, and its last error while it fails. */
function describe(w: WebhookState): string[] {
  const through = w.deliveredPacket === null ? 'nothing yet' : `through packet ${w.deliveredPacket}`;
  const delivered = `${w.deliveredEvents} events delivered (${through})`;
  if (w.attempts === 0) return [`ok: ${delivered}; last success ${w.lastSuccessAt ?? 'never'}`];
  return [
    `FAILING: attempts ${w.attempts}, next retry ${w.nextRetryAt ?? '-'}`,
    delivered,
    `last error at ${w.lastErrorAt}: ${(w.lastError ?? '').replace(/\s+/g, ' ')}`,
  ];
}

/**
 * The `webhooks` lines of `livefeed status` (README, Webhooks): per webhook its URL (without
 * credentials or query), failed attempts, next retry and last error, or what it delivered; retired
 * ones (no longer in the webhooks file) after. Empty when no webhook was ever configured.
 */
export function webhookLines(states: readonly WebhookState[], width: number): string[] {
  if (states.length === 0) return [];
  const active = states.filter((w) => w.retiredAt === null);
  const failing = active.filter((w) => w.attempts > 0).length;
  const lines = [`  webhooks   ${active.length} configured, ${failing} failing`];
  for (const w of active) {
    // A webhook without a `name` is named by its URL: shown once.
    lines.push(clip(w.name === w.url ? `    ${w.url}` : `    ${w.name}  ${w.url}`, width));
    for (const line of describe(w)) lines.push(clip(`      ${line}`, width));
  }
  const retired = states.filter((w) => w.retiredAt !== null);
  if (retired.length > 0)
    lines.push(
      clip(`    retired (no longer in the webhooks file): ${retired.map((w) => w.name).join(', ')}`, width),
    );
  return lines;
}
