package dev.verbs4j.perf.tools;

import dev.verbs4j.verbs.ToolRunner;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The perftest tools' option handling, which ends before any device is touched: for wrong and
 * incompatible options each tool prints what perftest 4.5 prints (the same text on the same
 * stream) and exits with its status. The expected texts were taken from Debian's perftest
 * 4.5+0.17 binaries.
 */
class PerftestOptionsTest {

    private static final String DASHES = "-".repeat(87) + "\n";

    /** A refusal by perftest's parser: status 1, {@code message} and the parser's closing line on stderr. */
    private static Object[] parserError(String line, String message) {
        return new Object[]{line, 1, "", message + "\n Parser function exited with Error\n"};
    }

    /** An exit from perftest's dependency checks: status 1, a dashed line on stdout, {@code message} on stderr. */
    private static Object[] dependencyError(String line, String message) {
        return new Object[]{line, 1, DASHES, message + "\n"};
    }

    /** Command line, exit status, stdout, stderr. */
    private static final Object[][] CASES = {
            {"ib_atomic_bw -a", 1, DASHES + "Message size cannot be changed for Atomic tests \n", ""},
            {"ib_atomic_lat -s 64", 1, DASHES + "Message size cannot be changed for Atomic tests \n", ""},
            parserError("ib_write_lat -q 2", " Multiple QPs only available on bw tests"),
            parserError("ib_send_lat -b", " Bidirectional is only available in BW test"),
            parserError("ib_read_bw -I 64", " Inline feature not available on READ/Atomic verbs"),
            parserError("ib_write_bw -n 3", " Iteration num should be between 5 and 100000000"),
            parserError("ib_write_bw -n 100000001", " Iteration num should be between 5 and 100000000"),
            parserError("ib_write_bw -A CMP_AND_SWAP", " You are not running the atomic_lat/bw test!\n To change the atomic action type, you must run one of the atomic tests"),
            {"ib_atomic_lat -A XOR", 1, "", " Invalid Atomic type! please choose from {CMP_AND_SWAP,FETCH_AND_ADD}\n"},
            parserError("ib_write_lat -e", " Events feature not available on WRITE verb"),
            {"ib_send_bw -V", 1, "Version: 6.06\n", ""},
            parserError("ib_send_bw -r 0", "  Rx depth should be between 1 and 16384"),
            parserError("ib_write_bw -r 4", " On RDMA verbs rx depth can be only 1"),
            parserError("ib_send_lat -N", " NoPeak only valid for BW tests"),
            parserError("ib_read_bw -C", " Available only on Latency tests"),
            parserError("ib_send_bw -H", " Available only on Latency tests"),
            parserError("ib_send_bw -p abc", " Port argument abc should be int"),
            parserError("ib_send_lat -u x", " QP Timeout argument x should be uint8_t"),
            parserError("ib_send_lat --output=foo", " Invalid verbosity level output flag. Please use bandwidth, latency, message_rate"),
            dependencyError("ib_send_bw --output=latency", " Output verbosity level for BW can be: bandwidth, message_rate"),
            dependencyError("ib_read_lat --output=bandwidth", " Output verbosity level for LAT can be: latency"),
            parserError("ib_write_bw -S 16", " Only 15 Service levels"),
            parserError("ib_write_bw -x 65", " Gid index should be between 0 and 64"),
            parserError("ib_send_bw -s 0", " Message Size should be between 1 and 2147483647"),
            {"ib_send_bw -T 3", 1, " TOS only valid for rdma_cm based QP and RawEth QP \n", ""},
            parserError("ib_read_lat -o 4 -I 0", " Inline feature not available on READ/Atomic verbs"),
            parserError("ib_send_bw -o 4", " Setting Outstanding reads only available on READ verb"),
            dependencyError("ib_send_lat -l 2", "Post list is supported in BW tests only"),
            dependencyError("ib_write_bw -l 3 -n 10", "Number of iterations must be a multiple of post list size"),
            {"ib_write_bw -l 4 -Q 3 -n 12", 1, DASHES + "Warning: Large message requested and CQ moderation enabled\nWarning: It can lead to inaccurate results\n" + DASHES, "Post list size must be a multiple of CQ moderation\n"},
            parserError("ib_write_bw -t 0", " Tx depth should be between 1 and 15000"),
            parserError("ib_write_lat -D 0", " Duration period must be positive"),
            parserError("ib_write_bw -q 0", " num of Qps should be between 1 and 16384"),
            dependencyError("ib_write_bw -a -D 2", "Duration mode currently doesn't support running on all sizes."),
            parserError("ib_write_bw 198.18.0.1 198.18.0.2", " Invalid Command line. Please check command rerun "),
            parserError("ib_send_lat -i 0", "IB Port can't be less than 1"),
            {"ib_send_lat -c XX", 1, "", " Invalid Connection type. Please choose from {RC,UC,UD,XRC,DC,SRD}\n"},
            dependencyError("ib_send_lat -e -D 2", "Duration mode doesn't work with events."),
            dependencyError("ib_read_bw -D 2 -e -a", "Duration mode doesn't work with events."),
            parserError("ib_write_bw -e", " Events feature not available on WRITE verb"),
            parserError("ib_write_lat -X 1", " Events feature not available on WRITE verb"),
            {"ib_send_bw -X 1", 1, "", " Events must be enabled to select a completion vector\n"},
            parserError("ib_atomic_lat -e -X 2049", " EQN should be between 0 and 2048"),
            parserError("ib_send_bw -D x", " Duration period argument x should be int"),
            parserError("ib_send_bw -D -3", " Duration period must be positive"),
            parserError("ib_read_lat -f -1", " Margin must be non-negative"),
            parserError("ib_read_lat -f y", " Margin argument y should be int"),
            dependencyError("ib_send_bw -D 4 -f 2", "please check that DURATION > 2*MARGIN"),
            dependencyError("ib_send_bw -f 3", "please check that DURATION > 2*MARGIN"),
            dependencyError("ib_send_lat -D 2 -l 2", "Post list is supported in BW tests only"),
            {"ib_read_bw -c UC", 1, "", " UC connection not possible in READ/ATOMIC verbs\n"},
            {"ib_atomic_lat -c UC", 1, "", " UC connection not possible in READ/ATOMIC verbs\n"},
            {"ib_write_bw -c UD", 1, "", " UD connection only possible in SEND verb\n"},
            {"ib_read_lat -c UD", 1, "", " UD connection only possible in SEND verb\n"},
            {"ib_send_lat -c UC -R", 1, DASHES + " UC is not supported in librdmacm\n", ""},
            {"ib_write_bw -c UC -R", 1, DASHES + " UC is not supported in librdmacm\n", ""},
    };

