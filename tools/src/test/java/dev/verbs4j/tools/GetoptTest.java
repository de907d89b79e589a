package dev.verbs4j.tools;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Option parsing as getopt_long(3) does it. */
class GetoptTest {

    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private List<String> parse(String... args) {
        Getopt g = new Getopt("t", args, "d:i:lv", "ib-dev:d", "ib-port:i", "list:l", "verbose:v");
        List<String> seen = new ArrayList<>();
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
        for (int c; (c = g.next(e)) != -1; ) {
            seen.add((char) c + (g.argument() == null ? "" : "=" + g.argument()));
        }
        return seen;
    }

    @Test
    void acceptsEverySpelling() {
        assertThat(parse("-d", "rxe0", "-drxe1", "--ib-dev=rxe2", "--ib-dev", "rxe3", "-vl", "-vi2", "x"))
                .containsExactly("d=rxe0", "d=rxe1", "d=rxe2", "d=rxe3", "v", "l", "v", "i=2");
        assertThat(err.toString(StandardCharsets.UTF_8)).isEmpty();
    }

    @Test
    void reportsErrorsLikeGetopt() {
        assertThat(parse("-x", "--nope", "-d")).containsExactly("?", "?", "?");
        assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo(
                "t: invalid option -- 'x'\nt: unrecognized option '--nope'\nt: option requires an argument -- 'd'\n");
        assertThat(parse("--", "-v")).isEmpty();
    }

    @Test
    void acceptsUnambiguousAbbreviationsLikeGetoptLong() {
        assertThat(parse("--ib-d=rxe0", "--li", "--verb", "--ib-p", "2")).containsExactly("d=rxe0", "l", "v", "i=2");
        assertThat(err.toString(StandardCharsets.UTF_8)).isEmpty();
        // an exact name wins over the longer names it is a prefix of
        Getopt g = new Getopt("t", new String[]{"--qp", "1"}, "q:Q", "qp:q", "qpx:Q");
        assertThat(g.next(new PrintStream(err, true, StandardCharsets.UTF_8))).isEqualTo('q');
    }

    @Test
    void reportsAmbiguousAbbreviationsAndNamesTheOptionFound() {
        assertThat(parse("--ib", "--l=3", "--ib-p")).containsExactly("?", "?", "?");
        assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo(
                "t: option '--ib' is ambiguous; possibilities: '--ib-dev' '--ib-port'\n"
                        + "t: option '--list' doesn't allow an argument\n"
                        + "t: option '--ib-port' requires an argument\n");
    }

    @Test
    void strtolReadsBasesLikeC() {
        assertThat(Getopt.strtol("12")).isEqualTo(12);
        assertThat(Getopt.strtol("0x1f")).isEqualTo(31);
        assertThat(Getopt.strtol("010")).isEqualTo(8);
        assertThat(Getopt.strtol(" -3")).isEqualTo(-3);
        assertThat(Getopt.strtol("7abc")).isEqualTo(7);
        assertThat(Getopt.strtol("abc")).isZero();
        assertThat(Getopt.strtol("99999999999")).isEqualTo(Integer.MAX_VALUE);
    }

    @Test
    void collectsOperandsInOrder() {
        Getopt g = new Getopt("t", new String[]{"host", "-d", "rxe0", "-v", "x", "--", "-l", "y"}, "d:i:lv", "ib-dev:d");
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
        List<String> seen = new ArrayList<>();
        for (int c; (c = g.next(e)) != -1; ) {
            seen.add(String.valueOf((char) c));
        }
        assertThat(seen).containsExactly("d", "v");
        assertThat(g.operands()).containsExactly("host", "x", "-l", "y");
        assertThat(new Getopt("t", new String[]{"-", "-v"}, "v").operands()).isEmpty();
    }
}
