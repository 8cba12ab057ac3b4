# shellcheck shell=bash
# Builds what the benchmarks and demos run, quietly, from the project's root folder. Sourced.
#   build_preset PRESET TARGET...   with a configure and build preset (build/PRESET)
#   build_bench TARGET              build/bench: RelWithDebInfo with the benchmarks (S3LECT_BENCH=ON)
#   release_s3lect                  builds s3lect with the release preset and prints its path
build_preset() {
  local preset=$1
  shift
  cmake --preset "$preset" >/dev/null &&
    cmake --build --preset "$preset" -j "$(nproc)" --target "$@" >/dev/null
}

release_s3lect() {
  build_preset release s3lect_cli && echo "$PWD/build/release/bin/s3lect"
}

build_bench() {
  if [[ ! -d build/bench ]]; then
    cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DS3LECT_BENCH=ON \
      -DS3LECT_BUILD_TESTS=OFF >/dev/null || return
  fi
  cmake --build build/bench -j "$(nproc)" --target "$1" >/dev/null
}
