#!/usr/bin/env bash
# The Debian packages the tests use, installed when missing: PostgreSQL's server
# binaries (tests/postgres.py starts a throwaway server; no cluster service is
# started) and Chromium (the browser tests of the report page). As root, or with
# sudo; elsewhere it says in one line what to install.
set -euo pipefail

packages=()
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    packages+=(postgresql)
fi
if ! command -v chromium >/dev/null 2>&1; then
    packages+=(chromium)
fi
[ "${#packages[@]}" -eq 0 ] && exit 0

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo=(sudo)
    else
        sudo=(none)
    fi
fi
if [ "${sudo[*]}" = none ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "the tests need ${packages[*]}: install them (Debian: apt-get install" \
        "${packages[*]}), or run make test as root, which installs them" >&2
    exit 2
fi

# A policy-rc.d that exits 101 keeps the packages from starting services.
policy=/usr/sbin/policy-rc.d created=0 status=0
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
    "${sudo[@]}" chmod 755 "$policy"
    created=1
fi
echo "installing ${packages[*]} for the tests" >&2
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null ||
    status=$?
if [ "$created" -eq 1 ]; then
    "${sudo[@]}" rm -f "$policy"
fi
exit "$status"
