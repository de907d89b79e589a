# Sourced by bin/verbs4j: the class cache of a tool (JDK >= 25: an AOT cache, -XX:AOTCache;
# JDK 22-24: a dynamic CDS archive, -XX:SharedArchiveFile), built by the tool's first run and used
# by the later ones.
#
# One cache per tool, JDK, VERBS4J_JAVA_OPTS and build of the module jars (their sizes and times
# are in the key: a rebuild makes a new cache and the JVM would refuse an old one anyway). It lives
# in VERBS4J_CDS_DIR, by default target/cds of the checkout (in the Soft-RoCE VM the checkout is
# shared read-write, so a cache made in the VM serves later boots and the host alike), or, where
# that is not writable, ${XDG_CACHE_HOME:-~/.cache}/verbs4j/cds; with neither, no cache.
#
# First run: the JVM runs as a child of this script (not exec'd, so that the cache can be renamed
# into place when it has ended; TERM, INT and HUP are passed on to it) and writes the cache to a
# file of its own as it exits; the script then renames it to the cache's name, atomically, so a
# JVM starting meanwhile never sees half a file. A run that starts while another is recording
# runs without a cache. Later runs: exec java with the cache. VERBS4J_CDS=0: no cache at all.

# Prints a short key of the JDK $1, the JVM options and the jars in $2.
verbs4j_cds_key() {
    {
        printf '%s\n' "$1" "${VERBS4J_JAVA_OPTS:-}"
        # shellcheck disable=SC2012
        ls -lL --time-style=+%s "$2"/*.jar 2>/dev/null | awk '{print $5, $6, $7}'
    } | sha256sum | cut -c1-16
}

# Prints the cache directory (created), or nothing when none is writable.
verbs4j_cds_dir() {
    local root=$1 d
    for d in "${VERBS4J_CDS_DIR:-}" "$root/target/cds" "${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/verbs4j/cds"; do
        [ -n "$d" ] || continue
        if mkdir -p "$d" 2>/dev/null && [ -w "$d" ]; then
            printf '%s\n' "$d"
            return 0
        fi
        [ -z "${VERBS4J_CDS_DIR:-}" ] || [ "$d" != "$VERBS4J_CDS_DIR" ] || return 0 # asked for this one only
    done
}

# Sets VERBS4J_CDS_MODE (use, record or none), VERBS4J_CDS_OPTS (the JVM options) and
# VERBS4J_CDS_FILE/VERBS4J_CDS_TEMP for JDK $1, jars in $2, tool $3, checkout $4.
verbs4j_cds_plan() {
    local jdk=$1 modules=$2 tool=$3 root=$4 version dir base f pid
    VERBS4J_CDS_MODE=none
    VERBS4J_CDS_OPTS=()
    [ "${VERBS4J_CDS:-1}" != 0 ] || return 0
    version=$(verbs4j_jdk_version "$jdk")
    [ -n "$version" ] || return 0
    dir=$(verbs4j_cds_dir "$root")
    [ -n "$dir" ] || return 0
    base="$dir/$tool-$(verbs4j_cds_key "$jdk" "$modules")"
    if [ "$version" -ge 25 ]; then
        VERBS4J_CDS_FILE=$base.aot
    else
        VERBS4J_CDS_FILE=$base.jsa
    fi
    if [ -s "$VERBS4J_CDS_FILE" ]; then
        VERBS4J_CDS_MODE=use
        if [ "$version" -ge 25 ]; then
            VERBS4J_CDS_OPTS=(-XX:AOTCache="$VERBS4J_CDS_FILE")
        else
            VERBS4J_CDS_OPTS=(-XX:SharedArchiveFile="$VERBS4J_CDS_FILE" -Xshare:auto)
        fi
        return 0
    fi
    # another run recording this cache right now: run without one (its files end in .PID.tmp)
    for f in "$VERBS4J_CDS_FILE".*.tmp; do
        [ -e "$f" ] || continue
        pid=${f%.tmp}
        pid=${pid##*.}
        if [ -d "/proc/$pid" ]; then
            return 0
        fi
        rm -f "$f" "$f.config" # left by a run that was killed
    done
    VERBS4J_CDS_MODE=record
    VERBS4J_CDS_TEMP=$VERBS4J_CDS_FILE.$$.tmp
    if [ "$version" -ge 25 ]; then
        # the JVM writes the cache as it exits (in a JVM of its own); its messages go nowhere
        VERBS4J_CDS_OPTS=(-XX:AOTCacheOutput="$VERBS4J_CDS_TEMP" -XX:+UnlockDiagnosticVMOptions -XX:-DisplayVMOutput
            -Xlog:aot=off -Xlog:cds=off)
    else
        VERBS4J_CDS_OPTS=(-XX:ArchiveClassesAtExit="$VERBS4J_CDS_TEMP" -Xlog:cds=off)
    fi
}

# Runs "$@" (the java command line) as a child, passing on TERM, INT and HUP, then renames the
# cache it wrote into place; exits with the JVM's status.
verbs4j_cds_record() {
    local child status
    "$@" &
    child=$!
    trap 'kill -TERM "$child" 2>/dev/null' TERM
    trap 'kill -INT "$child" 2>/dev/null' INT
    trap 'kill -HUP "$child" 2>/dev/null' HUP
    while :; do
        wait "$child" && status=0 || status=$?
        kill -0 "$child" 2>/dev/null || break # else a signal interrupted the wait
    done
    trap - TERM INT HUP
    if [ -s "$VERBS4J_CDS_TEMP" ]; then
        mv -f "$VERBS4J_CDS_TEMP" "$VERBS4J_CDS_FILE"
    fi
    rm -f "$VERBS4J_CDS_TEMP" "$VERBS4J_CDS_TEMP.config"
    exit "$status"
}
