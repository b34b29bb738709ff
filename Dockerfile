# formsink as a container: the single `formsink` binary (npm run build:binary) on Debian slim.
#   docker build -t formsink .
#   docker run -d --name formsink -p 127.0.0.1:8787:8787 -v formsink-data:/data formsink
#   docker exec formsink formsink keys create --account my-site
# docs/deploy.md has the rest (compose, reverse proxy, backups).

FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# No install scripts yet (prepare builds, and the sources are not here); Bun's binary comes from
# its optional dependency, which its postinstall links into place.
RUN npm ci --ignore-scripts --no-audit --no-fund && (cd node_modules/bun && node install.js)
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY adapters ./adapters
COPY cli ./cli
RUN npm run build:binary

# glibc and libgcc_s are what the binary and libSQL's embedded addon need; slim has both.
FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --user-group --home-dir /data --no-create-home --shell /usr/sbin/nologin formsink \
 && mkdir /data && chown formsink:formsink /data && chmod 0750 /data
COPY --from=build /src/dist/formsink /usr/local/bin/formsink
USER formsink
WORKDIR /data
# The database is /data/formsink.db; the server listens on every interface of the container.
ENV FORMSINK_DATA_DIR=/data HOST=0.0.0.0 PORT=8787
VOLUME /data
EXPOSE 8787
# `formsink health` asks GET /api/health on 127.0.0.1:$PORT and exits 1 unless it answers 2xx.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["formsink", "health"]
# On SIGTERM (docker stop) the server finishes in-flight requests and closes the database,
# which leaves one self-contained formsink.db (no -wal file to copy along).
STOPSIGNAL SIGTERM
ENTRYPOINT ["formsink"]
CMD ["serve"]
