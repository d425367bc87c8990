#!/usr/bin/env bash
# Installs the system tools flexfmu's delivery tests use, from Debian or Ubuntu packages,
# non-interactively (CI: .ci/run calls this before the test suite):
#   gcc-mingw-w64-x86-64-win32  MinGW-w64, which cross-compiles the win64 DLL of every FMU
#   wine, wine64                Wine, which runs that DLL and the Windows test programs
#   octave, liboctave-dev       GNU Octave and mkoctfile, which build and run the MEX gateway
#   unzip                       what Octave's unzip() calls (matlab_glue/flexfmu_fmu_info.m)
# Needs apt-get, and root or sudo. Installs nothing when every tool is already on the PATH.
# Without these tools flexfmu still works (an export skips win64 and says why) and the tests
# that need them skip with the reason.
set -euo pipefail

PACKAGES=(gcc-mingw-w64-x86-64-win32 wine wine64 octave liboctave-dev unzip)
TOOLS=(x86_64-w64-mingw32-gcc wine wineboot wineserver octave mkoctfile unzip)

missing=()
for tool in "${TOOLS[@]}"; do
    command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-tools: every tool is installed (${TOOLS[*]})"
    exit 0
fi
echo "install-tools: missing ${missing[*]}; installing ${PACKAGES[*]}"
if ! command -v apt-get >/dev/null; then
    echo "install-tools: apt-get not found; install MinGW-w64, Wine and GNU Octave with your package manager" >&2
    exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
        echo "install-tools: run as root or install sudo" >&2
        exit 1
    fi
    sudo=(sudo)
fi
start=$SECONDS
"${sudo[@]}" apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${PACKAGES[@]}"
echo "install-tools: installed in $((SECONDS - start)) s"
