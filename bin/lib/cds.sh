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
# First run: java (exec'd, so it keeps this script's pid) records the classes and, as it exits,
# writes the cache to FILE.PID.tmp (JDK 25: the training JVM records FILE.PID.tmp.config and a JVM
# it starts writes the cache from it and removes the configuration when done). The next run finds
# that file, and once its pid has ended and the file is complete renames it to FILE, atomically,
# so that no JVM ever maps half a cache; an incomplete one (a run killed while writing) is
# removed and recorded again. A run that starts while another records runs without a cache. Later
# runs start from FILE. VERBS4J_CDS=0: no cache at all.

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
    # a recording: still running (run without a cache), finished (take it) or killed (drop it)
    for f in "$VERBS4J_CDS_FILE".*.tmp; do
        [ -e "$f" ] || continue
        pid=${f%.tmp}
        pid=${pid##*.}
        if [ -d "/proc/$pid" ]; then
            return 0
        fi
        if [ -s "$f" ] && [ ! -e "$f.config" ] && mv -f "$f" "$VERBS4J_CDS_FILE" 2>/dev/null; then
            verbs4j_cds_plan "$@"
            return 0
        fi
        rm -f "$f" "$f.config"
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
