"""The lab: real Linux TCP transfers over an emulated path, captured, with the kernel's truth.

A run (``tcpsack-analyze lab run``, Linux, root) builds a sender and a receiver network
namespace joined through a user-space link emulator in a third namespace, applies delay, a
bottleneck and seeded loss per direction (optionally on two sections of path, before and after a
mid capture point), runs bulk or thin-stream traffic, captures it with
tcpdump, and records what the sender's kernel did (tracepoints via bpftrace) in ``truth.json``
beside the captures. This reproduces the kind of testbed the source papers used (a delay/loss
tunnel, paper 000; netem, thesis 001) on a machine that has neither netem nor a spare host.

Modules, one job each:

- :mod:`~tcpsack_analyze.lab.lossmodels`: seeded loss models (none, random, bursty, Gilbert-Elliott);
- :mod:`~tcpsack_analyze.lab.wire`: the few header fields the emulator decodes;
- :mod:`~tcpsack_analyze.lab.link`: one direction of the link (loss, drop-tail bottleneck, delay);
- :mod:`~tcpsack_analyze.lab.droplog`: the emulator's record of every dropped frame;
- :mod:`~tcpsack_analyze.lab.emulator`: the AF_PACKET bump-in-the-wire process;
- :mod:`~tcpsack_analyze.lab.topology`: namespaces, veths, offloads, sysctls, and their removal;
- :mod:`~tcpsack_analyze.lab.settings`: the sender/receiver TCP settings and their read-back;
- :mod:`~tcpsack_analyze.lab.traffic`: the bulk and thin-stream sender and the receiver;
- :mod:`~tcpsack_analyze.lab.process`: starting, waiting for and stopping the helper processes;
- :mod:`~tcpsack_analyze.lab.capture`: tcpdump;
- :mod:`~tcpsack_analyze.lab.tracing`: the bpftrace program, its events and the clock offset;
- :mod:`~tcpsack_analyze.lab.alignment`: traced retransmissions against the sender capture;
- :mod:`~tcpsack_analyze.lab.assemble`: raw events, drop log and results into the truth records;
- :mod:`~tcpsack_analyze.lab.runner`: one run from configuration to ``truth.json``;
- :mod:`~tcpsack_analyze.lab.crosscheck`: drop log, kernel and captures checked against each other.

The truth's schema and loader are in :mod:`tcpsack_analyze.truth` (``docs/truth-schema.md``).
"""
