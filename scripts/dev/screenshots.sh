#!/usr/bin/env bash
# Regenerates the screenshots in docs/ (README.md and docs/GUI.md show them): runs the GUI
# under Xvfb on a 1600x1000 screen with fresh settings, drives hover and clicks with xdotool
# and grabs the screen with ImageMagick's import. Needs xvfb, xdotool and imagemagick (Debian
# packages).
#
#   scripts/dev/screenshots.sh                # uses build/default
#   BUILD_DIR=build/x scripts/dev/screenshots.sh
#   SHOTS="gui-run-file.png" scripts/dev/screenshots.sh   # only the named shots
set -euo pipefail
cd "$(dirname "$0")/../.."
for tool in xvfb-run xdotool import; do
  command -v "$tool" >/dev/null || { echo "screenshots.sh needs $tool (apt-get install xvfb xdotool imagemagick)" >&2; exit 2; }
done
BUILD_DIR=${BUILD_DIR:-build/default}
GUI="$PWD/$BUILD_DIR/app/gui/shardlens"
CLI="$PWD/$BUILD_DIR/app/cli/shardlens-cli"
OUT="$PWD/docs"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export HOME="$WORK/home" SHARDLENS_LESSONS_DIR="$PWD/resources/lessons"
mkdir -p "$HOME"

want() { [ -z "${SHOTS:-}" ] || [[ " $SHOTS " == *" $1 "* ]]; }

# shot NAME "xdotool actions" GUI-ARGS...   (FIRST_START=1: no settings, welcome panel shown)
shot() {
  local name=$1 actions=$2
  shift 2
  want "$name" || return 0
  rm -rf "$HOME/.config"
  if [ -z "${FIRST_START:-}" ]; then
    # Every other shot shows the views, not the first-start panel above them.
    mkdir -p "$HOME/.config/ShardLens"
    printf '[welcome]\ndismissed=true\n' >"$HOME/.config/ShardLens/shardlens.conf"
  fi
  xvfb-run -a -s "-screen 0 1600x1000x24" bash -c '
    "$0" "${@:3}" & pid=$!
    sleep 6
    [ -n "$2" ] && xdotool $2
    import -window root "$1"
    kill $pid' "$GUI" "$OUT/$name" "$actions" "$@" 2>&1 | grep -v XDG_RUNTIME_DIR || true
  echo "wrote docs/$name"
}

cat >"$WORK/fashion.json" <<'JSON'
{"name": "fashion-mnist-3-ranks", "title": "Fashion-MNIST test set on 3 ranks",
 "dataset": "fashion-mnist:test", "predictor": "noisy:accuracy=0.85,seed=3,structure=adjacent",
 "world_size": 3, "batch_size": 64}
JSON
cat >"$WORK/classes1000.json" <<'JSON'
{"name": "1000-classes", "title": "1000 classes, 100,000 samples, 8 ranks, shuffled",
 "dataset": "synthetic:classes=1000,per-class=100", "predictor": "noisy:accuracy=0.8,seed=1,structure=adjacent",
 "world_size": 8, "batch_size": 32, "shuffle": true, "epoch": 3}
JSON

shot gui-seed-lesson.png "" --preset seed-lesson
# First start: no settings, so the seed lesson with the "What you are looking at" panel.
FIRST_START=1 shot gui-first-start.png ""
# A run file imported from per-rank CSV dumps, as a user's own torch.distributed run would
# give: 1003 samples on 4 ranks, DistributedSampler padding index 0 once; every sample was
# evaluated, so the expected matrix is known from the records.
if want gui-run-file.png; then
  python3 - "$WORK" <<'PY'
import random, sys
n, world, rng = 1003, 4, random.Random(1)
target = [rng.randrange(10) for i in range(n)]
pred = [t if rng.random() < 0.88 else (t + rng.choice((1, 9))) % 10 for t in target]
order = list(range(n)) + list(range(-n % world))  # torch pads with the first indices
for r in range(world):
    with open(f"{sys.argv[1]}/rank{r}.csv", "w") as f:
        f.write("rank,index,target,prediction\n")
        for i in order[r::world]:
            f.write(f"{r},{i},{target[i]},{pred[i]}\n")
PY
  "$CLI" import "$WORK"/rank{0,1,2,3}.csv --classes 10 --out "$WORK/my-eval.slrun" >/dev/null
  shot gui-run-file.png "" "$WORK/my-eval.slrun"
fi
# Hover a cell of a wrong row of the synced matrix (click first: no window manager, so
# the window must be activated for tooltips).
shot gui-padding-hover.png "mousemove 547 204 click 1 sleep 0.5 mousemove 548 205 sleep 2.5" \
  --preset padding-duplicates
shot gui-charts.png "mousemove 1334 642 click 1 sleep 1" --preset sanity-leak
[ -f /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz ] &&
  shot gui-fashion-samples.png "mousemove ${FASHION_CELL:-693 319} click 1 sleep 1.5" "$WORK/fashion.json"
# Zoomed in around the diagonal of the reported matrix (wheel up = zoom in).
shot gui-1000-classes.png "mousemove 470 140 click 4 click 4 click 4 click 4 click 4 click 4 sleep 1" \
  "$WORK/classes1000.json"
# Run > Run for real… (Ctrl+Shift+G) on 3000 Fashion-MNIST test images and 2 gloo ranks with
# the reference model: the dialog mid-run, then the run beside its simulation with the
# model: predictor (needs this build's LibTorch plugin).
cat >"$WORK/real.json" <<'JSON'
{"name": "fashion-3000", "title": "3000 Fashion-MNIST test images on 2 ranks",
 "dataset": "fashion-mnist:test,first=3000", "predictor": "model:reference",
 "world_size": 2, "batch_size": 16, "sampler": "distributed", "shuffle": true}
JSON
# Mid-run: the whole test set, so the moment lasts on a loaded machine too.
sed 's/first=3000/first=10000/; s/3000 Fashion/10000 Fashion/; s/fashion-3000/fashion-10000/; s/"batch_size": 16/"batch_size": 1/' \
  "$WORK/real.json" >"$WORK/real-full.json"
REAL_RUN="mousemove 800 990 click 1 sleep 1 key ctrl+shift+g sleep 3 mousemove 1032 563 click 1"
if [ -f /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz ]; then
  shot gui-run-for-real.png "$REAL_RUN sleep ${REAL_RUN_MID:-7}" "$WORK/real-full.json"
  shot gui-real-vs-simulation.png "$REAL_RUN sleep 45" "$WORK/real.json"
fi
# A figure as the CLI writes it.
want figure-synced-padding.png || exit 0
"$CLI" export --preset padding-duplicates --out "$WORK/fig" --formats png --dpi 110 >/dev/null
cp "$WORK/fig/synced.png" "$OUT/figure-synced-padding.png"
echo "wrote docs/figure-synced-padding.png"
