package dev.verbs4j.tools.verbs;

import dev.verbs4j.verbs.Device;
import dev.verbs4j.verbs.TestBed;
import dev.verbs4j.verbs.ToolRunner;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The Java devinfo against rdma-core's ibv_devinfo on the same devices, line by line. */
@Tag(TestBed.TAG)
@Tag(TestBed.SHARD_1)
class DevInfoDeviceTest {

    record Run(int status, List<String> out, List<String> err) {
    }

    @Test
    void verboseOutputMatchesIbvDevinfoForEveryDevice() throws Exception {
        List<Device> devices = Device.list();
        assertThat(devices).extracting(Device::name)
                .contains(TestBed.loopback().device(), TestBed.hostA().device(), TestBed.hostB().device());
        for (Device d : devices) {
            Run c = runC("-v", "-d", d.name());
            Run java = runJava("-v", "-d", d.name());
            assertThat(c.status).as("ibv_devinfo -v -d %s", d.name()).isZero();
            assertThat(java.out).as("devinfo -v -d %s", d.name()).containsExactlyElementsOf(c.out);
            assertThat(java.status).isEqualTo(c.status);
            assertThat(java.out).anyMatch(l -> l.startsWith("\t\t\tGID[") && l.endsWith(", RoCE v2"));
        }
    }

    @Test
    void defaultListAndPortOutputMatch() throws Exception {
        for (String[] args : List.of(new String[0], new String[]{"-l"}, new String[]{"--list"},
                new String[]{"-i", "1"}, new String[]{"--ib-dev=" + TestBed.hostA().device(), "--ib-port=1"})) {
            Run c = runC(args);
            Run java = runJava(args);
            assertThat(java.out).as("devinfo %s", String.join(" ", args)).containsExactlyElementsOf(c.out);
            assertThat(java.status).isEqualTo(c.status);
        }
        Run all = runJava();
        assertThat(all.out.stream().filter(l -> l.startsWith("\t\t\tstate:")))
                .isNotEmpty().allMatch(l -> l.equals("\t\t\tstate:\t\t\tPORT_ACTIVE (4)"));
    }

    @Test
    void errorsMatch() throws Exception {
        for (String[] args : List.of(new String[]{"-d", "no_such_dev"}, new String[]{"-i", "0"},
                new String[]{"-i", "7", "-d", TestBed.loopback().device()}, new String[]{"-x"})) {
            Run c = runC(args);
            Run java = runJava(args);
            assertThat(java.status).as("exit status of devinfo %s", String.join(" ", args)).isEqualTo(c.status);
            assertThat(java.out).as("stdout of devinfo %s", String.join(" ", args))
                    .containsExactlyElementsOf(c.out.stream().map(l -> l.replace("ibv_devinfo", "devinfo")).toList());
            assertThat(java.err).as("stderr of devinfo %s", String.join(" ", args))
                    .containsExactlyElementsOf(c.err.stream().map(l -> l.replace("ibv_devinfo", "devinfo")).toList());
        }
    }

    private static Run runJava(String... args) {
        ToolRunner.Captured r = ToolRunner.runJava(DevInfo::run, args);
        return new Run(r.status() & 0xff, lines(r.out()), lines(r.err()));
    }

    private static Run runC(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("ibv_devinfo"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).start();
        byte[] out = p.getInputStream().readAllBytes();
        byte[] err = p.getErrorStream().readAllBytes();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Run(p.exitValue(), lines(new String(out, StandardCharsets.UTF_8)), lines(new String(err, StandardCharsets.UTF_8)));
    }

    private static List<String> lines(String s) {
        return s.isEmpty() ? List.of() : List.of(s.split("\n", -1));
    }
}
