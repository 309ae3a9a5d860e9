# syntax=docker/dockerfile:1
# livefeed in a container. Build: docker build -t livefeed .
# Run:  docker run -p 4000:4000 -v livefeed-data:/data -e LIVEFEED_TOKEN_FILE=/run/secrets/token livefeed
# Without a token it syncs and serves the bundled demo feed. Data (SQLite file, kept archives) is in /data.

FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No lifecycle scripts of our own yet (prepare needs the sources); then build the two native addons
# (prebuilt binaries or node-gyp with the image's python3/make/g++).
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm rebuild better-sqlite3 lzma-native
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The build writes dist/ (tsc) and dist/bundle/ (scripts/bundle.ts), which bin/livefeed.js starts.
COPY scripts/bundle.ts ./scripts/
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    LIVEFEED_DATA_DIR=/data \
    LIVEFEED_HOST=0.0.0.0 \
    LIVEFEED_PORT=4000
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY drizzle ./drizzle
COPY fixtures/feed ./fixtures/feed
COPY fixtures/keys/test-signing-key.asc ./fixtures/keys/
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 4000
# Liveness only: /ready (a packet synced) and /freshness (lag) are for the orchestrator and monitoring.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.LIVEFEED_PORT+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Through its first line (#!/usr/bin/env -S ...): node's flags and malloc's settings, as `npx livefeed`.
ENTRYPOINT ["./bin/livefeed.js"]
CMD ["start"]
