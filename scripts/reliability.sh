#!/bin/sh
# Runs the reliability tests and fuzz targets and writes RELIABILITY.md.
# Usage: scripts/reliability.sh [-fuzztime 30s] [-race=false] [-o RELIABILITY.md]
set -eu
cd "$(dirname "$0")/.."
exec "${GO:-go}" run ./internal/tools/reliability "$@"
