#!/usr/bin/env bash
# Renders the HTML report of one or more run directories and a full-page PNG screenshot of it in
# headless Chromium (Debian package `chromium`, installed by scripts/setup.sh):
#   scripts/report_screenshot.sh RUN_DIR [RUN_DIR...] OUT_PREFIX
# writes OUT_PREFIX.html (`ptxbench report RUN_DIR... --html`) and OUT_PREFIX.png, and prints
# the markdown tables. Extra `ptxbench report` flags go in PTXB_REPORT_FLAGS (e.g.
# "--turn-limits 1,4,8"); PTXB_SHOT_WIDTH / PTXB_SHOT_HEIGHT override the window size (the
# height is estimated from the page so the screenshot holds all of it); PTXB_SHOT_FRAGMENT
# (e.g. "viewer=3&turn=2") opens the trajectory viewer at that trajectory and turn, scrolled
# into view, for a screenshot of the viewer. docs/report.md.
set -euo pipefail
if (($# < 2)); then
  echo "usage: $0 RUN_DIR [RUN_DIR...] OUT_PREFIX" >&2
  exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PTXBENCH=${PTXBENCH:-$ROOT/build/ptxbench}
run_dirs=("${@:1:$#-1}")
prefix=${!#}
command -v chromium >/dev/null || {
  echo "$0: chromium not found (apt-get install chromium, or scripts/setup.sh)" >&2
  exit 1
}
[[ -x $PTXBENCH ]] || {
  echo "$0: $PTXBENCH not built (scripts/setup.sh)" >&2
  exit 1
}
mkdir -p "$(dirname "$prefix")"
html=$(realpath -m "$prefix.html")
png=$(realpath -m "$prefix.png")
# shellcheck disable=SC2086  # PTXB_REPORT_FLAGS is a list of flags
"$PTXBENCH" report "${run_dirs[@]}" ${PTXB_REPORT_FLAGS:-} --html "$html"

# Chromium screenshots the window, not the page: size the window to the page. Per task section
# two rows of 254-px plots plus headings (~620 px); per table row ~22 px; headings and notes.
sections=$(grep -c '<section ' "$html" || true)
rows=$(grep -c '^<tr>' "$html" || true)
width=${PTXB_SHOT_WIDTH:-1400}
# The matrix and runs tables (~400 px) and the trajectory viewer (~1000 px) come on top.
height=${PTXB_SHOT_HEIGHT:-$((1700 + sections * 620 + rows * 22 + 3 * 80))}
url="file://$html${PTXB_SHOT_FRAGMENT:+#$PTXB_SHOT_FRAGMENT}"

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# --no-sandbox: root cannot use Chromium's sandbox, and the page is our own file. Same flags as
# tests/report/browser_util.h.
HOME=$profile timeout 120 chromium --headless --no-sandbox --disable-gpu \
  --user-data-dir="$profile/profile" --no-first-run --disable-extensions \
  --disable-background-networking --host-resolver-rules="MAP * ~NOTFOUND" --hide-scrollbars \
  --window-size="$width,$height" --screenshot="$png" "$url" >/dev/null 2>"$profile/log" || {
  echo "$0: chromium failed:" >&2
  tail -20 "$profile/log" >&2
  exit 1
}
echo "report_screenshot: wrote $html and $png (${width}x${height})" >&2
