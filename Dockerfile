# Refdesk server on the embedded store. Build: docker build -t refdesk .
# Run: docker run -p 3000:3000 -v refdesk-data:/data refdesk
#
# Stage 1 installs every dependency (TypeScript is a dev dependency) and compiles to dist/;
# stage 2 holds the production dependencies and the compiled code only, so the server starts
# without compiling anything (bin/refdesk.js runs dist/ when there are no sources beside it).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.js ./scripts/build.js
COPY core ./core
COPY plugins ./plugins
COPY server ./server
COPY config ./config
RUN npm run build

FROM node:20-bookworm-slim
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
CMD ["node", "bin/refdesk.js", "serve"]
