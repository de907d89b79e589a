# Sourced by the bin/ scripts: finds a JDK 22 or newer.
# JAVA_HOME first, then the java on PATH, then the JDKs under /usr/lib/jvm (newest first).

# Prints the feature version (17, 22, 25…) of the JDK at $1, or nothing.
verbs4j_jdk_version() {
    local home=$1 v=""
    [ -x "$home/bin/java" ] && [ -x "$home/bin/javac" ] || return 0
    if [ -f "$home/release" ]; then
        v=$(sed -n 's/^JAVA_VERSION="\([0-9.]*\).*/\1/p' "$home/release")
    fi
    if [ -z "$v" ]; then
        v=$("$home/bin/java" -version 2>&1 | sed -n '1s/.*version "\([0-9.]*\).*/\1/p')
    fi
    v=${v#1.}
    echo "${v%%.*}"
}

# Prints the home of a JDK >= 22; on failure explains on stderr and returns 1.
verbs4j_find_jdk() {
    local candidates=() seen="" c v java_on_path
    [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
    if java_on_path=$(command -v java 2>/dev/null); then
        candidates+=("$(dirname "$(dirname "$(readlink -f "$java_on_path")")")")
    fi
    for c in $(ls -d /usr/lib/jvm/*/ /usr/local/lib/jvm/*/ /opt/java/*/ 2>/dev/null | sort -rV); do
        candidates+=("${c%/}")
    done
    for c in "${candidates[@]}"; do
        case "$seen" in *"  $c ("*) continue ;; esac
        v=$(verbs4j_jdk_version "$c")
        [ -n "$v" ] || continue
        if [ "$v" -ge 22 ]; then
            echo "$c"
            return 0
        fi
        seen+="  $c (JDK $v)"$'\n'
    done
    {
        echo "verbs4j needs a JDK 22 or newer (it uses the FFM API); none was found."
        [ -n "$seen" ] && printf 'JDKs found, all too old:\n%s' "$seen"
        echo "Install one (for example Temurin 25, or openjdk-25-jdk where your distribution has it)"
        echo "and point JAVA_HOME at it."
    } >&2
    return 1
}
