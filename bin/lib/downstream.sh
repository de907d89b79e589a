# Sourced by bin/test: builds examples/downstream, a user's project that imports verbs4j-bom, with
# Maven offline against the artifacts `mvn install` just put in the local repository (never the
# reactor), and records the outcome as a JUnit report in $1 (one test, counted with the host tests).
# DownstreamProjectDeviceTest (rdmacm) then runs the jar it builds on Soft-RoCE.
verbs4j_build_downstream() {
    local dir=$1 project="$root/examples/downstream" version rc=0 t0 t1 secs log
    rm -rf "$dir" "$project/target"
    mkdir -p "$dir"
    log="$dir/downstream-build.log"
    # the project's version: the first <version> of the root pom (it has no parent)
    version=$(grep -m1 -o '<version>[^<]*</version>' "$root/pom.xml" | sed 's/<[^>]*>//g')
    echo "== host: examples/downstream against the installed verbs4j $version (mvn -o package)"
    t0=$(date +%s%N)
    mvn -B -ntp -Dstyle.color=never -o -q -f "$project/pom.xml" package "-Dverbs4j.version=$version" >"$log" 2>&1 || rc=$?
    if [ "$rc" -eq 0 ] && [ ! -f "$project/target/verbs4j-downstream.jar" ]; then
        echo "no target/verbs4j-downstream.jar after the build" >>"$log"
        rc=1
    fi
    t1=$(date +%s%N)
    secs=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e9 }')
    {
        echo '<?xml version="1.0" encoding="UTF-8"?>'
        echo "<testsuite name=\"examples.downstream\" tests=\"1\" failures=\"$((rc != 0))\" errors=\"0\" skipped=\"0\" time=\"$secs\">"
        echo "  <testcase classname=\"examples.downstream\" name=\"buildsAgainstTheInstalledArtifacts\" time=\"$secs\">"
        if [ "$rc" -ne 0 ]; then
            echo "    <failure message=\"mvn -o -f examples/downstream/pom.xml package exited $rc\">"
            sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' "$log"
            echo "    </failure>"
        fi
        echo "  </testcase>"
        echo "</testsuite>"
    } >"$dir/TEST-examples.downstream.xml"
    if [ "$rc" -ne 0 ]; then
        echo "bin/test: examples/downstream did not build against the installed artifacts (mvn exit $rc):" >&2
        cat "$log" >&2
    fi
}
