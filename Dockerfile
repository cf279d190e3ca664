# syntax=docker/dockerfile:1
# airlock serve as a container: docker build -t airlock:0.1.0 . (the tag is package.json's version,
# which the chart's appVersion follows); docs/kubernetes.md carries it into a registry and a cluster.
# Three stages: compile and bundle the TypeScript (with dev dependencies), install the production dependencies
# alone (npm ci --omit=dev --omit=optional: the image serves, and playwright-core drives Chromium
# only for the connected side's --vendor-observe), then a slim runtime holding only dist/, those node_modules and tini.
# The runtime runs as uid/gid 10001, needs no writable path but the store and /tmp volumes (a
# read-only root file system works), and serves the store's active version on port 8080.

ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json .npmrc tsconfig.json tsconfig.build.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY src ./src
COPY scripts ./scripts
RUN npm run build

FROM ${NODE_IMAGE} AS deps
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 airlock \
 && useradd --system --uid 10001 --gid 10001 --home-dir /data --no-create-home --shell /usr/sbin/nologin airlock \
 && mkdir -p /data/store \
 && chown -R 10001:10001 /data
WORKDIR /app
COPY --from=deps /src/node_modules ./node_modules
COPY --from=build /src/dist/src ./dist/src
COPY package.json ./
COPY fixtures/site ./fixtures/site
ENV NODE_ENV=production \
    AIRLOCK_STORE=/data/store \
    TMPDIR=/tmp \
    HOME=/data
VOLUME ["/data", "/tmp"]
USER 10001:10001
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.AIRLOCK_PORT||8080)+'/_airlock/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/dist/src/cli/bin.js"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080"]
