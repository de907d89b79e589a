package dev.verbs4j.perf.tools;

import dev.verbs4j.tools.Cli;

/**
 * The command line of the perftest twins: {@code PerftestMain PROGRAM [OPTIONS] [HOST]}, where
 * PROGRAM is one of {@link PerftestProgram}'s names ({@code ib_send_bw} ...); {@code bin/verbs4j}
 * puts it first.
 */
public final class PerftestMain {

    private PerftestMain() {
    }

    /** Runs the program named by the first argument with the others and exits with its status. */
    public static void main(String[] args) {
        Cli.launch(args, name -> {
            PerftestProgram p = PerftestProgram.named(name);
            return p == null ? null : p::run;
        }, "usage: PerftestMain ib_{send,write,read,atomic}_{lat,bw} [OPTIONS] [HOST]");
    }
}
