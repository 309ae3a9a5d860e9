import type { FileHandle } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline, type Readable, Transform } from 'node:stream';
import { ERROR_BODIES } from '../feed/protocol/bodies.js';
import type { OpenFeedFile } from '../files/local.js';

/**
 * Fault injection for the sample feed (issue 5): the network troubles a mirror meets upstream,
 * on demand, per path and for a number of occurrences, so tests can run a sync through each one.
 */

/** One injected fault. Byte offsets count from the start of the response body (of a range, when one was asked). */
export type Fault =
  /**
   * Answer `status` (e.g. 500, 502, 503, 429) with a short body (`text/plain` unless `contentType`
   * says otherwise: `text/html` for the page of a path that matches no route) and optional
   * `Retry-After` (seconds or an HTTP date).
   */
  | { kind: 'status'; status: number; retryAfter?: number | string; body?: string; contentType?: string }
  /** Answer 403 as upstream does for a revoked token (FEED.md, Errors). */
  | { kind: 'wrong-token' }
  /** Close the connection before any response (a connection reset). */
  | { kind: 'reset' }
  /** Send the head (full Content-Length) and the body up to `atByte` (default half the body), then close the connection. */
  | { kind: 'cut'; atByte?: number }
  /** Send the body up to `atByte` (default half), then nothing more while keeping the connection open (idle timeout). */
  | { kind: 'stall'; atByte?: number }
  /** Send the whole body in `chunkBytes` pieces (default 64) every `intervalMs` (default 20). */
  | { kind: 'trickle'; chunkBytes?: number; intervalMs?: number }
  /** Send the whole body with the byte at `atByte` (default the middle) inverted; length unchanged. */
  | { kind: 'corrupt'; atByte?: number };

/** Which requests a fault applies to. */
export interface FaultRule {
  /**
   * Feed-root-relative path (`replication-info`, `json-dumps/json-dump-7/area.tar.xz`, with `.asc` for
   * a signature): exact text, a pattern, or a predicate.
   */
  path: string | RegExp | ((path: string) => boolean);
  fault: Fault;
  /** Matching requests to fault; default 1. `Infinity` for every one. */
  times?: number;
  /** Matching requests to let through untouched before the first fault; default 0. */
  skip?: number;
}

/** A fault that was applied, for assertions. */
export interface AppliedFault {
  path: string;
  kind: Fault['kind'];
}

interface LiveRule {
  rule: FaultRule;
  skip: number;
  left: number;
}

/**
 * The faults a sample feed injects, consulted once per routed request (after routing and method
 * checks, before the token checks: a faulty proxy in front of upstream answers whatever the token).
 * Rules are tried in the order added; the first with occurrences left applies.
 */
export class FaultPlan {
  readonly #rules: LiveRule[] = [];
  /** Every fault applied so far, in order. */
  readonly applied: AppliedFault[] = [];

  /** Adds a rule; returns the plan for chaining. */
  add(rule: FaultRule): this {
    this.#rules.push({ rule, skip: rule.skip ?? 0, left: rule.times ?? 1 });
    return this;
  }

  /** Drops every rule and the record of applied faults. */
  clear(): void {
    this.#rules.length = 0;
    this.applied.length = 0;
  }

  /** Rules that still have occurrences left. */
  get pending(): number {
    return this.#rules.filter((r) => r.left > 0).length;
  }

  /** The fault for a request of `path`, counting it as used; undefined when none applies. */
  take(path: string): Fault | undefined {
    for (const live of this.#rules) {
      if (live.left <= 0 || !matches(live.rule.path, path)) continue;
      if (live.skip > 0) {
        live.skip--;
        continue;
      }
      live.left--;
      this.applied.push({ path, kind: live.rule.fault.kind });
      return live.rule.fault;
    }
    return undefined;
  }
}

function matches(pattern: FaultRule['path'], path: string): boolean {
  if (typeof pattern === 'string') return pattern === path;
  if (pattern instanceof RegExp) return pattern.test(path);
  return pattern(path);
}

