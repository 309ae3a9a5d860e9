import { expect } from 'vitest';

/** A GraphQL subscription read as server-sent events (GraphQL over SSE, distinct connections mode). */
export interface SseSubscription<T> {
  /** The next `data:` payload of an `event: next`. @throws Error when the stream ends first. */
  next(): Promise<T>;
  close(): Promise<void>;
}

/**
 * Opens `subscription` through `fetcher` (`yoga.fetch`, or `fetch` of a real server at `origin`)
 * with `Accept: text/event-stream`, and checks that it is answered as an event stream.
 */
export async function openSse<T>(
  fetcher: (url: string, init: RequestInit) => Promise<Response> | Response,
  origin: string,
  subscription: string,
): Promise<SseSubscription<T>> {
  const controller = new AbortController();
  const response = await fetcher(`${origin}/graphql?query=${encodeURIComponent(subscription)}`, {
    headers: { accept: 'text/event-stream' },
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  return {
    async next() {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split('\n').find((l) => l.startsWith('data:'));
          if (block.includes('event: next') && data) return JSON.parse(data.slice(5)) as T;
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('event stream ended');
        buffer += value;
      }
    },
    async close() {
      controller.abort();
      await reader.cancel().catch(() => {});
    },
  };
}
