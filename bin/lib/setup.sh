# Sourced by bin/demo and bin/test: a JDK >= 22 in JAVA_HOME, and Maven.
. "$root/bin/lib/java.sh"

JAVA_HOME=$(verbs4j_find_jdk) || exit 2
export JAVA_HOME
export PATH="$JAVA_HOME/bin:$PATH"

# Runs apt-get as root, or through sudo; explains what to install when neither is possible.
verbs4j_apt_install() {
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
            sudo="sudo"
        else
            echo "verbs4j: please install these Debian/Ubuntu packages: $*" >&2
            return 1
        fi
    fi
    if ! command -v apt-get >/dev/null; then
        echo "verbs4j: no apt-get here; please install: $*" >&2
        return 1
    fi
    echo "verbs4j: installing $* ..." >&2
    local apt=(apt-get -o DPkg::Lock::Timeout=600) # waits for another apt (e.g. unattended upgrades)
    $sudo env DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq "$@" >/dev/null 2>&1 || {
        $sudo "${apt[@]}" update -qq >/dev/null 2>&1 || true
        $sudo env DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq "$@" >/dev/null
    }
}

need=()
command -v mvn >/dev/null || need+=(maven)
command -v gcc >/dev/null || need+=(gcc)
[ -f /usr/include/infiniband/verbs.h ] || need+=(libibverbs-dev)
[ -f /usr/include/rdma/rdma_cma.h ] || need+=(librdmacm-dev)
command -v ibv_devinfo >/dev/null || need+=(ibverbs-utils)
if [ ${#need[@]} -gt 0 ]; then
    verbs4j_apt_install "${need[@]}" || exit 2
fi
