#!/usr/bin/env bash
# cargo-fuzz (libFuzzer) over the compiled reader and decoder, for a fixed time; on demand, not in CI.
#
#   fuzz/core/run.sh [SECONDS]        # default 1800 (30 minutes), one core
#
# Needs a nightly toolchain (rustup toolchain install nightly) and cargo-fuzz
# (cargo install cargo-fuzz). The corpus starts from the captures of tests/data and
# sample_traces (up to 450 kB each, and a gzipped copy of the small ones); it and what the run
# finds are kept in fuzz/core/corpus and fuzz/core/artifacts (git-ignored). A crash, a hang
# (-timeout, 10 s) or an allocation over 2 GB stops the run with the input in artifacts/reader/.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-1800}"
command -v cargo >/dev/null || export PATH="$HOME/.cargo/bin:$PATH"
mkdir -p corpus/reader
find ../../tests/data ../../sample_traces -type f \( -name '*.pcap' -o -name '*.pcapng' -o -name '*.gz' \) -size -450k |
  while read -r f; do
    cp -n "$f" "corpus/reader/$(basename "$f")"
    if [ "$(stat -c %s "$f")" -lt 20000 ] && [ "${f%.gz}" = "$f" ]; then gzip -c "$f" > "corpus/reader/$(basename "$f").gz"; fi
  done
exec cargo +nightly fuzz run --fuzz-dir . reader corpus/reader -- \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=1048576 -print_final_stats=1
