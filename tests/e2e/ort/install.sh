#!/usr/bin/env bash
# Installs onnxruntime-node (the reference runtime of the e2e tests) into DIR, default
# tests/e2e (where packaging/test.sh puts it); the tests that need it skip (77) when it is missing. node_modules is never committed.
set -euo pipefail
dir=${1:-tests/e2e}
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || npm init -y >/dev/null
npm install --ignore-scripts --no-audit --no-fund onnxruntime-node
