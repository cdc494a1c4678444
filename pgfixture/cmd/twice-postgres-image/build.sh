#!/usr/bin/env bash
# Builds a local PostgreSQL image that behaves like the official `postgres`
# image, WITHOUT pulling anything from a registry: the root filesystem is
# assembled from the PostgreSQL server installed on this host (Debian's
# postgresql-NN package) plus exactly the shared libraries `ldd` says it
# needs, a POSIX shell and a handful of tools, then built FROM scratch with
# the Dockerfile below (FROM scratch pulls nothing).
#
# Usage: twice-postgres-image [--force] [--tag NAME]
#   (go run github.com/twicekit/twicekit/pgfixture/cmd/twice-postgres-image,
#   which runs this script)
#   Prints the image name on the last line of stdout. Skips the build when
#   the image already exists (unless --force). Needs root (file ownership in
#   the image) and a Docker engine.
set -euo pipefail

here=${TWICE_IMAGE_FILES:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
force=0
tag=""
while [ $# -gt 0 ]; do
  case "$1" in
    --force) force=1 ;;
    --tag) tag=$2; shift ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

log() { echo "build.sh: $*" >&2; }

# The newest installed server: /usr/lib/postgresql/<major>/bin/postgres.
pgbin=""
for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V); do
  [ -x "$d/postgres" ] && [ -x "$d/initdb" ] && pgbin=$d
done
if [ -z "$pgbin" ]; then
  log "no PostgreSQL server under /usr/lib/postgresql/*/bin; install it first (apt-get install -y postgresql)"
  exit 1
fi
pgroot=$(dirname "$pgbin")            # /usr/lib/postgresql/15
major=$(basename "$pgroot")           # 15
sharedir=$("$pgbin/pg_config" --sharedir 2>/dev/null || echo "/usr/share/postgresql/$major")
version=$("$pgbin/postgres" --version | grep -oE '[0-9]+(\.[0-9]+)+' | head -n1)
[ -n "$tag" ] || tag="twicekit/postgres:${major}-local"

if [ "$force" = 0 ] && docker image inspect "$tag" >/dev/null 2>&1; then
  log "image $tag already exists (use --force to rebuild)"
  echo "$tag"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  log "must run as root (the image's files are owned by root and postgres)"
  exit 1
fi

start=$(date +%s)
work=$(mktemp -d /tmp/twicekit-pgimage.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/rootfs
mkdir -p "$root"/usr/{bin,lib,lib64,sbin} "$root"/usr/local/bin
ln -s usr/bin "$root/bin"; ln -s usr/lib "$root/lib"
ln -s usr/lib64 "$root/lib64"; ln -s usr/sbin "$root/sbin"

# Map a host path to the merged-/usr path inside the image.
inpath() {
  case "$1" in
    /lib/*|/lib64/*|/bin/*|/sbin/*) echo "/usr$1" ;;
    *) echo "$1" ;;
  esac
}
# Copy one file (dereferencing symlinks) to the same path in the image.
put() {
  local dst
  dst=$root$(inpath "$1")
  [ -e "$dst" ] && return 0
  mkdir -p "$(dirname "$dst")"
  cp -L --preserve=mode "$1" "$dst"
}

# 1. PostgreSQL: the binaries the entrypoint and clients need, the
#    dynamically loaded modules (without the LLVM JIT: huge, and jit is not
#    wanted for tests), the share files, time zones and the C.UTF-8 locale.
bins=()
for b in postgres initdb pg_ctl psql pg_isready pg_controldata createdb dropdb pg_dump; do
  if [ -x "$pgbin/$b" ]; then put "$pgbin/$b"; bins+=("$pgbin/$b"); fi
done
ln -s postgres "$root$pgbin/postmaster"
mkdir -p "$root$pgroot/lib"
(cd "$pgroot/lib" && find . -maxdepth 1 -type f -name '*.so' ! -name 'llvmjit*' -print0 |
  xargs -0 -I{} cp -L --preserve=mode {} "$root$pgroot/lib/")
mkdir -p "$root$sharedir"
tar -C "$sharedir" --exclude=./man --dereference -cf - . | tar -C "$root$sharedir" -xf -
mkdir -p "$root/usr/share/zoneinfo" "$root/usr/lib/locale"
tar -C /usr/share/zoneinfo --dereference -cf - . | tar -C "$root/usr/share/zoneinfo" -xf -
if [ -d /usr/lib/locale/C.utf8 ]; then cp -a /usr/lib/locale/C.utf8 "$root/usr/lib/locale/"; fi

# 2. A POSIX shell and the few tools the entrypoint (and the in-container
#    port checks some clients run: cat | awk | grep) use.
tools=()
for t in dash cat mkdir chmod chown rm ls id sleep env grep mawk sed setpriv ln mv cp head tail true false; do
  p=$(type -P "$t" || true)
  if [ -n "$p" ]; then put "$(readlink -f "$p")"; tools+=("$(readlink -f "$p")"); fi
done
for t in "${tools[@]}"; do
  n=$(basename "$t")
  [ -e "$root/usr/bin/$n" ] || ln -s "$(inpath "$t")" "$root/usr/bin/$n"
done
ln -sf dash "$root/usr/bin/sh"
ln -sf mawk "$root/usr/bin/awk"

# 3. Every shared library any of those files needs (ldd resolves transitively).
libs=$( { for f in "${bins[@]}" "${tools[@]}" "$pgroot"/lib/*.so; do
            case "$f" in */llvmjit*) continue ;; esac
            ldd "$f" 2>/dev/null || true
          done; } | awk '/=> \// {print $3} /^\t\/[^ ]+ \(/ {print $1}' | sort -u)
for l in $libs; do put "$l"; done
# The dynamic loader under the name the ELF interpreter field asks for.
put /lib64/ld-linux-x86-64.so.2

# 4. Users, groups, directories, the entrypoint.
mkdir -p "$root/etc"
cat >"$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
postgres:x:999:999:PostgreSQL administrator:/var/lib/postgresql:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
PASSWD
cat >"$root/etc/group" <<'GROUP'
root:x:0:
postgres:x:999:
nogroup:x:65534:
GROUP
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$root/etc/nsswitch.conf"
ln -s /usr/share/zoneinfo/Etc/UTC "$root/etc/localtime"
mkdir -p "$root/tmp" "$root/root" "$root/var/lib/postgresql/data" "$root/var/run/postgresql" \
  "$root/docker-entrypoint-initdb.d" "$root/dev" "$root/proc" "$root/sys"
chmod 1777 "$root/tmp"
chown -R 999:999 "$root/var/lib/postgresql" "$root/var/run/postgresql"
chmod 700 "$root/var/lib/postgresql/data"
chmod 3777 "$root/var/run/postgresql"
ln -s /var/run "$root/run" 2>/dev/null || true
install -m 0755 "$here/docker-entrypoint.sh" "$root/usr/local/bin/docker-entrypoint.sh"

# 5. Build: the root filesystem, FROM scratch, with the official image's
#    settings.
tar -C "$root" --numeric-owner -cf "$work/rootfs.tar" .
size=$(du -sh "$work/rootfs.tar" | cut -f1)
cp "$here/Dockerfile" "$work/Dockerfile"
if ! out=$(docker build -q -t "$tag" --build-arg "PG_BIN=$pgbin" --build-arg "PG_MAJOR=$major" \
  --build-arg "PG_VERSION=$version" "$work" 2>&1); then
  log "docker build failed: $out"
  exit 1
fi
log "built $tag (PostgreSQL $version, rootfs $size) in $(( $(date +%s) - start ))s"
echo "$tag"
