# The gateway's container image (docs/deployment.md, "Container image").
#
#   docker build -t hi-gateway .
#   docker run -p 8080:8080 -v hi-gateway-data:/data hi-gateway
#
# Two stages: the first installs the production dependencies (esbuild, which compiles src/, is
# one of them) and compiles src/ to dist/; the second holds those dependencies, dist/, the
# catalog and the web pages, and runs as the unprivileged `node` user. No dev dependency, no
# TypeScript source and no test reaches the image.
# test/e2e/container-image.test.ts runs these steps in a scratch folder: keep them in step.

ARG NODE_VERSION=20
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY scripts/build.mjs scripts/build.mjs
COPY src src
RUN node scripts/build.mjs

FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    GATEWAY_DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY config config
COPY web web
COPY bin bin
# The data folder: the embedded database, the usage journal and outbox, the admin token.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# Liveness only: /readyz (PostgreSQL, Redis, draining) is for the load balancer.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM drains (up to GATEWAY_DRAIN_TIMEOUT_MS, 25 s): give `docker stop` a longer grace (-t 40).
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
