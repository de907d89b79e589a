package dev.verbs4j.tools;

import dev.verbs4j.tools.naaice.NaaiceBench;
import dev.verbs4j.tools.naaice.NaaiceClient;
import dev.verbs4j.tools.naaice.NaaiceLoad;
import dev.verbs4j.tools.naaice.NaaiceServer;
import dev.verbs4j.tools.rdmacm.Mc;
import dev.verbs4j.tools.rdmacm.McKey;
import dev.verbs4j.tools.rdmacm.RPing;
import dev.verbs4j.tools.rdmacm.RdmaClientExample;
import dev.verbs4j.tools.rdmacm.RdmaEchoLoad;
import dev.verbs4j.tools.rdmacm.RdmaServerExample;
import dev.verbs4j.tools.rdmacm.Srq;
import dev.verbs4j.tools.rdmacm.UdAddy;
import dev.verbs4j.tools.verbs.DevInfo;
import dev.verbs4j.tools.verbs.RcPingPong;
import dev.verbs4j.tools.verbs.RdmaRcExample;
import dev.verbs4j.tools.verbs.SrqPingPong;
import dev.verbs4j.tools.verbs.UcPingPong;
import dev.verbs4j.tools.verbs.UdPingPong;
import dev.verbs4j.tools.vipl.ViplBw;
import dev.verbs4j.tools.vipl.ViplPingPong;

import java.util.Map;

/**
 * The command line of the tools of this module: {@code ToolMain TOOL [ARGS...]}, TOOL one of
 * {@link #TOOLS}' names ({@code devinfo}, {@code rping}, ...); {@code bin/verbs4j} puts it first.
 */
public final class ToolMain {

    /** The tools by the names they are run with. */
    public static final Map<String, Cli.Tool> TOOLS = Map.ofEntries(
            Map.entry("devinfo", DevInfo::run), Map.entry("rdma_rc_example", RdmaRcExample::run),
            Map.entry("rc_pingpong", RcPingPong::run), Map.entry("uc_pingpong", UcPingPong::run),
            Map.entry("ud_pingpong", UdPingPong::run), Map.entry("srq_pingpong", SrqPingPong::run),
            Map.entry("udaddy", UdAddy::run), Map.entry("mckey", McKey::run), Map.entry("mc", Mc::run),
            Map.entry("srq", Srq::run), Map.entry("rping", RPing::run),
            Map.entry("rdma_server", RdmaServerExample::run), Map.entry("rdma_client", RdmaClientExample::run),
            Map.entry("rdma-echo-load", RdmaEchoLoad::run),
            Map.entry("naaice-server", NaaiceServer::run), Map.entry("naaice-client", NaaiceClient::run),
            Map.entry("naaice-bench", NaaiceBench::run), Map.entry("naaice-load", NaaiceLoad::run),
            Map.entry("vipl-pingpong", ViplPingPong::run), Map.entry("vipl-bw", ViplBw::run));

    private ToolMain() {
    }

    /** Runs the tool named by the first argument with the others and exits with its status. */
    public static void main(String[] args) {
        Cli.launch(args, TOOLS::get, "usage: ToolMain TOOL [ARGS...]");
    }
}