/**
 * Answers the request for a fault that replaces the response (status, wrong-token, reset) and
 * returns true; returns false for body faults, which {@link withBodyFault} applies.
 */
export function answerFault(
  fault: Fault,
  req: IncomingMessage,
  res: ServerResponse,
  log: (status: number) => void,
): boolean {
  if (fault.kind === 'reset') {
    log(0);
    req.socket.destroy();
    return true;
  }
  if (fault.kind !== 'status' && fault.kind !== 'wrong-token') return false;
  const status = fault.kind === 'status' ? fault.status : 403;
  const body =
    fault.kind === 'status' ? (fault.body ?? `injected fault: HTTP ${status}\n`) : ERROR_BODIES.invalidToken;
  const headers: Record<string, string | number> = {
    'content-type': (fault.kind === 'status' && fault.contentType) || 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  };
  if (fault.kind === 'status' && fault.retryAfter !== undefined)
    headers['retry-after'] = String(fault.retryAfter);
  log(status);
  res.writeHead(status, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
  return true;
}

/**
 * `file` with its body stream passed through `fault` (cut, stall, trickle, corrupt); other faults
 * leave it as is. The head the server sends is unchanged, so a cut body is shorter than its
 * Content-Length, as on a dropped connection.
 */
export function withBodyFault(file: OpenFeedFile, fault: Fault): OpenFeedFile {
  if (
    fault.kind !== 'cut' &&
    fault.kind !== 'stall' &&
    fault.kind !== 'trickle' &&
    fault.kind !== 'corrupt'
  ) {
    return file;
  }
  const handle = file.handle;
  const faulty = {
    close: () => handle.close(),
    createReadStream: (options: { start?: number; end?: number }) => {
      const source = handle.createReadStream(options);
      const length = (options.end ?? file.size - 1) - (options.start ?? 0) + 1;
      const transform = bodyFault(fault, length);
      // Errors reach the server through the transform; the source is destroyed with it.
      pipeline(source, transform, () => {});
      return transform;
    },
  };
  return { ...file, handle: faulty as unknown as FileHandle };
}

/** A transform applying a body fault to a body of `length` bytes. */
function bodyFault(fault: Fault, length: number): Transform {
  let offset = 0;
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });
  const half = Math.floor(length / 2);
  const transform = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      const chunkStart = offset;
      offset += chunk.length;
      if (fault.kind === 'corrupt') {
        const at = (fault.atByte ?? half) - chunkStart;
        if (at >= 0 && at < chunk.length) {
          const copy = Buffer.from(chunk);
          copy[at] = copy[at]! ^ 0xff;
          return callback(null, copy);
        }
        return callback(null, chunk);
      }
      if (fault.kind === 'cut' || fault.kind === 'stall') {
        const at = (fault.atByte ?? half) - chunkStart;
        if (at >= chunk.length) return callback(null, chunk);
        if (at > 0) this.push(chunk.subarray(0, at));
        // A stall simply never asks for more: the connection stays open and silent. A cut ends the
        // response with an error (the server destroys the connection) once the response has taken
        // the bytes before the cut, and a moment later so that they have left: destroying a socket
        // drops what it has not sent yet. A fixed delay alone lost them on a busy machine.
        if (fault.kind === 'stall') return;
        void (async () => {
          for (let waited = 0; this.readableLength > 0 && waited < 5_000; waited += 10) await later(10);
          await later(50);
          callback(Object.assign(new Error('injected fault: connection cut'), { code: 'FAULT_CUT' }));
        })();
        return;
      }
      if (fault.kind === 'trickle') {
        const piece = Math.max(1, fault.chunkBytes ?? 64);
        void (async () => {
          for (let i = 0; i < chunk.length && !this.destroyed; i += piece) {
            this.push(chunk.subarray(i, i + piece));
            await later(fault.intervalMs ?? 20);
          }
          if (!this.destroyed) callback();
        })();
        return;
      }
      callback(null, chunk);
    },
    destroy(error, callback) {
      for (const timer of timers) clearTimeout(timer);
      callback(error);
    },
  });
  return transform as Transform & Readable;
}
