# syntax=docker/dockerfile:1
# The kvsentinel sidecar image the manifests in deploy/kubernetes run. Build and push it as the name they reference:
#   docker build -t ghcr.io/kvsentinel/kvsentinel:0.1.0 . && docker push ghcr.io/kvsentinel/kvsentinel:0.1.0
# (or tag it for your registry and set `images:` in your kustomization). Three stages: `pack` builds the package
# exactly as `npm pack` does; `install` installs that tarball and nothing else, as a user would (no dev
# dependencies); the final stage copies the installed tree onto a Node runtime without npm, as a non-root user.
# It writes nothing: it runs with a read-only root filesystem (the manifests mount an emptyDir on /tmp).
# test/ops/dockerfile.test.ts checks these stages against the package and the manifests.

FROM node:20.20.2-bookworm-slim AS pack
WORKDIR /src
COPY package.json package-lock.json ./
# the dev dependencies build dist/ (tsc); --ignore-scripts: the sources are not here yet
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json LICENSE README.md ./
COPY src ./src
COPY alerts ./alerts
COPY dashboards ./dashboards
COPY deploy ./deploy
# prepack runs the build; the tarball is /out/kvsentinel-0.1.0.tgz
RUN mkdir /out && npm pack --pack-destination /out

FROM node:20.20.2-bookworm-slim AS install
COPY --from=pack /out/kvsentinel-0.1.0.tgz /tmp/kvsentinel-0.1.0.tgz
RUN npm install --global --prefix /opt/kvsentinel --omit=dev --no-audit --no-fund --allow-scripts=zeromq /tmp/kvsentinel-0.1.0.tgz

FROM node:20.20.2-bookworm-slim
# npm, npx and corepack are not needed to run it
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
  /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack
COPY --from=install /opt/kvsentinel /opt/kvsentinel
ENV NODE_ENV=production PATH=/opt/kvsentinel/bin:$PATH
# 65532: no login, no home, the uid the manifests' securityContext runs as
USER 65532:65532
EXPOSE 9464
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9464/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["kvsentinel"]
CMD ["serve", "--help"]
