import type { IncomingMessage, ServerResponse } from 'node:http';
import { DUMPS_URL_PATH, matchFullDumpPath } from '../feed/fullDumps.js';
import { openFeedFile, resolveInside } from '../files/local.js';
import { sendFile } from '../http/fileBody.js';
import { answerFault, type FaultPlan, withBodyFault } from './faults.js';

/** Folder under the sample feed's root that holds its full JSON dumps (`LATEST`, `<dump>/<entity>.tar.xz`). */
export const FULL_DUMPS_FOLDER = 'full-json-dumps';

const CONTENT_TYPES = {
  latest: 'text/plain; charset=utf-8',
  archive: 'application/x-xz',
  signature: 'application/pgp-signature',
};

const NOT_FOUND_PAGE =
  '<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n' +
  '<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';

/**
 * Answers a request under {@link DUMPS_URL_PATH} from `<root>/full-json-dumps/` as upstream's
 * public full dump directory does (FEED.md, Full JSON dumps): `LATEST`, the archives, `SHA256SUMS`
 * and their `.asc` when the folder has them; no token, Range and HEAD support,
 * and for anything else the HTML 404 page of a plain web server (nginx's, as data.metabrainz.org
 * answers: the feed's `text/plain` "Can't find ..." is the feed service's, not the dump host's).
 * `faults` apply as on the feed, to paths `full-json-dumps/<rest>`.
 * Returns false when `path` is not under that prefix.
 */
export async function answerFullDump(
  root: string,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
  onStatus: (status: number) => void,
  faults?: FaultPlan,
): Promise<boolean> {
  if (!path.startsWith(`${DUMPS_URL_PATH}/`)) return false;
  const rest = path.slice(DUMPS_URL_PATH.length + 1);
  const route = matchFullDumpPath(rest);
  const fault = route && faults?.take(`${FULL_DUMPS_FOLDER}/${rest}`);
  if (fault && answerFault(fault, req, res, onStatus)) return true;
  const file = route && (await openFeedFile(resolveInside(root, `${FULL_DUMPS_FOLDER}/${rest}`)));
  if (!route || !file) {
    onStatus(404);
    res.writeHead(404, { 'content-type': 'text/html', 'content-length': NOT_FOUND_PAGE.length });
    res.end(req.method === 'HEAD' ? undefined : NOT_FOUND_PAGE);
    return true;
  }
  const contentType =
    route.kind === 'latest'
      ? CONTENT_TYPES.latest
      : route.signature
        ? CONTENT_TYPES.signature
        : route.kind === 'sums'
          ? CONTENT_TYPES.latest
          : CONTENT_TYPES.archive;
  await sendFile(req, res, fault ? withBodyFault(file, fault) : file, { contentType, onStatus });
  return true;
}
