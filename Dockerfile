# Bosun's manager as a container image:
#   docker build -t bosun .
#   docker run --read-only --tmpfs /tmp -v ~/.kube/config:/kubeconfig:ro bosun --kubeconfig=/kubeconfig
# In a pod it needs nothing but its ServiceAccount (the mounted token and CA, and
# KUBERNETES_SERVICE_HOST/PORT) and a writable /tmp.
#
# test/integration/deploy/image-entrypoint.test.ts reads this file: it lays out the runtime stage's
# files as the COPY lines below do, from the same `npm pack` and `npm install -g --prefix`, and runs
# ENTRYPOINT and CMD under bubblewrap as USER with a read-only root and only /tmp writable. An
# instruction it does not know how to reproduce fails that test, so change both together.
#
# Both stages use the Node that tools/node pins (the Node every test runs on). Tags move: for a
# reproducible build, pin each base by digest as well, e.g.
#   FROM node:24.21.0-bookworm-slim@sha256:<digest>
# with the digest `docker buildx imagetools inspect node:24.21.0-bookworm-slim` prints.

FROM node:24.21.0-bookworm AS build
WORKDIR /src
# Dependencies first, so a change to the sources alone reuses this layer. --ignore-scripts: the
# prepare script (the build) needs the sources, which are not copied yet; it runs below.
COPY package.json package-lock.json ./
COPY tools/node tools/node
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json README.md ./
COPY bin bin
COPY src src
COPY deploy deploy
COPY catalogs catalogs
COPY tools/controlplane tools/controlplane
# The production install is the one users get and the production-install test covers: `npm pack`
# (whose prepare script builds dist/, the CRD checkers and the web catalog's page) and that
# tarball installed with `npm install -g` into a prefix of its own. Unlike `npm ci --omit=dev` in
# this folder, it holds exactly the package's `files` and its production dependencies, with no
# sources or build configuration beside them, and the test can make the same install.
# --ignore-scripts: no dependency's install script runs (npm 11 no longer runs them for global
# installs unless allowed, so the install the test makes has none either, and Bosun needs none).
RUN npm pack --pack-destination /pack \
 && npm install -g --prefix /opt/bosun /pack/bosun-*.tgz --ignore-scripts --no-audit --no-fund

FROM node:24.21.0-bookworm-slim
COPY --from=build /opt/bosun /opt/bosun
# No user of the base image: a numeric one, so Kubernetes' runAsNonRoot can check it without
# reading /etc/passwd, and it owns no file of the image (everything copied belongs to root).
USER 65532:65532
# NODE_ENV: libraries take their production paths. MALLOC_MMAP_THRESHOLD_: the manager's
# allocator setting (src/cli/allocator.ts) is set here, so it does not restart itself to set it.
# TMPDIR: the only writable place; fetched catalogs are spooled there, and Node's compile cache
# (bin/bosun.js) goes there too.
ENV NODE_ENV=production \
    MALLOC_MMAP_THRESHOLD_=131072 \
    TMPDIR=/tmp
# The image is read-only at run time (readOnlyRootFilesystem); /tmp is its one writable volume.
VOLUME /tmp
# Not /tmp: a relative path written by mistake then fails at once instead of landing in the volume.
WORKDIR /
# /healthz, /readyz, /metrics and the web catalog.
EXPOSE 8080
# Node is PID 1: the manager handles SIGTERM itself (stops taking work, finishes, exits 0).
ENTRYPOINT ["/opt/bosun/bin/bosun", "operator", "run"]
# Reachable from the kubelet's probes and a Service, not only from inside the pod; JSON log lines
# for the cluster's log collector. The PackageManifest API (--package-api-addr) is left off: it
# needs a Service and an APIService pointing at the pod, which only a deployment can give it.
CMD ["--metrics-addr=0.0.0.0:8080", "--log-format=json"]
