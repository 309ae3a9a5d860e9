/**
 * The one line at the bottom of a terminal that a progress bar redraws. Log lines written while a
 * bar is shown go above it: the bar's line is cleared, the log line written, and the bar drawn
 * again below, so bar redraws and log lines never share a line.
 */
export interface BottomLine {
  /** Draws the bar again (after a log line took its place). */
  redraw(): void;
}

let bottom: { stream: NodeJS.WritableStream; line: BottomLine } | undefined;

/** Shows `line` at the bottom of `stream` until {@link releaseBottomLine}. */
export function holdBottomLine(stream: NodeJS.WritableStream, line: BottomLine): void {
  bottom = { stream, line };
}

/** Ends {@link holdBottomLine} for `line` (another bar's hold is left alone). */
export function releaseBottomLine(line: BottomLine): void {
  if (bottom?.line === line) bottom = undefined;
}

/** Writes `text` (whole lines) to `stream`, above a progress bar shown on it. */
export function writeAboveBottomLine(stream: NodeJS.WritableStream, text: string): void {
  if (bottom?.stream !== stream) {
    stream.write(text);
    return;
  }
  stream.write(`\r\x1b[2K${text}`);
  bottom.line.redraw();
}
