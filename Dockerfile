# syntax=docker/dockerfile:1
# smsgate: build stage (npm ci + npm run build), then a runtime stage with production dependencies
# only, run as the non-root user smsgate (member of dialout, for USB modems), its state on the
# volume /var/lib/smsgate. docs/behaviour/install-and-config.md describes it.
#
#   docker build -t smsgate .
#   docker run -d -p 8080:8080 -v smsgate-data:/var/lib/smsgate smsgate
#   docker exec -it <container> smsgate client create --name acme

# Pinned: a rebuild gets the same Node.js (bump it here, deliberately).
ARG NODE_IMAGE=node:20.20.2-bookworm-slim

FROM ${NODE_IMAGE} AS build
# Compilers for the native modules (better-sqlite3, @serialport/bindings-cpp) when no prebuilt
# binary matches the platform.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    SMSGATE_CONFIG=/etc/smsgate/smsgate.json
# A system user with no login, in dialout (which owns /dev/ttyUSB*, /dev/ttyACM*: pass a modem
# with --device /dev/ttyUSB0).
RUN groupadd --system --gid 10001 smsgate \
 && useradd --system --uid 10001 --gid smsgate --groups dialout --home-dir /var/lib/smsgate --shell /usr/sbin/nologin smsgate \
 && install -d -o smsgate -g smsgate -m 0700 /var/lib/smsgate \
 && install -d -o root -g smsgate -m 0750 /etc/smsgate
WORKDIR /opt/smsgate
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist/src ./dist/src
COPY --from=build /src/dist/migrations ./dist/migrations
COPY --from=build /src/hardware ./hardware
COPY --from=build /src/config ./config
COPY --chown=root:smsgate --chmod=0640 config/container.json /etc/smsgate/smsgate.json
RUN chmod 0755 dist/src/cli/main.js \
 && ln -s /opt/smsgate/dist/src/cli/main.js /usr/local/bin/smsgate
VOLUME ["/var/lib/smsgate"]
# api.port of config/container.json; the admin listener (8081) stays on the container's loopback.
EXPOSE 8080
USER smsgate
WORKDIR /var/lib/smsgate
# The admin listener's readiness (database writable, transports up), from inside the container.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8081/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["smsgate"]
CMD ["serve"]
