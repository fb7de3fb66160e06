# Sourced by scripts/install-*-deps.sh: install_missing PACKAGE... installs, from Debian's
# packages, those of PACKAGE... that are not installed yet. Idempotent and quiet; needs root
# (apt-get).

install_missing() {
    local missing=() package
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        export DEBIAN_FRONTEND=noninteractive
        # Packages must not start services (iperf3 ships a unit; openssh-server would start sshd
        # on this machine): keep any policy in place, else refuse service starts for the
        # duration of the install.
        local policy=/usr/sbin/policy-rc.d
        if [ ! -e "$policy" ]; then
            printf '#!/bin/sh\nexit 101\n' >"$policy"
            chmod 755 "$policy"
            trap 'rm -f /usr/sbin/policy-rc.d' EXIT
        fi
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
}
