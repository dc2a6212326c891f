#!/bin/sh
# Debian packages the test suite and the speech tools need: Chromium + ChromeDriver (the web
# page test), espeak-ng, flite and festival with three English voices (punctum synth).
# Installs only what is missing; uses sudo when not root. Called by `make test`; safe to run
# again.
set -eu
missing=""
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
command -v chromedriver >/dev/null 2>&1 || missing="$missing chromium-driver"
command -v espeak-ng >/dev/null 2>&1 || missing="$missing espeak-ng"
command -v flite >/dev/null 2>&1 || missing="$missing flite"
command -v festival >/dev/null 2>&1 || missing="$missing festival"
# festival voices are data packages (no command to look for)
for voice in festvox-kallpc16k festvox-kdlpc16k festvox-us-slt-hts; do
    dpkg-query -W -f='${Status}' "$voice" 2>/dev/null | grep -q "ok installed" \
        || missing="$missing $voice"
done
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "installing Debian packages:$missing"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
