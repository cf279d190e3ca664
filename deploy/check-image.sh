#!/usr/bin/env bash
# npm run check:image — build the image from the Dockerfile for real and start it as the chart runs
# it: uid 10001, a read-only root, only /data and /tmp writable. Needs root (buildah's chroot
# isolation, bind mounts) and reaches no image registry: the Node base is assembled here
# (debootstrap's Debian bookworm minbase plus this machine's node and npm, or AIRLOCK_IMAGE_NODE)
# and given to the Dockerfile as NODE_IMAGE. The build's RUN steps need deb.debian.org and the npm
# registry, as a docker build does. Missing buildah/debootstrap are installed from Debian.
# Prints the figures: base assembly, build time, image size, start-to-ready; exits non-zero on any
# failure. Everything lives under one work folder, removed at the end (AIRLOCK_IMAGE_KEEP=1 keeps it).
# AIRLOCK_IMAGE_ROOTFS=DIR: start from a bookworm minbase debootstrap made earlier instead of a new one.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "check:image: $*" >&2; }
[ "$(id -u)" = 0 ] || { say "needs root (buildah --isolation chroot, bind mounts)"; exit 1; }
need=()
command -v pgrep >/dev/null || need+=(procps)
command -v buildah >/dev/null || need+=(buildah)
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v curl >/dev/null || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]} from Debian"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >&2
fi

version=$(node -p 'require("./package.json").version')
tag="localhost/airlock:$version"
node_bin=$(readlink -f "${AIRLOCK_IMAGE_NODE:-$(command -v node)}")
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
work=$(mktemp -d /var/tmp/airlock-check-image.XXXXXX)
B=(buildah --root "$work/storage" --runroot "$work/run" --storage-driver vfs)
ctr=""
cleanup() {
  set +e
  [ -n "${serve_pid:-}" ] && kill "$serve_pid" 2>/dev/null
  [ -n "$ctr" ] && "${B[@]}" rm "$ctr" >/dev/null 2>&1
  if [ "${AIRLOCK_IMAGE_KEEP:-}" = 1 ]; then say "kept $work"; else "${B[@]}" rm --all >/dev/null 2>&1; rm -rf "$work"; fi
}
trap cleanup EXIT
ms() { date +%s%3N; }

# 1. The Node base: Debian bookworm (minbase: apt, passwd) + node + npm, committed as an image.
t0=$(ms)
if [ -n "${AIRLOCK_IMAGE_ROOTFS:-}" ]; then   # a minbase bookworm made earlier by debootstrap: copied, not changed
  cp -a "$AIRLOCK_IMAGE_ROOTFS" "$work/rootfs"
else
  debootstrap --variant=minbase bookworm "$work/rootfs" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log" >&2; say "debootstrap failed"; exit 1; }
fi
install -m 0755 "$node_bin" "$work/rootfs/usr/local/bin/node"
mkdir -p "$work/rootfs/usr/local/lib/node_modules"
cp -a "$npm_dir" "$work/rootfs/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/rootfs/usr/local/bin/npx"
# A machine behind a TLS-inspecting proxy gives npm its CA bundle (npm config cafile): so does the base,
# in npm's global config, for the build's npm ci (the runtime never calls out).
cafile=$(npm config get cafile)
if [ -n "$cafile" ] && [ "$cafile" != null ] && [ -f "$cafile" ]; then
  mkdir -p "$work/rootfs/usr/local/etc"
  cp "$cafile" "$work/rootfs/usr/local/etc/build-ca.crt"
  echo "cafile=/usr/local/etc/build-ca.crt" >"$work/rootfs/usr/local/etc/npmrc"
fi
rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
base=$("${B[@]}" from scratch)
mnt=$("${B[@]}" mount "$base")
cp -a "$work/rootfs/." "$mnt/"
"${B[@]}" umount "$base" >/dev/null
"${B[@]}" config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd node "$base"
"${B[@]}" commit -q "$base" localhost/airlock-node-base:local >/dev/null
"${B[@]}" rm "$base" >/dev/null
rm -rf "$work/rootfs"
t_base=$(( $(ms) - t0 ))
say "base: Debian bookworm minbase + node $("$node_bin" --version) in $((t_base / 1000)) s"

# 2. The image, from the repository's Dockerfile (docker format: it keeps the HEALTHCHECK).
t0=$(ms)
"${B[@]}" bud --isolation chroot --format docker --pull-never --layers=false \
  --build-arg NODE_IMAGE=localhost/airlock-node-base:local -t "$tag" -f Dockerfile . >"$work/build.log" 2>&1 \
  || { tail -40 "$work/build.log" >&2; say "build failed"; exit 1; }
t_build=$(( $(ms) - t0 ))
size=$("${B[@]}" images --format '{{.Size}}' "$tag")
say "built $tag in $((t_build / 1000)) s, $size"

