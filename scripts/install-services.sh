#!/usr/bin/env bash
# Installs the engines the tests start on loopback ports (Debian's redis-server and haproxy; Postgres when missing)
# and the checkers they run (promtool, from Debian's prometheus; kubectl for `kubectl kustomize`, from Debian's
# kubernetes-client, when the machine has no kubectl),
# without starting their system services: a policy-rc.d answering 101 ("not allowed") is in place during the install.
set -euo pipefail

missing=()
command -v redis-server >/dev/null || missing+=(redis-server)
command -v haproxy >/dev/null || missing+=(haproxy)
command -v pg_config >/dev/null || missing+=(postgresql)
command -v promtool >/dev/null || missing+=(prometheus) # for promtool (alert rules, metrics); its daemon stays off
command -v kubectl >/dev/null || missing+=(kubernetes-client) # kubectl kustomize deploy/k8s (tests/deploy)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "missing: ${missing[*]}; run 'sudo apt-get install ${missing[*]}'" >&2
	exit 1
fi

policy=/usr/sbin/policy-rc.d
saved=""
if [ -e "$policy" ]; then
	saved=$(mktemp)
	cp -p "$policy" "$saved"
fi
restore() {
	if [ -n "$saved" ]; then mv "$saved" "$policy"; else rm -f "$policy"; fi
}
trap restore EXIT
printf '#!/bin/sh\nexit 101\n' >"$policy"
chmod 755 "$policy"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
