// Loaded from the extraction folder by the single executable's main.cjs: imports the bundled app.
'use strict';
const path = require('node:path');
const { pathToFileURL } = require('node:url');

import(pathToFileURL(path.join(__dirname, 'dist', 'livefeed.mjs')).href).catch((error) => {
  process.stderr.write(`livefeed: cannot load the app: ${error?.stack ?? error}\n`);
  process.exit(4);
});