# 3. Start it as the chart does: the image's own entrypoint, environment and user, read-only root.
cfg() { "${B[@]}" inspect --type image "$tag" | node -e 'console.log(JSON.stringify(JSON.parse(require("fs").readFileSync(0, "utf8")).Docker.config[process.argv[1]]))' "$1"; }
user=$(cfg User | node -p 'JSON.parse(require("fs").readFileSync(0,"utf8"))')
read -r -a entry <<<"$(cfg Entrypoint | node -p 'JSON.parse(require("fs").readFileSync(0,"utf8")).join(" ")')"
mapfile -t envs < <(cfg Env | node -e 'for (const e of JSON.parse(require("fs").readFileSync(0,"utf8"))) console.log(e)')
mapfile -t health < <(cfg Healthcheck | node -e 'for (const a of JSON.parse(require("fs").readFileSync(0,"utf8")).Test.slice(1)) console.log(a)')
[ "${health[0]:-}" = node ] || { say "the image has no HEALTHCHECK running node"; exit 1; }
[ "$user" = "10001:10001" ] || { say "the image's USER is $user, not 10001:10001"; exit 1; }
ctr=$("${B[@]}" from --pull-never "$tag")
mnt=$("${B[@]}" mount "$ctr")
root="$work/root"; data="$work/data"; tmp="$work/tmp"
mkdir -p "$root" "$data" "$tmp/in"
chown 10001:10001 "$data"; chmod 1777 "$tmp"
# A signed package of the fixture site, made with this checkout's airlock on the host.
node dist/src/cli/bin.js keygen --out "$tmp/in/release" >/dev/null
tar -czf "$work/export.tar.gz" -C fixtures/site .
node dist/src/cli/bin.js pack "$work/export.tar.gz" --domain docs.example.com --version-label img-1 --sign-key "$tmp/in/release.key" --out "$tmp/in" \
  >/dev/null 2>"$work/pack.log" || { cat "$work/pack.log" >&2; exit 1; }
rm -f "$tmp/in/release.key"
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
export root data tmp mnt port
export -f say
result=$(unshare --mount --propagation private bash -euo pipefail -c '
  mount --bind "$mnt" "$root"; mount -o remount,bind,ro "$root"
  mount --bind "$data" "$root/data"; mount --bind "$tmp" "$root/tmp"
  mount --rbind /dev "$root/dev"; mount -t proc proc "$root/proc"
  touch "$root/probe" 2>/dev/null && { say "the root is writable"; exit 1; }
  # As in a container: a PID namespace of its own (tini is PID 1), the environment of the image only.
  run() { env -i "${ENVS[@]}" unshare --pid --fork chroot --userspec=10001:10001 "$root" "$@"; }
  ENVS=('"$(printf '%q ' "${envs[@]}")"')
  run '"${entry[*]}"' import /tmp/in/docs.example.com-img-1.airlock --trust /tmp/in/release.pub --activate >&2
  t0=$(date +%s%3N)
  (exec env -i "${ENVS[@]}" unshare --pid --fork chroot --userspec=10001:10001 "$root" '"${entry[*]}"' serve --host 127.0.0.1 --port "$port" >"$tmp/serve.out" 2>"$tmp/serve.err") &
  pid=$!   # unshare: it waits for tini (PID 1 inside) and exits with its status
  ok=""
  for _ in $(seq 1 300); do
    if curl -fs "http://127.0.0.1:$port/_airlock/ready" >/dev/null; then ok=1; break; fi
    sleep 0.1
  done
  t_ready=$(( $(date +%s%3N) - t0 ))
  [ -n "$ok" ] || { cat "$tmp/serve.err" >&2; kill "$pid"; say "not ready within 30 s"; exit 1; }
  ver=$(curl -fsI "http://127.0.0.1:$port/" | tr -d "\r" | sed -n "s/^x-airlock-version: //Ip")
  [ "$ver" = img-1 ] || { say "served version \"$ver\", not img-1"; kill "$pid"; exit 1; }
  curl -fs "http://127.0.0.1:$port/_airlock/health" >/dev/null
  env -i "${ENVS[@]}" AIRLOCK_PORT="$port" chroot --userspec=10001:10001 "$root" '"$(printf '%q ' "${health[@]}")"' || { say "the HEALTHCHECK failed"; kill "$pid"; exit 1; }
  tini=$(pgrep -P "$pid")
  kill -TERM "$tini"; code=0; wait "$pid" || code=$?
  [ "$code" = 0 ] || { cat "$tmp/serve.err" >&2; say "serve exited $code on SIGTERM"; exit 1; }
  echo "$t_ready"
')
say "as uid 10001 on a read-only root: import, serve, /_airlock/ready 200 in ${result} ms, health check ok, SIGTERM exit 0"
echo "{\"image\":\"$tag\",\"baseSeconds\":$((t_base / 1000)),\"buildSeconds\":$((t_build / 1000)),\"size\":\"$size\",\"startToReadyMs\":$result}"
