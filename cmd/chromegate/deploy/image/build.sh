#!/usr/bin/env bash
# make image: chromegate's container image, built without a daemon.
#
#   1. the static binary (CGO_ENABLED=0), stamped as make release stamps it,
#      into the build context bin/image/;
#   2. a Debian base image from Debian's own mirror: debootstrap (minbase)
#      of $SUITE with the suite's -updates and -security sources, imported
#      into buildah as $BASE_IMAGE (once; kept in buildah's storage);
#   3. Containerfile built by `buildah bud` FROM that base;
#   4. the image written as an OCI archive, bin/chromegate-image.tar.
#
# buildah runs with --storage-driver vfs and --isolation chroot: the
# default OCI isolation (crun) fails in VMs without the kernel features it
# needs ("did not get container create message from subprocess"), and vfs
# needs no overlay mounts. As root; network only to Debian's mirror (apt)
# and the npm registry (the driver).
#
# `build.sh smoke` (make image-smoke) runs the built image's binary inside
# it, as its own non-root user, on its root filesystem mounted read-only:
# see smoke below.
set -euo pipefail

ROOT_DIR=$(cd "$(dirname "$0")/../../../.." && pwd)
HERE=$ROOT_DIR/cmd/chromegate/deploy/image
cd "$ROOT_DIR"

SUITE=${SUITE:-trixie}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
BASE_IMAGE=${BASE_IMAGE:-localhost/chromegate-debian:$SUITE}
IMAGE=${IMAGE:-localhost/chromegate:latest}
OUT=${OUT:-bin/chromegate-image.tar}
CTX=bin/image
BUILDAH=(buildah --storage-driver vfs)

need() { command -v "$1" >/dev/null || { echo "build.sh: $1 is missing: apt-get install -y buildah debootstrap" >&2; exit 1; }; }

