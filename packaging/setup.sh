#!/usr/bin/env bash
# Installs the Debian 12 packages listed in packaging/debian-packages.txt. Idempotent: when every
# package is already installed it touches nothing and needs no privileges; otherwise it refreshes the
# package index and installs only what is missing, as root directly or through sudo.
#
# usage: packaging/setup.sh [--with-zoo]
#   --with-zoo   also install the '@zoo' packages (PyTorch, torchvision, scikit-learn) for benchmarks and retraining the demo model
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
list_file="$here/debian-packages.txt"

usage() {
    cat <<'USAGE'
usage: packaging/setup.sh [--with-zoo]
  --with-zoo   also install the '@zoo' packages (PyTorch, torchvision, scikit-learn) for benchmarks and retraining the demo model
USAGE
}

with_zoo=0
for arg in "$@"; do
    case $arg in
        --with-zoo) with_zoo=1 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "setup.sh: unknown argument '$arg'" >&2; usage >&2; exit 2 ;;
    esac
done

# Prints the wanted package names: comments and blank lines dropped, '@zoo' lines only on request.
wanted_packages() {
    sed -e 's/#.*//' "$list_file" | while read -r name tag; do
        [[ -z $name ]] && continue
        [[ $tag == "@zoo" && $with_zoo == 0 ]] && continue
        echo "$name"
    done
}

# Names that installed packages provide (a nodejs build that bundles npm provides 'npm', say).
provided_names() {
    dpkg-query -W -f='${db:Status-Status}|${Provides}\n' 2>/dev/null |
        awk -F'|' '$1 == "installed" { print $2 }' |
        tr ',' '\n' | sed -E 's/\(.*\)//; s/:any//; s/^[[:space:]]+//; s/[[:space:]]+$//' |
        grep -v '^$' | sort -u
}

is_installed() {
    dpkg-query -W -f='${db:Status-Status}\n' "$1" 2>/dev/null | grep -qx installed
}

mapfile -t wanted < <(wanted_packages)
provided=$(provided_names)
missing=()
for package in "${wanted[@]}"; do
    if is_installed "$package" || grep -qxF "$package" <<<"$provided"; then
        continue
    fi
    missing+=("$package")
done

if ((${#missing[@]} == 0)); then
    echo "setup.sh: all ${#wanted[@]} Debian packages are installed"
    exit 0
fi

if ((EUID == 0)); then
    as_root=()
elif command -v sudo >/dev/null; then
    as_root=(sudo)
else
    echo "setup.sh: need root or sudo to install: ${missing[*]}" >&2
    exit 1
fi

echo "setup.sh: installing ${#missing[@]} package(s): ${missing[*]}"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"

for package in "${missing[@]}"; do
    if ! is_installed "$package"; then
        echo "setup.sh: '$package' is still not installed" >&2
        exit 1
    fi
done
echo "setup.sh: done"
