#!/usr/bin/env bash
# Builds the .deb from this build tree, unpacks it into a scratch root and checks it the
# way a user meets it: valid desktop entry and AppStream data, icons, man pages, declared
# dependencies, and the installed CLI working from its own share/ (not the build tree).
set -euo pipefail
build_dir=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

for tool in cpack dpkg-deb desktop-file-validate appstreamcli; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (scripts/setup.sh installs it)"; exit 77; }
done

cpack -G DEB --config "$build_dir/CPackConfig.cmake" -B "$scratch/out" >"$scratch/cpack.log" 2>&1 ||
  { cat "$scratch/cpack.log"; exit 1; }
deb=$(ls "$scratch"/out/shardlens_*.deb)
echo "built $(basename "$deb")"
root=$scratch/root
dpkg-deb -x "$deb" "$root"

fail() { echo "FAIL: $*"; exit 1; }
desktop-file-validate "$root/usr/share/applications/org.shardlens.ShardLens.desktop"
appstreamcli validate --no-net --pedantic "$root/usr/share/metainfo/org.shardlens.ShardLens.metainfo.xml" ||
  appstreamcli validate --no-net "$root/usr/share/metainfo/org.shardlens.ShardLens.metainfo.xml"
for f in usr/bin/shardlens-cli usr/share/man/man1/shardlens-cli.1 usr/share/man/man1/shardlens.1 \
         usr/share/icons/hicolor/scalable/apps/org.shardlens.ShardLens.svg \
         usr/share/icons/hicolor/48x48/apps/org.shardlens.ShardLens.png \
         usr/share/shardlens/lessons/seed-lesson.json \
         usr/share/shardlens/python/pyproject.toml usr/share/shardlens/python/shardlens_recorder/__init__.py \
         usr/share/shardlens/python/shardlens_recorder/dump_format.json; do
  [ -e "$root/$f" ] || fail "$f missing from the package"
done
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
[[ $depends == *libc6* ]] || fail "runtime dependencies were not computed"
if [ -e "$root/usr/bin/shardlens" ]; then
  [[ $depends == *libqt6widgets6* ]] || fail "the GUI's Qt dependency is not declared"
fi

cli=$root/usr/bin/shardlens-cli
# Whole outputs first: grep -q / -m1 closing a pipe early would fail the run under pipefail.
version=$(env -u SHARDLENS_RESOURCE_DIR "$cli" --version)
[[ $version == *shardlens-cli* ]] || fail "--version printed: $version"
lessons=$(env -u SHARDLENS_RESOURCE_DIR -u SHARDLENS_LESSONS_DIR "$cli" lessons --format json)
lesson_path=$(grep -m1 '"path"' <<<"$lessons")
[[ $lesson_path == *"$root/usr/share/shardlens/lessons/"* ]] ||
  fail "installed CLI reads lessons from elsewhere: $lesson_path"
set +e
env -u SHARDLENS_RESOURCE_DIR -u SHARDLENS_LESSONS_DIR "$cli" diagnose --preset padding-duplicates >"$scratch/report.txt"
code=$?
set -e
[ "$code" -eq 1 ] || fail "diagnose --preset padding-duplicates exited $code, expected 1"
grep -q "padding-duplicates" "$scratch/report.txt" || fail "report lacks the diagnosis"
# A LibTorch build ships the plugin; the installed CLI must find it and the installed model.
if [ -e "$build_dir/lib/shardlens/libshardlens_torch.so" ]; then
  [ -e "$root/usr/lib/shardlens/libshardlens_torch.so" ] || fail "LibTorch plugin missing from the package"
  [ -e "$root/usr/share/shardlens/models/fashion_mnist_reference.pt" ] || fail "reference model missing"
  if [ -e /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz ]; then
    env -u SHARDLENS_RESOURCE_DIR -u SHARDLENS_TORCH_PLUGIN "$cli" run --world-size 2 \
      --batch-size 50 --limit-batches 1 --format json >"$scratch/run.json" ||
      fail "installed 'shardlens-cli run' failed"
    grep -q '"synced"' "$scratch/run.json" || fail "installed run printed no report"
  fi
fi
echo "deb OK"
