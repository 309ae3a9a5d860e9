import type { GraphiQLOptions } from 'graphql-yoga';

/**
 * Renders GraphiQL with every asset inlined (`@graphql-yoga/render-graphiql`: no CDN, so it works
 * offline and from the single binary), loaded on first use (about 9 MB of script). That GraphiQL
 * opens `query` (or the page's `?query=`), not `defaultQuery`, so the example is passed as both.
 */
export async function renderGraphiQL(options: GraphiQLOptions): Promise<string> {
  const { renderGraphiQL: render } = await import('@graphql-yoga/render-graphiql');
  return render({ ...options, query: options.defaultQuery } as GraphiQLOptions);
}
