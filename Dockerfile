# Refdesk server on the embedded store. Build: docker build -t refdesk .
# Run: docker run -p 3000:3000 -v refdesk-data:/data refdesk
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY core ./core
COPY plugins ./plugins
COPY server ./server
COPY config ./config
COPY docs ./docs
ENV NODE_ENV=production PORT=3000 DATA_DIR=/data HOST=0.0.0.0
RUN mkdir -p /data && chown node:node /data
VOLUME /data
EXPOSE 3000
USER node
CMD ["node", "bin/refdesk.js", "serve"]
