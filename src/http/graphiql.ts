import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { GraphiQLOptions } from 'graphql-yoga';
import type { Reads } from '../db/reads.js';
import { exampleQuery } from './exampleQuery.js';
import type { Route } from './route.js';

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/**
 * Runs in the page before GraphiQL starts. A link's `?query=` (with `variables` and
 * `operationName`) opens that query; without one, GraphiQL's stored tabs open as they were left
 * (`query: null` lets GraphiQL read them), and the example (`defaultQuery`) only on a first visit,
 * so a reload never adds another example tab.
 */
const PAGE_OPTIONS = `<script>
function livefeedGraphiQL(yoga) {
  return {
    renderYogaGraphiQL(root, options) {
      const params = new URL(location.href).searchParams;
      let stored = null;
      try {
        stored = JSON.parse(localStorage.getItem('graphiql:tabState') ?? 'null');
      } catch {}
      const tabs = Array.isArray(stored?.tabs) ? stored.tabs : [];
      const query = params.get('query');
      // GraphiQL adds a tab unless the query, variables and headers it is given are those of a
      // stored tab: a reload reopens the active tab, a link opens its query (in a tab of its own
      // unless one holds it already); null opens defaultQuery on a first visit.
      const open = tabs.find((tab) => query !== null && tab.query === query) ??
        (query === null ? tabs[stored?.activeTabIndex ?? 0] : undefined);
      const shared = open
        ? { query: open.query, variables: open.variables ?? undefined }
        : query !== null
          ? { query, variables: params.get('variables') ?? undefined }
          : { query: null };
      const operationName = params.get('operationName');
      if (query !== null && operationName) shared.operationName = operationName;
      return yoga.renderYogaGraphiQL(root, { ...options, ...shared });
    },
  };
}
</script>`;

/**
 * Renders GraphiQL with every asset inlined (`@graphql-yoga/render-graphiql`: no CDN, so it works
 * offline and from the single binary), about 9 MB of script, opening `defaultQuery` on a first visit
 * and a link's `?query=` otherwise (see PAGE_OPTIONS).
 */
export async function renderGraphiQL(options: GraphiQLOptions): Promise<string> {
  const { renderGraphiQL: render } = await import('@graphql-yoga/render-graphiql');
  const html = render({ ...options });
  const call = 'YogaGraphiQL.renderYogaGraphiQL(';
  const at = html.lastIndexOf(call);
  if (at < 0) throw new Error('GraphiQL page: the render call was not found (render-graphiql changed)');
  const wrapped = `${html.slice(0, at)}livefeedGraphiQL(YogaGraphiQL).renderYogaGraphiQL(${html.slice(at + call.length)}`;
  return wrapped.replace('<head>', `<head>\n${PAGE_OPTIONS}`);
}

interface RenderedPage {
  example: string;
  etag: string;
  identity: Buffer;
  encoded: Map<'br' | 'gzip', Promise<Buffer>>;
}

/**
 * The page in `encoding`, compressed once on first use (in the thread pool). Levels trade size for
 * time: brotli 5 and gzip 6 take about 0.5 and 0.3 s for the 9 MB page (2.0 and 2.4 MB), where
 * brotli 9 took 1.9 s, long enough to hold back the process's exit after SIGTERM.
 */
function compressed(
  cache: Map<'br' | 'gzip', Promise<Buffer>>,
  identity: Buffer,
  encoding: 'br' | 'gzip',
): Promise<Buffer> {
  let body = cache.get(encoding);
  if (!body) {
    body =
      encoding === 'br'
        ? brotliAsync(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } })
        : gzipAsync(identity, { level: 6 });
    cache.set(encoding, body);
  }
  return body;
}

/** The encoding to send for an Accept-Encoding header: br, then gzip, else none. */
function chooseEncoding(accept: string | undefined): 'br' | 'gzip' | undefined {
  const offered = (accept ?? '')
    .split(',')
    .map((part) => part.trim().split(';'))
    .filter(([, q]) => !q || !/^\s*q=0(\.0*)?\s*$/.test(q))
    .map(([name]) => name!.toLowerCase());
  if (offered.includes('br')) return 'br';
  if (offered.includes('gzip')) return 'gzip';
  return undefined;
}

/**
 * `GET /graphql` from a browser (Accept: text/html): GraphiQL, opening on an example made from the
 * data held (exampleQuery.ts). The page is rendered once per example and sent compressed (br or
 * gzip by Accept-Encoding, each compressed once when first asked), with an ETag and `Cache-Control: no-cache` so a
 * browser revalidates (304) instead of loading 9 MB again.
 */
export function graphiqlRoute(reads: Reads, title: string): Route {
  let page: Promise<RenderedPage> | undefined;
  const current = (example: string): Promise<RenderedPage> => {
    if (page) return page.then((p) => (p.example === example ? p : render(example)));
    return render(example);
  };
  const render = (example: string): Promise<RenderedPage> => {
    page = renderGraphiQL({ title, defaultQuery: example }).then((html) => {
      const identity = Buffer.from(html);
      const etag = `"${createHash('sha256').update(identity).digest('base64url').slice(0, 27)}"`;
      return { example, etag, identity, encoded: new Map() };
    });
    return page;
  };
  return {
    async handle(req, res, url) {
      if (url.pathname !== '/graphql' || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
      if (!(req.headers.accept ?? '').includes('text/html')) return false;
      const { etag, identity, encoded } = await current(await exampleQuery(reads));
      const encoding = chooseEncoding(req.headers['accept-encoding']);
      const headers: Record<string, string> = {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-cache',
        etag: encoding ? `${etag.slice(0, -1)}-${encoding}"` : etag,
        vary: 'Accept, Accept-Encoding',
      };
      if (req.headers['if-none-match'] === headers.etag) {
        res.writeHead(304, headers);
        res.end();
        return true;
      }
      const body = encoding ? await compressed(encoded, identity, encoding) : identity;
      if (encoding) headers['content-encoding'] = encoding;
      headers['content-length'] = String(body.length);
      res.writeHead(200, headers);
      res.end(req.method === 'HEAD' ? undefined : body);
      return true;
    },
  };
}
