"""The tcptrace ``-l``/``-r`` output parser, on a real tcptrace run and on a fixed excerpt."""
from __future__ import annotations

import shutil
import subprocess
from datetime import datetime
from pathlib import Path

import pytest
from tcptrace_output import parse_long

TRACE = Path("/work/shared/traces/public/zeek_http_206_example_a.pcap")

# An incomplete connection with a reset, NA values and the ambiguous-ACK note (tcptrace 6.6.7).
EXCERPT = """\
1 TCP connection traced:
TCP connection 1:
\thost a:        2001:db8::1:443
\thost b:        2001:db8::2:51000
\tcomplete conn: RESET\t(SYNs: 0)  (FINs: 1)
\tfirst packet:  Thu Jan  1 00:00:01.000000 1970
\tlast packet:   Thu Jan  1 00:01:02.500000 1970
\telapsed time:  0:01:01.500000
\ttotal packets: 7
\tfilename:      x.pcap
   a->b:\t\t\t      b->a:
     total packets:             4           total packets:             3      
     resets sent:               1           resets sent:               0      
     SYN/FIN pkts sent:       0/1           SYN/FIN pkts sent:       0/0      
     ttl stream length:        NA           ttl stream length:        NA      
     throughput:              167 Bps       throughput:               NA      

     RTT samples:               3           RTT samples:              15      
\t  For the following 5 RTT statistics, only ACKs for
\t  multiply-transmitted segments (ambiguous ACKs) were
\t  considered.  Times are taken from the last instance
\t  of a segment.
     ambiguous acks:            1           ambiguous acks:            0      
     RTT min (last):          0.3 ms        RTT min (last):          0.0 ms   
     max # retrans:             2           max # retrans:             0      
"""


def test_excerpt() -> None:
    (conn,) = parse_long(EXCERPT)
    assert (conn["a_addr"], conn["a_port"]) == ("2001:db8::1", 443)
    assert (conn["b_addr"], conn["b_port"]) == ("2001:db8::2", 51000)
    assert (conn["complete_conn"], conn["syns"], conn["fins"]) == ("reset", 0, 1)
    assert conn["first_packet"] == datetime(1970, 1, 1, 0, 0, 1)
    assert conn["elapsed_time"] == pytest.approx(61.5)
    assert conn["total_packets"] == 7 and conn["filename"] == "x.pcap"
    a2b, b2a = conn["a2b"], conn["b2a"]
    assert (a2b["total_packets"], b2a["total_packets"]) == (4, 3)
    assert (a2b["resets_sent"], a2b["syn_pkts_sent"], a2b["fin_pkts_sent"]) == (1, 0, 1)
    assert a2b["ttl_stream_length"] is None and b2a["throughput"] is None
    assert a2b["throughput"] == 167
    assert (a2b["ambiguous_acks"], a2b["rtt_min_last"], a2b["max_retrans"]) == (1, 0.3, 2)
    assert b2a["rtt_samples"] == 15


@pytest.mark.peers
@pytest.mark.skipif(shutil.which("tcptrace") is None, reason="tcptrace is not installed")
@pytest.mark.skipif(not TRACE.exists(), reason=f"{TRACE} is not present")
def test_real_output() -> None:
    out = subprocess.run(
        ["tcptrace", "-n", "-l", "-r", str(TRACE)], check=True, capture_output=True, text=True
    ).stdout
    first, second = parse_long(out)
    assert (first["a_addr"], first["a_port"], first["b_addr"], first["b_port"]) == (
        "10.101.84.70", 10977, "129.174.93.161", 80)
    assert first["host_letters"] == ("a", "b") and second["host_letters"] == ("c", "d")
    assert first["complete_conn"] == "yes" and first["syns"] is None
    assert first["total_packets"] == 44
    assert first["a2b"]["total_packets"] + first["b2a"]["total_packets"] == 44
    assert first["b2a"]["unique_bytes_sent"] == 33067
    assert first["a2b"]["req_1323_ws"] is True and first["a2b"]["req_1323_ts"] is False
    assert first["b2a"]["initial_window_bytes"] == 2920
    assert first["b2a"]["initial_window_pkts"] == 2
    assert first["a2b"]["mss_requested"] == 1460
    s = second["b2a"]
    assert (s["actual_data_pkts"], s["rexmt_data_pkts"], s["rexmt_data_bytes"]) == (376, 18, 24821)
    assert second["a2b"]["sack_pkts_sent"] == 87 and second["a2b"]["max_sack_blks_ack"] == 1
    assert s["dsack_pkts_sent"] == 0
    assert s["rtt_avg"] == pytest.approx(404.8) and s["rtt_samples"] == 148
    assert s["max_retrans"] == 2 and s["max_retr_time"] == pytest.approx(3002.2)
    assert s["data_xmit_time"] == pytest.approx(35.659)
    assert second["elapsed_time"] == pytest.approx(39.421644)
    assert second["last_packet"] > second["first_packet"]