# smoke runs the image's binary inside it, as the image's user 10001:
# `chromegate version` through `buildah run`; then, in the image's root
# filesystem mounted read-only (as readOnlyRootFilesystem does) with
# tmpfs at /tmp, /dev/shm and the data dir (the manifests' emptyDirs) and
# the image's environment, `chromegate doctor` (which launches the
# headless shell and opens a page) and `chromegate serve` asked /healthz
# and /readyz by node's fetch (readiness starts the browser). --no-sandbox
# as in the manifests: an unprivileged container has no user namespaces
# for Chromium's sandbox (k8s/chromegate.yaml says why).
smoke_ctr= smoke_root=
smoke_cleanup() {
  if [ -n "$smoke_root" ]; then
    umount -R "$smoke_root/dev" 2>/dev/null || true
    umount "$smoke_root/proc" "$smoke_root/var/lib/chromegate" "$smoke_root/tmp" "$smoke_root" 2>/dev/null || true
    rmdir "$smoke_root" 2>/dev/null || true
  fi
  if [ -n "$smoke_ctr" ]; then "${BUILDAH[@]}" rm "$smoke_ctr" >/dev/null; fi
}
smoke() {
  smoke_ctr=$("${BUILDAH[@]}" from --pull-never "$IMAGE")
  trap smoke_cleanup EXIT
  "${BUILDAH[@]}" run --isolation chroot --user 10001:10001 "$smoke_ctr" -- chromegate version

  local mnt env
  mnt=$("${BUILDAH[@]}" mount "$smoke_ctr")
  smoke_root=$(mktemp -d /tmp/chromegate-ro.XXXXXX)
  mount --bind "$mnt" "$smoke_root"
  mount -o remount,ro,bind "$smoke_root"
  mount -t tmpfs -o mode=1777 tmpfs "$smoke_root/tmp"
  mount -t tmpfs -o mode=0700,uid=10001,gid=10001 tmpfs "$smoke_root/var/lib/chromegate"
  mount -t proc proc "$smoke_root/proc"
  mount --rbind /dev "$smoke_root/dev"
  mount -t tmpfs -o mode=1777 tmpfs "$smoke_root/dev/shm"
  if touch "$smoke_root/usr/.written" 2>/dev/null; then
    echo "build.sh smoke: the root is not read-only" >&2
    exit 1
  fi
  mapfile -t env < <("${BUILDAH[@]}" inspect --type image --format '{{range .OCIv1.Config.Env}}{{println .}}{{end}}' "$IMAGE" | grep .)
  local in=(env -i "${env[@]}" chroot --userspec=10001:10001 "$smoke_root")
  echo "== read-only root, tmpfs /tmp, /dev/shm and /var/lib/chromegate, uid 10001"
  "${in[@]}" chromegate doctor --headless-shell=on --browser-arg=--no-sandbox
  "${in[@]}" sh -c '
    cd /var/lib/chromegate
    chromegate serve --http=127.0.0.1:18790 --metrics-addr=127.0.0.1:19464 --headless-shell=on \
      --browser-arg=--no-sandbox --log-level=warn </dev/null & pid=$!
    node -e "
      const get = async (p) => { for (let i = 0; i < 100; i++) { try { const r = await fetch(\"http://127.0.0.1:19464\" + p);
        return [r.status, (await r.text()).trim()]; } catch { await new Promise((f) => setTimeout(f, 100)); } } return [0, \"no answer\"]; };
      (async () => { let bad = 0;
        for (const p of [\"/healthz\", \"/readyz\"]) { const [s, b] = await get(p); console.log(\"serve\", p, s, b.slice(0, 80)); bad += s !== 200; }
        process.exit(bad); })();"
    rc=$?; kill -TERM $pid; wait $pid; exit $rc'
  echo "smoke: ok"
}

if [ "${1:-}" = smoke ]; then
  need buildah
  smoke
  exit 0
fi

need buildah
need debootstrap
start=$(date +%s)

# 1. The binary.
mkdir -p "$CTX"
VERSION=${VERSION:-$(git describe --tags --match 'v[0-9]*' 2>/dev/null | sed 's/^v//' || true)}
VERSION=${VERSION:-0.0.0-dev}
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
DATE=$(git log -1 --format=%cI 2>/dev/null || date -u +%FT%TZ)
CGO_ENABLED=0 ${GO:-go} build -trimpath \
  -ldflags "-s -w -X main.version=$VERSION -X main.commit=$COMMIT -X main.date=$DATE" \
  -o "$CTX/chromegate" ./cmd/chromegate
cp "$HERE/Containerfile" "$CTX/Containerfile"

# 2. The base, from Debian's mirror (once).
if ! "${BUILDAH[@]}" inspect --type image "$BASE_IMAGE" >/dev/null 2>&1; then
  echo "== debootstrap $SUITE from $MIRROR into $BASE_IMAGE"
  rootfs=$(mktemp -d /var/tmp/chromegate-rootfs.XXXXXX)
  trap 'rm -rf "$rootfs"' EXIT
  debootstrap --variant=minbase "$SUITE" "$rootfs" "$MIRROR"
  # The sources Debian's own image has: the suite, its updates and its
  # security archive (where Chromium's releases land).
  rm -f "$rootfs/etc/apt/sources.list"
  cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<SRC
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${MIRROR%/debian}/debian-security
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  # As Debian's slim image does: no recommends, no caches kept, no
  # manuals, documentation (but the copyright files) or translations.
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$rootfs/etc/apt/apt.conf.d/90chromegate"
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/90chromegate-slim" <<'DPKG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
DPKG
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb
  tar -C "$rootfs" --numeric-owner -cf "$rootfs.tar" .
  ctr=$("${BUILDAH[@]}" from scratch)
  "${BUILDAH[@]}" add "$ctr" "$rootfs.tar" /
  "${BUILDAH[@]}" config --cmd /bin/bash --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$ctr"
  "${BUILDAH[@]}" commit --rm "$ctr" "$BASE_IMAGE"
  rm -f "$rootfs.tar"
fi

# 3. The image. Behind a TLS-inspecting proxy (a CA of the site's own in
# /usr/local/share/ca-certificates), npm needs that CA to fetch the
# driver: the host's bundle is mounted for the build's RUN steps only,
# never copied into the image. EXTRA_CA_FILE names another bundle.
EXTRA_CA_FILE=${EXTRA_CA_FILE:-}
if [ -z "$EXTRA_CA_FILE" ] && compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
  EXTRA_CA_FILE=/etc/ssl/certs/ca-certificates.crt
fi
ca=()
if [ -n "$EXTRA_CA_FILE" ]; then
  ca=(--volume "$EXTRA_CA_FILE:/run/extra-ca.crt:ro" --build-arg EXTRA_CA=/run/extra-ca.crt)
fi
echo "== buildah bud $IMAGE"
"${BUILDAH[@]}" bud --isolation chroot --pull-never --layers=false "${ca[@]}" \
  --build-arg BASE="$BASE_IMAGE" -f "$CTX/Containerfile" -t "$IMAGE" "$CTX"

# 4. The archive.
rm -f "$OUT"
"${BUILDAH[@]}" push "$IMAGE" "oci-archive:$OUT:$IMAGE"
end=$(date +%s)
echo "== $OUT: $(du -h "$OUT" | cut -f1) (image $("${BUILDAH[@]}" images --format '{{.Size}}' "$IMAGE")), built in $((end - start)) s"
