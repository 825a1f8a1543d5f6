#!/usr/bin/env bash
# The committed demo model is exactly what its builder writes.
set -euo pipefail
builder=$1 committed=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$builder" "$tmp/demo.onnx"
if ! cmp -s "$tmp/demo.onnx" "$committed"; then
    echo "resources/models/demo_cnn.onnx differs from what make_demo_model writes; regenerate it:" >&2
    echo "  $builder $committed" >&2
    exit 1
fi
echo "demo model reproducible"
