// Loaded with `node --import`: records the URL of every module the process loads, one a line, in
// the file named by MODULE_LOG (tests of what a command loads, test/cliModules.test.ts).
import { register } from 'node:module';

register('./moduleLogHooks.mjs', import.meta.url);
