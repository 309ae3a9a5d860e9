/**
 * File access of the sample feed. The implementations are shared with livefeed's own file links and
 * mirror endpoints and live in `src/http/fileBody.ts`; they are re-exported here for the sample
 * feed's modules.
 */
export {
  type OpenFeedFile,
  openFeedFile,
  parseRange,
  type RangeOutcome,
  resolveInside,
} from '../http/fileBody.js';
