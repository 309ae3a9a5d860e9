// Module hooks (node:module register) behind moduleLog.mjs: they run on the loader thread.
import { appendFileSync } from 'node:fs';

export async function load(url, context, nextLoad) {
  if (process.env.MODULE_LOG) appendFileSync(process.env.MODULE_LOG, `${url}\n`);
  return nextLoad(url, context);
}
