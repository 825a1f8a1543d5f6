#!/usr/bin/env bash
# Renders resources/icons/quantscope.svg to the committed 256 px PNG. Run it after editing the SVG.
# Needs ImageMagick with its SVG coder (packages imagemagick and libmagickcore-6.q16-6-extra).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
/usr/bin/convert -background none resources/icons/quantscope.svg -resize 256x256 \
    PNG32:resources/icons/quantscope-256.png
echo "wrote resources/icons/quantscope-256.png"
