#!/bin/sh
# vendor-web.sh fetches the front-end library of the dashboard and of the
# simulator's HTML report — uPlot, MIT licence — from the npm registry and
# copies its minified build and its licence into internal/assets/web/uplot/, where
# the Go build embeds them. The copies are committed, so a build needs
# neither npm nor the network; run this (make vendor-web) only to update
# them, after changing UPLOT_VERSION.
set -eu
UPLOT_VERSION="${UPLOT_VERSION:-1.6.32}"
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/internal/assets/web/uplot"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
npm pack --silent "uplot@$UPLOT_VERSION" >/dev/null
tar -xzf "uplot-$UPLOT_VERSION.tgz"
mkdir -p "$dest"
cp package/dist/uPlot.iife.min.js "$dest/uPlot.iife.min.js"
cp package/dist/uPlot.min.css "$dest/uPlot.min.css"
cp package/LICENSE "$dest/LICENSE"
echo "$UPLOT_VERSION" > "$dest/VERSION"
echo "vendored uPlot $UPLOT_VERSION into $dest"
