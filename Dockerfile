# Refdesk server on the embedded store.
#   docker build -t refdesk .
#   docker run -p 3000:3000 -v refdesk-data:/data -e LICENSE_KEY=rdk1.... refdesk
# (or compose.yaml beside this file). LICENSE_KEY is required: the server refuses to start
# without a valid key (docs/self-hosting.md). Everything else has a default.
#
# Stage 1 installs every dependency (TypeScript and esbuild are dev dependencies) and compiles
# to dist/ (tsc, then the entries bundled by esbuild: scripts/bundle.js);
# stage 2 holds the production dependencies, the compiled code, git and CA certificates, and
# runs as the unprivileged `node` user. test/e2e/dockerfile.test.ts runs these same steps
# (the RUN and COPY lines, ENV, CMD and HEALTHCHECK) without a container engine, so change the
# two together: a RUN step that test does not know fails it.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.js scripts/bundle.js ./scripts/
COPY core ./core
COPY plugins ./plugins
COPY server ./server
COPY config ./config
RUN npm run build

FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY docs ./docs
ENV NODE_ENV=production PORT=3000 DATA_DIR=/data HOST=0.0.0.0
RUN mkdir -p /data && chown node:node /data
VOLUME /data
EXPOSE 3000
USER node
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/api/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "bin/refdesk.js", "serve"]
