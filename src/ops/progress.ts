/**
 * Progress of long work (a catch-up over many packets, an import): a bar on a terminal, plain
 * structured log lines otherwise. Shared by the sync and `livefeed import`.
 */
import cliProgress from 'cli-progress';
import { holdBottomLine, releaseBottomLine } from '../log/terminal.js';
import type { Logger } from '../logger.js';

/** A running progress report. */
export interface Progress {
  /** Adds `step` (default 1) done units; `note` says what was just done (e.g. `packet 186123`). */
  tick(step?: number, note?: string): void;
  /** Raises the total (work discovered on the way). */
  setTotal(total: number): void;
  /** Ends the bar (or logs the last line). Idempotent. */
  stop(): void;
}

/** Options of {@link createProgress}. */
export interface ProgressOptions {
  /** What is being done: `sync`, `import`. */
  label: string;
  total: number;
  /** Unit of `total`, plural: `packets`, `files`. */
  unit: string;
  /** Where plain lines go when not on a terminal (event `progress`). */
  logger: Logger;
  /** Terminal stream of the bar. Default process.stderr. */
  stream?: NodeJS.WriteStream;
  /** Force bar (true) or plain lines (false); default: a bar when `stream` is a TTY. */
  tty?: boolean;
  /** Plain lines: one each time this many percent more is done. Default 10. */
  everyPercent?: number;
}

/** Starts a progress report (see {@link ProgressOptions}). */
export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  return (options.tty ?? stream.isTTY === true) ? barProgress(options, stream) : logProgress(options);
}

function barProgress(options: ProgressOptions, stream: NodeJS.WriteStream): Progress {
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: `${options.label} [{bar}] {percentage}% | {value}/{total} ${options.unit} | ETA {eta_formatted} | {note}`,
      hideCursor: true,
      etaBuffer: 20,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(options.total, 0, { note: '' });
  // Log lines written meanwhile go above the bar (src/log/terminal.ts), which is then drawn again.
  const line = {
    redraw: () => {
      (bar as unknown as { lastDrawnString: string | null }).lastDrawnString = null;
      (bar as unknown as { render(): void }).render();
    },
  };
  holdBottomLine(stream, line);
  let stopped = false;
  return {
    tick: (step = 1, note = '') => bar.increment(step, { note }),
    setTotal: (total) => bar.setTotal(total),
    stop: () => {
      if (stopped) return;
      stopped = true;
      releaseBottomLine(line);
      bar.stop();
    },
  };
}

function logProgress(options: ProgressOptions): Progress {
  const every = options.everyPercent ?? 10;
  let total = options.total;
  let done = 0;
  let nextPercent = every;
  let stopped = false;
  const started = Date.now();
  const line = (note: string) => {
    const percent = total > 0 ? Math.floor((done / total) * 100) : 100;
    options.logger.info(
      {
        event: 'progress',
        label: options.label,
        done,
        total,
        unit: options.unit,
        percent,
        elapsedMs: Date.now() - started,
      },
      `${options.label}: ${done}/${total} ${options.unit} (${percent}%)${note ? `, ${note}` : ''}`,
    );
  };
  return {
    tick: (step = 1, note = '') => {
      done += step;
      const percent = total > 0 ? (done / total) * 100 : 100;
      if (percent >= nextPercent) {
        nextPercent = (Math.floor(percent / every) + 1) * every;
        if (done < total) line(note);
      }
    },
    setTotal: (value) => {
      total = value;
    },
    stop: () => {
      if (stopped) return;
      stopped = true;
      line('done');
    },
  };
}

/** A unit of bytes for progress bars and summaries. */
export interface SizeUnit {
  name: 'kB' | 'MB';
  /** Bytes per unit. */
  bytes: number;
}

/**
 * The unit a bar of `totalBytes` counts in: kB below 10 MB, where whole MB would move in steps too
 * coarse to see (a 1 kB file read as "1/1 MB"), else MB.
 */
export function sizeUnit(totalBytes: number): SizeUnit {
  return totalBytes < 10e6 ? { name: 'kB', bytes: 1e3 } : { name: 'MB', bytes: 1e6 };
}

/** `bytes` as people read them, decimal units: `512 B`, `1.9 kB`, `12.3 MB`, `1.20 GB`. */
export function formatSize(bytes: number): string {
  if (bytes < 1e3) return `${bytes} B`;
  if (bytes < 1e6) return `${(bytes / 1e3).toFixed(1)} kB`;
  if (bytes < 1e9) return `${(bytes / 1e6).toFixed(1)} MB`;
  return `${(bytes / 1e9).toFixed(2)} GB`;
}
