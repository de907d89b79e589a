package dev.verbs4j.perf.tools;

import dev.verbs4j.verbs.ToolRunner;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Java perftest tools held against the C tools installed on this host (Debian's perftest
 * 4.5), which parse their command line before they look for a device: the same status, stdout
 * and stderr for the same command line (up to the "no device" messages both print here), and a
 * {@code --help} that lists every option of the C tool's. Skipped where the C tools are not
 * installed.
 */
class PerftestParityHostTest {

    /** Command lines run by both, each with the tool first; both must print and exit the same. */
    private static final String[] SAME = {
        // getopt_long: abbreviations, ambiguities, missing arguments, names in messages
        "ib_send_bw --report_gb", "ib_send_bw --conn=UC", "ib_write_bw --bidir", "ib_send_bw --report",
        "ib_send_lat --report", "ib_write_bw --r", "ib_send_bw -K", "ib_send_bw --mr=3", "ib_read_lat --com_rdma_cm",
        "ib_send_bw --iters", "ib_send_bw --foo=3", "ib_write_lat --use", "ib_send_bw --dont_x",
        // parsing and dependency checks as C
        "ib_send_bw -L 3", "ib_write_lat -L 64 -n 5", "ib_send_bw -m 1000", "ib_send_bw -s 2147483648",
        "ib_write_bw -s 4294967296", "ib_send_bw -s 2047M", "ib_write_bw --tclass=3", "ib_write_bw --tclass=x",
        "ib_read_bw --pkey_index=0", "ib_send_lat --flow_label=-1", "ib_send_lat --dlid=3", "ib_send_lat --dlid=z",
        "ib_write_bw --wait_destroy=1", "ib_write_bw --disable_pcie_relaxed", "ib_write_bw --use_old_post_send",
        "ib_send_bw --retry_count=-1", "ib_send_bw --rate_units=x", "ib_send_bw --rate_limit_type=x",
        "ib_send_bw --rate_limit=0", "ib_send_bw --burst_size=4", "ib_send_bw --typical_pkt_size=70000",
        "ib_send_bw --typical_pkt_size=64", "ib_send_bw --rate_limit=10 --rate_limit_type=PP",
        "ib_send_bw --rate_limit=1 --rate_limit_type=SW -b", "ib_atomic_bw --rate_limit_type=SW",
        "ib_write_bw --rate_limit=1 --rate_units=p", "ib_write_bw --rate_limit=1 -R", "ib_write_lat --use-srq",
        "ib_send_bw --use-srq -q 600 -r 512", "ib_write_bw --recv_post_list=3", "ib_write_lat --recv_post_list=2",
        "ib_send_lat -O", "ib_send_lat --run_infinitely", "ib_send_bw --run_infinitely -b",
        "ib_send_bw --run_infinitely -e", "ib_atomic_bw --odp", "ib_send_bw -c UC --odp", "ib_write_bw -g",
        "ib_send_bw -g -b", "ib_send_bw -g -q 2", "ib_send_bw -g -R",
        "ib_send_bw -g", "ib_send_lat -g -c RC", "ib_send_lat --mcg -M 255:1:0:0:0:2:201:133:0:0:0:0:0:0:0:5", "ib_send_bw -M 1:2", "ib_send_bw -O -R", "ib_send_bw --force-link=XY",
        "ib_send_bw --cpu_util", "ib_send_bw --latency_gap=-2", "ib_write_bw --latency_gap=2",
        "ib_write_bw --report-per-port", "ib_send_bw -K 70000", "ib_send_bw -k x", "ib_send_bw -B 11:22",
        "ib_send_bw --mmap-offset=x", "ib_send_bw --wait_destroy=q",
        "ib_write_bw --rate_limit=7 --rate_limit_type=HW", "ib_send_bw --rate_limit=7", "ib_write_bw --rate_limit=10 --rate_units=M",
        "ib_write_bw --rate_limit=2.5 --rate_limit_type=SW --burst_size=8", "ib_write_bw -z", "ib_read_bw --reversed",
        "ib_send_bw --use-srq", "ib_write_bw --mr_per_qp -q 2", "ib_send_lat --report-counters=counters/port_xmit_data",
        "ib_write_bw --mmap=/nonexistent", "ib_write_bw --recv_post_list=5 -n 10", "ib_send_bw --recv_post_list=4 -n 12",
        "ib_send_bw --inline_recv=x", "ib_send_lat --inline_recv=64", "ib_send_bw --ipv6 -R", "ib_send_bw --dualport",
        "ib_send_bw --hop_limit=3", "ib_send_lat --MGID=255:1:0:0:0:2:201:133:0:0:0:0:0:0:0:5",
        // the hardware-specific options: refused as C refuses them on a device without them
        "ib_send_bw --aes_xts", "ib_write_bw --aes_xts --kek_path=/k", "ib_write_bw --aes_xts --kek_path=/k --data_enc_key_app_path=/a",
        "ib_send_bw --aes_xts -c UD", "ib_send_bw --encrypt_on_tx", "ib_send_bw --sig_before", "ib_read_bw --kek_path=/x",
        "ib_read_bw --credentials_path=/x", "ib_read_bw --data_enc_key_app_path=/x", "ib_write_bw --log_dci_streams=2",
        "ib_write_bw --log_active_dci_streams=1", "ib_send_bw --aes_block_size=x",
    };