    /** One in-process run of the tool {@code program}. */
    static ToolRunner.Captured run(String program, String... args) {
        PerftestProgram p = PerftestProgram.named(program);
        if (p == null) {
            throw new IllegalArgumentException(program);
        }
        return ToolRunner.runJava(p::run, args);
    }

    @Test
    void wrongAndIncompatibleOptionsAsPerftest() {
        for (Object[] c : CASES) {
            String[] words = ((String) c[0]).split(" ");
            ToolRunner.Captured r = run(words[0], Arrays.copyOfRange(words, 1, words.length));
            String what = c[0] + "\n" + r;
            assertThat(r.status()).as(what).isEqualTo(c[1]);
            assertThat(r.out()).as(what).isEqualTo(c[2]);
            assertThat(r.err()).as(what).isEqualTo(c[3]);
        }
    }

    private static PerfOptions accepted(PerfTool tool, String line, String expectedOut) {
        return accepted(tool, line, expectedOut, "");
    }

    /** The options of {@code line}, which {@code tool} accepts printing {@code expectedOut} and {@code expectedErr}. */
    private static PerfOptions accepted(PerfTool tool, String line, String expectedOut, String expectedErr) {
        PerfOptions.Verb verb = switch (tool) {
            case SEND_LAT, SEND_BW -> PerfOptions.Verb.SEND;
            case WRITE_LAT, WRITE_BW -> PerfOptions.Verb.WRITE;
            case READ_LAT, READ_BW -> PerfOptions.Verb.READ;
            case ATOMIC_LAT, ATOMIC_BW -> PerfOptions.Verb.ATOMIC;
        };
        PerfOptions o = new PerfOptions(tool.c, verb, tool.bw ? PerfOptions.Kind.BW : PerfOptions.Kind.LAT);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Integer status = o.parse(line.isEmpty() ? new String[0] : line.split(" "), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        String what = tool.c + " " + line + "\n" + out + err;
        assertThat(status).as(what).isNull();
        assertThat(out.toString(StandardCharsets.UTF_8)).as(what).isEqualTo(expectedOut);
        assertThat(err.toString(StandardCharsets.UTF_8)).as(what).isEqualTo(expectedErr);
        return o;
    }

    @Test
    void unreliableTransportsAsPerftest() {
        // UC and UD: every receive of the first round is posted up front (rx depth = -n, at most 16000)
        PerfOptions uc = accepted(PerfTool.SEND_BW, "-c UC", "");
        assertThat(uc.isUc()).isTrue();
        assertThat(uc.rxDepth).isEqualTo(1000);
        assertThat(accepted(PerfTool.SEND_LAT, "-c UD -n 20000", "").rxDepth).isEqualTo(16000);
        assertThat(accepted(PerfTool.SEND_BW, "-c UD -r 64", "").rxDepth).isEqualTo(64);
        // no CQ moderation of 1 for large UD messages (perftest leaves it: UD messages are small)
        assertThat(accepted(PerfTool.SEND_BW, "-c UD -s 65536", "").cqMod).isEqualTo(100);
        assertThat(accepted(PerfTool.SEND_BW, "-c UC -s 65536", "").cqMod).isEqualTo(1);
        assertThat(accepted(PerfTool.WRITE_LAT, "-c UC", "").isUc()).isTrue();
        // UD over RDMA CM (-R): accepted, as perftest accepts it (UC with -R is refused above)
        PerfOptions udCm = accepted(PerfTool.SEND_LAT, "-c UD -R", "");
        assertThat(udCm.isUd()).isTrue();
        assertThat(udCm.rdmaCm).isTrue();
        assertThat(accepted(PerfTool.SEND_BW, "-c UD -R -a", "").isUd()).isTrue();
        // UD's inline limit, with perftest's words
        PerfOptions o = accepted(PerfTool.SEND_BW, "-c UD -I 900", DASHES, "Setting inline size to 884 (Max inline size in UD)\n");
        assertThat(o.inlineSize).isEqualTo(884);
    }

    @Test
    void durationModeAsPerftest() {
        // -D: a quarter of the duration is the margin; the depths are not cut to -n; nor does the
        // post list have to divide -n; no peak
        PerfOptions o = accepted(PerfTool.WRITE_BW, "-D 2 -n 10 -l 3", DASHES
                + "Post List requested - CQ moderation will be the size of the post list\n");
        assertThat(o.duration).isEqualTo(2);
        assertThat(o.margin).isZero();
        assertThat(o.txDepth).isEqualTo(128);
        assertThat(o.cqMod).isEqualTo(3);
        assertThat(o.peakOff()).isTrue();
        o = accepted(PerfTool.SEND_LAT, "-D 9 -r 2000 -n 10", "");
        assertThat(o.margin).isEqualTo(2);
        assertThat(o.rxDepth).isEqualTo(2000);
        o = accepted(PerfTool.ATOMIC_BW, "--duration=4 --margin=1", "");
        assertThat(o.duration).isEqualTo(4);
        assertThat(o.margin).isEqualTo(1);
        o = accepted(PerfTool.READ_LAT, "-f 2", "");
        assertThat(o.duration).isZero();
        assertThat(o.margin).isEqualTo(2);
        // in iterations mode the depths are cut as before
        o = accepted(PerfTool.SEND_BW, "-n 10", "");
        assertThat(o.txDepth).isEqualTo(10);
        assertThat(o.rxDepth).isEqualTo(10);
    }

    @Test
    void eventsAsPerftest() {
        // -e keeps the CQ moderation of large messages (perftest forces 1 only when polling)
        PerfOptions o = accepted(PerfTool.SEND_BW, "-e", "");
        assertThat(o.events).isTrue();
        assertThat(o.cqMod).isEqualTo(100);
        assertThat(accepted(PerfTool.SEND_BW, "", "").cqMod).isEqualTo(1);
        // and so the warning about moderated large messages is not printed with -e
        assertThat(accepted(PerfTool.READ_BW, "--events -Q 10", "").cqMod).isEqualTo(10);
        accepted(PerfTool.READ_BW, "-Q 10", DASHES + "Warning: Large message requested and CQ moderation enabled\n"
                + "Warning: It can lead to inaccurate results\n");
        o = accepted(PerfTool.ATOMIC_LAT, "-e -X 3", "");
        assertThat(o.eqNum).isEqualTo(3);
        o = accepted(PerfTool.READ_LAT, "--events --vector=0", "");
        assertThat(o.events).isTrue();
    }

    @Test
    void outJsonAsPerftest() {
        PerfOptions o = accepted(PerfTool.SEND_LAT, "--out_json", "");
        assertThat(o.outJson).isTrue();
        assertThat(o.outJsonFile).isEqualTo("perftest_out.json");
        // the file name alone does not ask for the file
        o = accepted(PerfTool.WRITE_BW, "--out_json_file=/tmp/x.json", "");
        assertThat(o.outJson).isFalse();
        assertThat(o.outJsonFile).isEqualTo("/tmp/x.json");
        o = accepted(PerfTool.READ_BW, "--out_json_file=/tmp/y.json --out_json", "");
        assertThat(o.outJson).isTrue();
        assertThat(o.outJsonFile).isEqualTo("/tmp/y.json");
    }

    @ParameterizedTest
    @EnumSource(PerfTool.class)
    void unknownOptionsPrintTheUsageAndFail(PerfTool tool) {
        String usage = "Usage:\n  " + tool.c + "            start a server and wait for connection\n  " + tool.c
                + " <host>     connect to server at <host>\n\nOptions:\n";
        ToolRunner.Captured r = run(tool.c, "-Y");
        assertThat(r.status()).as(r.toString()).isEqualTo(1);
        assertThat(r.out()).startsWith(usage);
        assertThat(r.err()).isEqualTo(tool.c + ": invalid option -- 'Y'\n Invalid Command or flag.\n"
                + " Please check command line and run again.\n\n Parser function exited with Error\n");
        r = run(tool.c, "--nope");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.err()).startsWith(tool.c + ": unrecognized option '--nope'\n Invalid Command or flag.\n");
        r = run(tool.c, "-h");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.out()).startsWith(usage);
        assertThat(r.err()).isEmpty();
    }
}
