#!/usr/bin/env bash
# Installs the system libraries AttachmentFetcher builds against (Debian/Ubuntu), if missing.
set -euo pipefail
packages=(libcurl4-openssl-dev libmagic-dev)
if dpkg -s "${packages[@]}" >/dev/null 2>&1; then
    exit 0
fi
as_root=()
if [ "$(id -u)" -ne 0 ]; then as_root=(sudo); fi
"${as_root[@]}" apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${packages[@]}"