    private static Path cTool(String name) {
        Path p = Path.of("/usr/bin", name);
        Assumptions.assumeTrue(Files.isExecutable(p), "C perftest not installed: " + p);
        return p;
    }

    /** The C tool's run: status, stdout, stderr. */
    private static ToolRunner.Captured runC(String name, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(cTool(name).getFileName().toString());
        cmd.addAll(Arrays.asList(args));
        Path out = Files.createTempFile("c-out", ".txt");
        Path err = Files.createTempFile("c-err", ".txt");
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
            pb.environment().put("PATH", "/usr/bin:/bin");
            Process p = pb.start();
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("C " + cmd + " did not end");
            }
            return new ToolRunner.Captured(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    /** The Java usage text less what it adds after perftest's (the verbs4j notes). */
    private static String perftestPart(String javaUsage) {
        int at = javaUsage.indexOf(" verbs4j:\n");
        return at < 0 ? javaUsage : javaUsage.substring(0, at);
    }

    @Test
    void sameStatusAndMessagesAsTheCTools() throws Exception {
        List<String> differences = new ArrayList<>();
        for (String line : SAME) {
            String[] words = line.split(" ");
            String[] args = Arrays.copyOfRange(words, 1, words.length);
            ToolRunner.Captured c = runC(words[0], args);
            ToolRunner.Captured j = PerftestOptionsTest.run(words[0], args);
            String jOut = j.out().contains("Usage:\n") ? perftestPart(j.out()) : j.out();
            if (c.status() != j.status() || !c.out().equals(jOut) || !c.err().equals(j.err())) {
                differences.add(line + "\n  C:    " + c + "\n  Java: " + j);
            }
        }
        assertThat(differences).as(String.join("\n", differences)).isEmpty();
    }

    private static final Pattern OPTION = Pattern.compile("(?<![\\w-])(--[A-Za-z][\\w-]*|-[A-Za-z])(?=[ ,=\\n])");

    private static Set<String> options(String help) {
        Set<String> s = new LinkedHashSet<>();
        Matcher m = OPTION.matcher(help);
        while (m.find()) {
            s.add(m.group(1));
        }
        return s;
    }

    @ParameterizedTest
    @EnumSource(PerfTool.class)
    void helpListsEveryOptionOfTheCTool(PerfTool tool) throws Exception {
        ToolRunner.Captured c = runC(tool.c, "--help");
        ToolRunner.Captured j = PerftestOptionsTest.run(tool.c, "--help");
        assertThat(j.status()).isEqualTo(1);
        // perftest's text word for word, then the notes on what differs and the versions
        assertThat(perftestPart(j.out())).isEqualTo(c.out());
        assertThat(j.out()).contains(Usage.INTEROP);
        Set<String> hardware = Set.of(Usage.HARDWARE_SPECIFIC.split(" "));
        List<String> missing = new ArrayList<>();
        for (String opt : options(c.out())) {
            // perftest's help spells -z's long name --com_rdma_cm; its parser knows --comm_rdma_cm
            String spelled = opt.equals("--com_rdma_cm") ? "--comm_rdma_cm" : opt.equals("--report-histogram")
                    ? "--report-histogrm" : opt;
            if (!j.out().contains(opt)) {
                missing.add(opt + " (not in the Java help)");
            }
            // every letter of perftest's help comes with its long name, which is what is checked
            if (!opt.startsWith("--") || hardware.contains(opt)) {
                continue;
            }
            ToolRunner.Captured r = PerftestOptionsTest.run(tool.c, spelled.startsWith("--") ? spelled + "=0" : spelled);
            ToolRunner.Captured bare = PerftestOptionsTest.run(tool.c, spelled);
            boolean unknown = r.err().contains("unrecognized option") && bare.err().contains("unrecognized option")
                    || r.err().contains("invalid option") || r.err().contains("is not supported by verbs4j")
                    || bare.err().contains("is not supported by verbs4j");
            if (unknown) {
                missing.add(opt + " (neither run nor listed)");
            }
        }
        assertThat(missing).as(tool.c).isEmpty();
    }
}
